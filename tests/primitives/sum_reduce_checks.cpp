// SumReduce (spec 000 examples 1-8, spec 001 setup): data bit-exact against
// reference/sum_reduce (the test data sum exactly in any order), zero-volume outputs, shapes
// changing between calls, adjoint test, and the refusals of examples 5 and 6. Each check runs
// on every world size it accepts; extra ranks stay idle.
#include <cmath>

#include "tests/primitives/broadcast_reduce_driver.hpp"

namespace {

using distdl::shape_t;
using distdl::sum_reduce;
using distdl::testing::make_partition;
using distdl::testing::rank0_1d;
using distdl::testing::pair_case;
using distdl::testing::pair_kind;
using distdl::testing::rank_range;
using distdl::testing::run_pair_case_all;
using distdl::testing::transpose_flags;

constexpr auto kind = pair_kind::sum_reduce;

}  // namespace

// Spec 001: P_x 2x3x2 on workers 0..11 to P_y 1x3x1 on workers 1,2,3.
DISTDL_CHECK(sum_reduce_spec001_2x3x2_to_1x3x1, world_size >= 12) {
    run_pair_case_all(world, kind, {rank_range(0, 12), {2, 3, 2}, {1, 2, 3}, {1, 3, 1}});
}

// Example 1: 4 -> 1 (destination inside P_x at either end, or outside it).
DISTDL_CHECK(sum_reduce_example1_4_to_1, world_size >= 4) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {rank_range(0, 4), {4}, {0}, {1}});
    run_pair_case_all(world, kind, {rank_range(0, 4), {4}, {3}, {1}});
    if (world_size >= 5) run_pair_case_all(world, kind, {rank_range(0, 4), {4}, {4}, {1}});
}

// Example 2: 2x3 -> 1 (P_y padded to 1x1).
DISTDL_CHECK(sum_reduce_example2_2x3_to_1, world_size >= 6) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {rank_range(0, 6), {2, 3}, {4}, {1}});
    if (world_size >= 7) run_pair_case_all(world, kind, {rank_range(1, 7), {2, 3}, {0}, {1}});
}

// Example 3: 3x4 -> 3x1; with transpose_dest a 1x3 P_y works the same way.
DISTDL_CHECK(sum_reduce_example3_3x4_to_3x1, world_size >= 12) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, rank_range(0, 3), {3, 1}});
    run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, {11, 6, 1}, {1, 3}, transpose_flags(false, true)});
    if (world_size >= 15) run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, rank_range(12, 15), {3, 1}});
}

// Example 4: 4x4x3 -> 1x1x3 needs 48 workers; its pairing is checked serially and the same
// pattern runs on 2x2x3.
DISTDL_CHECK(sum_reduce_example4_4x4x3_to_1x1x3, world_size >= 12) {
    const auto dest = distdl::ref::sum_reduce_destinations({4, 4, 3}, {1, 1, 3});
    for (std::size_t p = 0; p < 48; ++p) DCHECK_EQ(dest[p], p % 3);
    run_pair_case_all(world, kind, {rank_range(0, 12), {2, 2, 3}, {0, 1, 2}, {1, 1, 3}});
    run_pair_case_all(world, kind, {rank_range(0, 12), {2, 2, 3}, {3, 7, 11}, {3, 1, 1}, transpose_flags(false, true)});
}

// Example 5: 3x3x2 does not reduce to 1x1x3. 3x3x2 needs 18 workers: the message for those
// shapes is checked on the serial rule, and the layer refuses the same clash on 1x3x2.
DISTDL_CHECK(sum_reduce_example5_rejected, world_size >= 6) {
    DCHECK_THROWS(distdl::ref::sum_reduce_destinations({3, 3, 2}, {1, 1, 3}), distdl::partition_error,
                  "SumReduce: P_x shape [3,3,2] cannot reduce to P_y shape [1,1,3] (dimension 2: 2 vs 3)");
    const auto P_x = make_partition(world, rank_range(0, 6), {1, 3, 2});
    const auto P_y = make_partition(world, {3, 4, 5}, {1, 1, 3});
    DCHECK_THROWS(sum_reduce<double>(P_x, P_y), distdl::partition_error,
                  "SumReduce: P_x shape [1,3,2] cannot reduce to P_y shape [1,1,3] (dimension 2: 2 vs 3)");
    DCHECK_THROWS(sum_reduce<float>(P_x, P_y), distdl::partition_error, "(dimension 2: 2 vs 3)");
    // More dimensions in P_y than in P_x.
    const auto P_z = make_partition(world, {0, 1, 2}, {3});
    DCHECK_THROWS(sum_reduce<double>(P_z, P_y), distdl::partition_error, "P_y has dimension 3 > 1");
}

