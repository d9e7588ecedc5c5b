#pragma once
// Helpers of the repartition and halo-exchange checks: partitions from rank lists, tensors
// filled with their global flat index (so every moved element says where it came from),
// seeded random tensors, bit-exact comparison, and the adjoint dot-product test with sums in
// double reduced over the world in rank order (every rank computes the same verdict).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "tests/common/checks.hpp"

namespace distdl::testing::movement {

inline std::vector<int> rank_range(int first, int count) {
    std::vector<int> r(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) r[static_cast<std::size_t>(i)] = first + i;
    return r;
}

// Collective over the world: every rank must call it with the same arguments.
inline cartesian_partition make_partition(const std::shared_ptr<communicator>& world, const std::vector<int>& ranks,
                                          const shape_t& shape) {
    return partition::world(world).create_partition_inclusive(ranks).create_cartesian_topology_partition(shape);
}

// Element i (row-major) holds i: exact in float up to 2^24 elements.
template <class T>
tensor<T> index_tensor(const shape_t& shape) {
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(i);
    return t;
}

// Uniform in [-1, 1), reproducible from the seed.
template <class T>
tensor<T> random_tensor(const shape_t& shape, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(dist(gen));
    return t;
}

template <class T>
bool bit_equal(const tensor<T>& a, const tensor<T>& b) {
    return shape_of(a) == shape_of(b) && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

#define MOVEMENT_CHECK_BITS(actual, expected, what)                                                       \
    do {                                                                                                  \
        if (!::distdl::testing::movement::bit_equal(actual, expected))                                    \
            DCHECK_FAIL_(what << ": got shape " << ::distdl::testing::show(::distdl::shape_of(actual))  \
                                << " " << (actual) << ", expected shape "                                 \
                                << ::distdl::testing::show(::distdl::shape_of(expected)) << " "           \
                                << (expected));                                                           \
    } while (false)

template <class T>
double local_dot(const tensor<T>& a, const tensor<T>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a.data()[i]) * static_cast<double>(b.data()[i]);
    return s;
}

// Sums each of `values` over the world, in rank order (the same on every rank).
inline std::vector<double> world_sums(const std::shared_ptr<communicator>& world, const std::vector<double>& values) {
    const std::size_t n = values.size();
    std::vector<double> all(n * static_cast<std::size_t>(world->size()));
    world->all_gather(values.data(), all.data(), n, dtype::float64);
    std::vector<double> sums(n, 0.0);
    for (int r = 0; r < world->size(); ++r)
        for (std::size_t i = 0; i < n; ++i) sums[i] += all[static_cast<std::size_t>(r) * n + i];
    return sums;
}

// |<F x, y> - <x, F* y>| / max(|F x||y|, |x||F* y|) <= tol, with F x and F* y computed by the
// caller on every rank (zero-volume where a rank holds nothing).
template <class T>
void check_adjoint(const std::shared_ptr<communicator>& world, const tensor<T>& x, const tensor<T>& Fx,
                   const tensor<T>& y, const tensor<T>& Fty, const std::string& what) {
    if (shape_of(Fx) != shape_of(y)) DCHECK_FAIL_(what << ": F x and y differ in shape");
    if (shape_of(x) != shape_of(Fty)) DCHECK_FAIL_(what << ": x and F* y differ in shape");
    const auto s = world_sums(world, {local_dot(Fx, y), local_dot(x, Fty), local_dot(Fx, Fx), local_dot(y, y),
                                      local_dot(x, x), local_dot(Fty, Fty)});
    const double scale = std::max(std::sqrt(s[2] * s[3]), std::sqrt(s[4] * s[5]));
    const double tol = std::is_same<T, float>::value ? 1e-5 : 1e-13;
    if (scale == 0) return;  // nothing moved anywhere (an empty tensor): trivially adjoint
    const double err = std::abs(s[0] - s[1]) / scale;
    if (!(err <= tol)) DCHECK_FAIL_(what << ": adjoint test relative error " << err << " > " << tol);
}

}  // namespace distdl::testing::movement
