#pragma once
// Shared by the simulator's unit tests.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simulator/run.hpp"

namespace sim_test {

using distdl::communicator;
using distdl::request;
using comm_ptr = std::shared_ptr<communicator>;

// Completes one request.
inline void wait_one(const comm_ptr& c, request r) {
    std::vector<request> reqs;
    reqs.push_back(std::move(r));
    c->wait_all(reqs);
}

// Every one of `parts` occurs in `what` (a message).
inline void expect_contains(const std::string& what, const std::vector<std::string>& parts) {
    for (const auto& p : parts) EXPECT_NE(what.find(p), std::string::npos) << "missing \"" << p << "\" in: " << what;
}

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Rank `rank`'s term of a sum: values of very different magnitudes, so that the order of a
// floating-point sum matters (integers: below 1000003).
template <class T>
std::vector<T> contribution(int rank, std::size_t count) {
    std::mt19937_64 gen(static_cast<std::uint64_t>(rank) * 7919 + 11);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-20, 20);
    std::vector<T> v(count);
    for (auto& x : v) {
        if constexpr (std::is_floating_point_v<T>) x = static_cast<T>(std::ldexp(mantissa(gen), exponent(gen)));
        else x = static_cast<T>(gen() % 1000003);
    }
    return v;
}

// ((t0 + t1) + t2) + ... of the first n ranks' contributions, element by element: the
// simulator's fold, computed here independently of it.
template <class T>
std::vector<T> rank_order_sum(int n, std::size_t count) {
    std::vector<T> sum = contribution<T>(0, count);
    for (int r = 1; r < n; ++r) {
        const auto c = contribution<T>(r, count);
        for (std::size_t i = 0; i < count; ++i) sum[i] += c[i];
    }
    return sum;
}

}  // namespace sim_test