// Example 6: 1x3 does not reduce to 3x1, but does with either transpose.
DISTDL_CHECK(sum_reduce_example6_1x3_to_3x1, world_size >= 3) {
    const auto P_x = make_partition(world, rank_range(0, 3), {1, 3});
    const auto P_y = make_partition(world, rank_range(0, 3), {3, 1});
    DCHECK_THROWS(sum_reduce<double>(P_x, P_y), distdl::partition_error,
                  "SumReduce: P_x shape [1,3] cannot reduce to P_y shape [3,1] (dimension 0: 1 vs 3)");
    run_pair_case_all(world, kind, {rank_range(0, 3), {1, 3}, rank_range(0, 3), {3, 1}, transpose_flags(true, false)});
    run_pair_case_all(world, kind, {rank_range(0, 3), {1, 3}, {1, 2, 0}, {3, 1}, transpose_flags(false, true)});
}

// Example 7: 3x4 -> 1x3 with transpose_src.
DISTDL_CHECK(sum_reduce_example7_3x4_to_1x3_transpose_src, world_size >= 12) {
    const int world_size = world->size();
    const auto P_x = make_partition(world, rank_range(0, 12), {3, 4});
    const auto P_y = make_partition(world, rank_range(0, 3), {1, 3});
    DCHECK_THROWS(sum_reduce<double>(P_x, P_y), distdl::partition_error, "(dimension 1: 4 vs 3)");
    run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, rank_range(0, 3), {1, 3}, transpose_flags(true, false)});
    if (world_size >= 15) run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, {14, 12, 13}, {1, 3}, transpose_flags(true, false)});
}

// Example 8: 3x4 -> 4x1 with transpose_dest.
DISTDL_CHECK(sum_reduce_example8_3x4_to_4x1_transpose_dest, world_size >= 12) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, {8, 9, 10, 11}, {4, 1}, transpose_flags(false, true)});
    if (world_size >= 16) run_pair_case_all(world, kind, {rank_range(0, 12), {3, 4}, rank_range(12, 16), {4, 1}, transpose_flags(false, true)});
}

// Every worker to one, the destination at either end.
DISTDL_CHECK(sum_reduce_world_to_single, world_size >= 1) {
    const int world_size = world->size();
    const auto w = static_cast<std::size_t>(world_size);
    run_pair_case_all(world, kind, {rank_range(0, world_size), {w}, {0}, {1}});
    run_pair_case_all(world, kind, {rank_range(0, world_size), {1, w}, {world_size - 1}, {1, 1}});
}

// Disjoint partitions, the remaining ranks idle: P_x [m, h] on the first ranks, P_y [h] after.
DISTDL_CHECK(sum_reduce_disjoint_with_idle_workers, world_size >= 2) {
    const int world_size = world->size();
    const int w = world_size;
    const int h = std::max(1, w / 3);
    const int m = (w - h) / h;
    const auto sh = static_cast<std::size_t>(h), sm = static_cast<std::size_t>(m);
    run_pair_case_all(world, kind, {rank_range(0, m * h), {sm, sh}, rank_range(m * h, m * h + h), {sh}});
    run_pair_case_all(world, kind, {rank_range(0, m * h), {sh, sm}, rank_range(m * h, m * h + h), {sh}, transpose_flags(true, false)});
}

// Partly overlapping teams in scrambled order; P_y of lower dimension is padded with ones.
DISTDL_CHECK(sum_reduce_overlapping_and_padding, world_size >= 6) {
    run_pair_case_all(world, kind, {{4, 0, 1, 5}, {2, 2}, {5, 2}, {1, 2}});
    run_pair_case_all(world, kind, {rank_range(0, 6), {2, 3}, {2, 0, 4}, {3}});
    run_pair_case_all(world, kind, {rank_range(0, 6), {3, 2}, {2, 0, 4}, {3}, transpose_flags(true, false)});
    run_pair_case_all(world, kind, {rank_range(0, 6), {1, 3, 2}, {1, 3}, {2, 1}, transpose_flags(false, true)});
}

// Identity: the same partition: a copy, in new storage, without traffic.
DISTDL_CHECK(sum_reduce_identity_is_a_local_copy, world_size >= 1) {
    const int world_size = world->size();
    const auto w = static_cast<std::size_t>(world_size);
    const auto P = make_partition(world, rank_range(0, world_size), {1, w});
    sum_reduce<float> op(P, P, transpose_flags(true, true));
    const auto x = distdl::testing::indexed_tensor<float>({2, 3}, static_cast<std::size_t>(world->rank()) + 1);
    const auto before = world->traffic().total().messages;
    const auto y = op.forward(x);
    const auto dx = op.adjoint(y);
    DCHECK_EQ(world->traffic().total().messages, before);
    DCHECK(distdl::testing::same_bits(y, x));
    DCHECK(distdl::testing::same_bits(dx, x));
    DCHECK(y.data() != x.data());
    run_pair_case_all(world, kind, {rank_range(0, world_size), {w, 1}, rank_range(0, world_size), {w, 1}});
}

