// AllSumReduce (spec 001): every worker of P_x ends with the sum over its team (the workers
// sharing its coordinates outside the reduced axes). Data bit-exact against
// reference/all_sum_reduce (sums of the test data are exact in any order), shapes changing
// between calls, the adjoint (self-adjoint) test, and the refusals.
#include <algorithm>

#include "core/all_sum_reduce.hpp"
#include "core/decomposition.hpp"
#include "reference/all_sum_reduce.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace {

using distdl::all_sum_reduce;
using distdl::shape_t;
using distdl::tensor;
using namespace distdl::testing;

// P_x on `ranks` with `shape`, reducing over `axes`; pieces are {batch, n, 3}, n a balanced
// split of 5 over the teams (uneven, empty for some teams when there are more than 5).
template <class T>
void run_all_sum_case(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& ranks,
                      const shape_t& shape, const std::vector<std::size_t>& axes, std::uint64_t seed) {
    const auto P_x = make_partition(world, ranks, shape);
    all_sum_reduce<T> op(P_x, axes);
    const auto leader = distdl::ref::all_sum_reduce_teams(shape, axes);
    std::vector<std::size_t> leaders = leader;
    std::sort(leaders.begin(), leaders.end());
    leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
    auto piece_shape = [&](std::size_t p, std::size_t batch) {
        const auto team = static_cast<std::size_t>(std::lower_bound(leaders.begin(), leaders.end(), leader[p]) -
                                                   leaders.begin());
        return shape_t{batch, distdl::balanced_size(5, leaders.size(), team), 3};
    };
    const std::size_t n = distdl::volume(shape);
    for (std::size_t batch : {1u, 4u}) {
        std::vector<tensor<T>> x_all;
        for (std::size_t p = 0; p < n; ++p) x_all.push_back(indexed_tensor<T>(piece_shape(p, batch), p + 1));
        const auto x = P_x.active() ? x_all[static_cast<std::size_t>(P_x.rank())] : distdl::zero_volume<T>(batch, true);
        const auto y = op.forward(x);
        const auto dx = op.adjoint(x);
        if (P_x.active()) {
            const auto want = distdl::ref::all_sum_reduce(x_all, shape, axes)[static_cast<std::size_t>(P_x.rank())];
            DCHECK(same_bits(y, want));
            DCHECK(same_bits(dx, want));
            DCHECK(y.size() == 0 || y.data() != x.data());
        } else {
            DCHECK(same_bits(y, x));
        }
    }
    const auto x = P_x.active() ? random_tensor<T>(piece_shape(static_cast<std::size_t>(P_x.rank()), 2),
                                                   seed * 31 + static_cast<std::uint64_t>(world->rank()))
                                : distdl::zero_volume<T>(2, true);
    check_adjoint(world, op, x, seed);
}

void run_all_sum_case_all(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& ranks,
                          const shape_t& shape, const std::vector<std::size_t>& axes) {
    run_all_sum_case<double>(world, ranks, shape, axes, 11);
    run_all_sum_case<float>(world, ranks, shape, axes, 12);
}

}  // namespace

// Spec 001: 2x3x2 over axes 0 and 2: teams {0,1,6,7}, {2,3,8,9}, {4,5,10,11}; then every other
// set of axes, none and all included.
DISTDL_CHECK(all_sum_reduce_spec001_2x3x2, world_size >= 12) {
    const auto leader = distdl::ref::all_sum_reduce_teams({2, 3, 2}, {0, 2});
    const std::vector<std::size_t> expected{0, 0, 2, 2, 4, 4, 0, 0, 2, 2, 4, 4};
    DCHECK_EQ(leader, expected);
    const auto r12 = rank_range(0, 12);
    for (const auto& axes : std::vector<std::vector<std::size_t>>{{0, 2}, {}, {0}, {1}, {2}, {0, 1}, {2, 1}, {0, 1, 2}})
        run_all_sum_case_all(world, r12, {2, 3, 2}, axes);
}

// The whole world as one dimension, and a 2-D grid on part of it with idle workers.
DISTDL_CHECK(all_sum_reduce_world_and_idle_workers, world_size >= 1) {
    const int world_size = world->size();
    const auto w = static_cast<std::size_t>(world_size);
    run_all_sum_case_all(world, rank_range(0, world_size), {w}, {0});
    run_all_sum_case_all(world, rank_range(0, world_size), {w}, {});
    if (world_size >= 5) {
        // Scrambled members, rank 0 idle.
        run_all_sum_case_all(world, {4, 2, 3, 1}, {2, 2}, {1});
        run_all_sum_case_all(world, {4, 2, 3, 1}, {2, 2}, {0, 1});
    }
}

// No axes: a copy, in new storage, without traffic.
DISTDL_CHECK(all_sum_reduce_no_axes_is_a_local_copy, world_size >= 1) {
    const int world_size = world->size();
    const auto P = make_partition(world, rank_range(0, world_size), {static_cast<std::size_t>(world_size), 1});
    all_sum_reduce<double> op(P, {});
    const auto x = indexed_tensor<double>({2, 2}, static_cast<std::size_t>(world->rank()) + 1);
    const auto before = world->traffic().total().messages;
    const auto y = op.forward(x);
    DCHECK_EQ(world->traffic().total().messages, before);
    DCHECK(same_bits(y, x));
    DCHECK(y.data() != x.data());
}

DISTDL_CHECK(all_sum_reduce_bad_axes_are_refused, world_size >= 2) {
    const auto P = make_partition(world, {0, 1}, {1, 2});
    DCHECK_THROWS(all_sum_reduce<double>(P, {2}), distdl::partition_error,
                  "AllSumReduce: axis 2 out of range for P_x shape [1,2]");
    DCHECK_THROWS(all_sum_reduce<float>(P, {1, 1}), distdl::partition_error, "AllSumReduce: axis 1 repeated");
    if (world->rank() == 0) DCHECK_THROWS(all_sum_reduce<float>(P, {1}), distdl::invalid_argument, "element type");
    else DCHECK_THROWS(all_sum_reduce<double>(P, {1}), distdl::invalid_argument, "element type");
}

// Members whose pieces differ in shape are refused by the whole team.
DISTDL_CHECK(all_sum_reduce_shape_mismatch_is_an_error, world_size >= 2) {
    const auto P = make_partition(world, {0, 1}, {2});
    all_sum_reduce<double> op(P, {0});
    if (world->rank() < 2) {
        const tensor<double> x(shape_t{2, world->rank() == 0 ? 3u : 4u});
        DCHECK_THROWS(op.forward(x), distdl::invalid_argument, "world rank 0 holds [2,3] and world rank 1 holds [2,4]");
    }
}
