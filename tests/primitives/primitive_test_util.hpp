#pragma once
// Generic helpers for the checks of the data-movement primitives (any primitive, any
// transport): partitions from world ranks, tensors whose every element is distinct, bit-exact
// comparison, and the adjoint test with dot products reduced over the world in rank order
// (random data and the dot-product terms are verify/'s, shared with distdl-verify).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/module.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "tests/common/checks.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

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

// The partitions most checks start from: every world rank in order, and world rank 0 alone
// (both 1-dimensional; collective like make_partition).
inline cartesian_partition whole_world_1d(const std::shared_ptr<communicator>& world) {
    return make_partition(world, rank_range(0, world->size()), {static_cast<std::size_t>(world->size())});
}
inline cartesian_partition rank0_1d(const std::shared_ptr<communicator>& world) { return make_partition(world, {0}, {1}); }

// Element i of a tensor tagged `tag`: tag * 1000 + i + 1. Distinct across tags while tensors
// hold fewer than 1000 elements, and exact in float, so sums of up to a few hundred of them
// are exact whatever the order.
template <class T>
tensor<T> indexed_tensor(const shape_t& shape, std::size_t tag) {
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(tag * 1000 + i + 1);
    return t;
}

// Seeded test data: values uniform in [-1, 1), multiples of 2^-23 (exact in float).
using verify::random_tensor;

// Same shape and the same bits.
template <class T>
bool same_bits(const tensor<T>& a, const tensor<T>& b) {
    return shape_of(a) == shape_of(b) && (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Each rank's dot-product terms summed over the world in rank order, so every rank gets the
// same bits on every transport.
inline verify::dot_terms world_total(const std::shared_ptr<communicator>& world, const verify::dot_terms& mine) {
    const double partials[6] = {mine.fx_y, mine.x_fty, mine.fx_sq, mine.y_sq, mine.x_sq, mine.fty_sq};
    std::vector<double> all(6 * static_cast<std::size_t>(world->size()));
    world->all_gather(partials, all.data(), 6, dtype::float64);
    verify::dot_terms total;
    for (std::size_t r = 0; r < static_cast<std::size_t>(world->size()); ++r) {
        const double* p = all.data() + 6 * r;
        total += verify::dot_terms{p[0], p[1], p[2], p[3], p[4], p[5]};
    }
    return total;
}

template <class T>
double adjoint_tolerance() {
    return verify::adjoint_tolerance(dtype_of<T>());
}

// Fails unless |<F x, y> - <x, F* y>| / max(|F x| |y|, |x| |F* y|) over the world, the same on
// every rank, is within the tolerance of T.
template <class T>
void check_adjoint_terms(const std::shared_ptr<communicator>& world, const verify::dot_terms& mine,
                         const std::string& what) {
    const double error = verify::adjoint_error(world_total(world, mine));
    if (!(error <= adjoint_tolerance<T>()))
        DCHECK_FAIL_(what << ": adjoint test relative error " << error << " > " << adjoint_tolerance<T>());
}

// The adjoint test from every rank's pieces x, F x, y and F* y (zero-volume where a rank holds
// nothing; the pairs must agree in shape all the same).
template <class T>
void check_adjoint(const std::shared_ptr<communicator>& world, const tensor<T>& x, const tensor<T>& fx,
                   const tensor<T>& y, const tensor<T>& fty, const std::string& what) {
    if (shape_of(fx) != shape_of(y)) DCHECK_FAIL_(what << ": F x and y differ in shape");
    if (shape_of(x) != shape_of(fty)) DCHECK_FAIL_(what << ": x and F* y differ in shape");
    check_adjoint_terms<T>(world, verify::dot_terms_of(x, fx, y, fty), what);
}

// The adjoint test of `op` at x (this worker's input piece): y is random with the shape of F x
// on this worker (seeded by `seed` and the world rank, independent of x). Pieces of zero volume
// contribute nothing whatever their shapes.
template <class T>
void check_adjoint(const std::shared_ptr<communicator>& world, module<T>& op, const tensor<T>& x, std::uint64_t seed) {
    const tensor<T> fx = op.forward(x);
    const tensor<T> y = random_tensor<T>(shape_of(fx), seed * 1000003 + static_cast<std::uint64_t>(world->rank()));
    const tensor<T> fty = op.adjoint(y);
    if (x.size() != 0 || fty.size() != 0) DCHECK_EQ(shape_of(x), shape_of(fty));
    check_adjoint_terms<T>(world, verify::dot_terms_of(x, fx, y, fty), "adjoint test");
}

}  // namespace distdl::testing