// −0 terms sum to −0 (bit-exact), also at a destination outside the sum (which adds −0, the
// additive identity, not +0), small (fused with the status) and large.
DISTDL_CHECK(sum_reduce_negative_zeros_keep_their_sign, world_size >= 2) {
    const int world_size = world->size();
    const auto P_x = make_partition(world, rank_range(0, world_size - 1), {static_cast<std::size_t>(world_size - 1)});
    for (const int destination : {world_size - 1, 0}) {
        sum_reduce<double> op(P_x, make_partition(world, {destination}, {1}));
        for (const std::size_t count : {4u, 20000u}) {  // 32 bytes and 160 KB (beyond the fused limit)
            const auto x = P_x.active() ? distdl::tensor<double>(shape_t{count}, -0.0)
                                        : distdl::zero_volume<double>(0, false);
            const auto y = op.forward(x);
            if (world->rank() != destination) continue;
            DCHECK_EQ(distdl::shape_of(y), shape_t{count});
            std::size_t positive = 0;
            for (std::size_t i = 0; i < y.size(); ++i) positive += std::signbit(y.data()[i]) ? 0 : 1;
            DCHECK_EQ(positive, std::size_t{0});
        }
    }
}

// Contributors that disagree on the shape are refused by every member of their team.
DISTDL_CHECK(sum_reduce_shape_mismatch_is_an_error, world_size >= 2) {
    const int world_size = world->size();
    const auto P_x = make_partition(world, {0, 1}, {2});
    const auto P_y = make_partition(world, {world_size - 1}, {1});
    sum_reduce<double> op(P_x, P_y);
    const auto x = distdl::zero_volume<double>(0, false);
    if (world->rank() == 0) DCHECK_THROWS(op.forward(distdl::tensor<double>(shape_t{2, 3})), distdl::invalid_argument, "one shape");
    else if (world->rank() == 1) DCHECK_THROWS(op.forward(distdl::tensor<double>(shape_t{2, 4})), distdl::invalid_argument, "[2,3]");
    else if (world->rank() == world_size - 1) DCHECK_THROWS(op.forward(x), distdl::invalid_argument, "[2,4]");
    else DCHECK_EQ(distdl::shape_of(op.forward(x)), shape_t{0});
}

// One odd contributor among many is the one named, against the lowest-ranked contributor,
// also after calls that agreed (fast path); extents whose sums would wrap 64 bits are told
// apart too.
DISTDL_CHECK(sum_reduce_names_the_odd_shape, world_size >= 3) {
    const int n = world->size();
    const auto P_x = make_partition(world, rank_range(0, n), {static_cast<std::size_t>(n)});
    sum_reduce<double> op(P_x, rank0_1d(world));
    const int odd = n / 2;
    (void)op.forward(distdl::tensor<double>(shape_t{4}, 1.0));
    DCHECK_THROWS(op.forward(distdl::tensor<double>(shape_t{world->rank() == odd ? 5u : 4u}, 1.0)),
                  distdl::invalid_argument,
                  "SumReduce: tensors summed together must have one shape, but world rank 0 holds [4] and world rank " +
                      std::to_string(odd) + " holds [5]");
    // Zero-volume pieces: from 4 workers on, extent 2^62 times the contributors wraps 64 bits.
    const std::size_t extent = std::size_t(1) << (world->rank() == 0 ? 61 : 62);
    sum_reduce<double> wrap(P_x, rank0_1d(world));
    DCHECK_THROWS(wrap.forward(distdl::tensor<double>(shape_t{0, extent})), distdl::invalid_argument,
                  "SumReduce: tensors summed together must have one shape, but world rank 0 holds "
                  "[0,2305843009213693952] and world rank 1 holds [0,4611686018427387904]");
}

DISTDL_CHECK(sum_reduce_dtype_mismatch_is_an_error, world_size >= 2) {
    const int world_size = world->size();
    const auto P_x = make_partition(world, rank_range(0, world_size), {static_cast<std::size_t>(world_size)});
    const auto P_y = rank0_1d(world);
    if (world->rank() == world_size - 1) DCHECK_THROWS(sum_reduce<float>(P_x, P_y), distdl::invalid_argument, "element type");
    else DCHECK_THROWS(sum_reduce<double>(P_x, P_y), distdl::invalid_argument, "element type");
}
