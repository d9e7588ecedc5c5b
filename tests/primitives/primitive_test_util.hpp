#pragma once
// Generic helpers for the checks of the data-movement primitives (any primitive, any
// transport): partitions from world ranks, tensors whose every element is distinct, bit-exact
// comparison, dot products reduced over the world in rank order, and the adjoint test.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "core/communicator.hpp"
#include "core/module.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "tests/common/checks.hpp"

namespace distdl::testing {

// [begin, end) as world ranks.
inline std::vector<int> rank_range(int begin, int end) {
    std::vector<int> r(static_cast<std::size_t>(end - begin));
    std::iota(r.begin(), r.end(), begin);
    return r;
}

// The Cartesian partition of the listed world ranks (collective: every rank calls it).
inline cartesian_partition make_partition(const std::shared_ptr<communicator>& world, const std::vector<int>& ranks,
                                          const shape_t& shape) {
    return partition::world(world).create_partition_inclusive(ranks).create_cartesian_topology_partition(shape);
}

// Element i of a tensor tagged `tag`: tag * 1000 + i + 1. Distinct across tags while tensors
// hold fewer than 1000 elements, and exact in float, so sums of up to a few hundred of them
// are exact whatever the order.
template <class T>
tensor<T> indexed_tensor(const shape_t& shape, std::size_t tag) {
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(tag * 1000 + i + 1);
    return t;
}

// Uniform values in [-1, 1) from a fixed seed (own conversion: same bits on every platform).
template <class T>
tensor<T> random_tensor(const shape_t& shape, std::uint64_t seed) {
    std::mt19937_64 gen(seed * 0x9E3779B97F4A7C15ULL + 12345);
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i)
        t.data()[i] = static_cast<T>(static_cast<double>(gen() >> 11) * 0x1.0p-52 - 1.0);
    return t;
}

// Same shape and the same bits.
template <class T>
bool same_bits(const tensor<T>& a, const tensor<T>& b) {
    return shape_of(a) == shape_of(b) && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// <a, b> in double; pieces of zero volume contribute nothing whatever their shapes.
template <class T>
double local_dot(const tensor<T>& a, const tensor<T>& b) {
    if (a.size() == 0 && b.size() == 0) return 0.0;
    DCHECK_EQ(shape_of(a), shape_of(b));
    double s = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a.data()[i]) * static_cast<double>(b.data()[i]);
    return s;
}

// Element-wise sums over the world of each rank's partials, added in rank order, so every
// rank gets the same bits on every transport.
inline std::vector<double> world_sums(const std::shared_ptr<communicator>& world, const std::vector<double>& partials) {
    const auto n = static_cast<std::size_t>(world->size());
    std::vector<double> all(partials.size() * n);
    world->all_gather(partials.data(), all.data(), partials.size(), dtype::float64);
    std::vector<double> sums(partials.size(), 0.0);
    for (std::size_t r = 0; r < n; ++r)
        for (std::size_t k = 0; k < partials.size(); ++k) sums[k] += all[r * partials.size() + k];
    return sums;
}

template <class T>
constexpr double adjoint_tolerance() {
    return sizeof(T) == sizeof(double) ? 1e-13 : 1e-5;
}

// Adjoint dot-product test of `op` at x (this worker's input piece): y is random with the
// shape of F x on this worker (seeded by `seed` and the world rank, independent of x).
// Returns |<F x, y> - <x, F* y>| / max(|F x| |y|, |x| |F* y|), the same on every rank.
template <class T>
double adjoint_mismatch(const std::shared_ptr<communicator>& world, module<T>& op, const tensor<T>& x,
                        std::uint64_t seed) {
    const tensor<T> fx = op.forward(x);
    const tensor<T> y = random_tensor<T>(shape_of(fx), seed * 1000003 + static_cast<std::uint64_t>(world->rank()));
    const tensor<T> fty = op.adjoint(y);
    const auto s = world_sums(world, {local_dot(fx, y), local_dot(x, fty), local_dot(fx, fx), local_dot(y, y),
                                      local_dot(x, x), local_dot(fty, fty)});
    const double scale = std::max(std::sqrt(s[2] * s[3]), std::sqrt(s[4] * s[5]));
    const double diff = std::abs(s[0] - s[1]);
    return scale > 0 ? diff / scale : diff;
}

// Runs the adjoint test and fails unless the mismatch is within the tolerance of T.
template <class T>
void check_adjoint(const std::shared_ptr<communicator>& world, module<T>& op, const tensor<T>& x, std::uint64_t seed) {
    const double mismatch = adjoint_mismatch(world, op, x, seed);
    if (!(mismatch <= adjoint_tolerance<T>()))
        DCHECK_FAIL_("adjoint test: mismatch " << mismatch << " > " << adjoint_tolerance<T>());
}

}  // namespace distdl::testing
