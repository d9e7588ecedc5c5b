// Broadcast (spec 000 rules mirrored, spec 001 setup, DESIGN §3): data bit-exact against
// reference/broadcast, zero-volume outputs, shapes changing between calls, adjoint test, and
// the refusals. Each check runs on every world size it accepts; extra ranks stay idle.
#include "tests/primitives/broadcast_reduce_driver.hpp"

namespace {

using distdl::broadcast;
using distdl::broadcast_options;
using distdl::shape_t;
using distdl::testing::make_partition;
using distdl::testing::rank0_1d;
using distdl::testing::mirrored;
using distdl::testing::pair_case;
using distdl::testing::pair_kind;
using distdl::testing::rank_range;
using distdl::testing::run_pair_case_all;
using distdl::testing::transpose_flags;

constexpr auto kind = pair_kind::broadcast;

}  // namespace

// Spec 001: P_x 1x3x1 on workers 1,2,3 to P_y 2x3x2 on workers 0..11 (worker 1 and 2 copy to
// themselves, worker 3 sends to one team and receives in another).
DISTDL_CHECK(broadcast_spec001_1x3x1_to_2x3x2, world_size >= 12) {
    run_pair_case_all(world, kind, {{1, 2, 3}, {1, 3, 1}, rank_range(0, 12), {2, 3, 2}});
}

// Mirrors of spec 000 examples 1-4, 7, 8 (the broadcast that is each reduction's adjoint).
DISTDL_CHECK(broadcast_example1_1_to_4, world_size >= 4) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {{0}, {1}, rank_range(0, 4), {4}});
    run_pair_case_all(world, kind, {{2}, {1}, rank_range(0, 4), {4}});
    if (world_size >= 5) run_pair_case_all(world, kind, {{0}, {1}, rank_range(1, 5), {4}});
}

DISTDL_CHECK(broadcast_example2_1_to_2x3, world_size >= 6) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {{5}, {1}, rank_range(0, 6), {2, 3}});
    if (world_size >= 7) run_pair_case_all(world, kind, {{6}, {1}, rank_range(0, 6), {2, 3}});
}

DISTDL_CHECK(broadcast_example3_3x1_to_3x4, world_size >= 12) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {rank_range(0, 3), {3, 1}, rank_range(0, 12), {3, 4}});
    run_pair_case_all(world, kind, {rank_range(0, 3), {1, 3}, rank_range(0, 12), {3, 4}, transpose_flags(true, false)});
    if (world_size >= 15) run_pair_case_all(world, kind, {rank_range(12, 15), {3, 1}, rank_range(0, 12), {3, 4}});
}

// Example 4 (4x4x3 <- 1x1x3) needs 48 workers; the same pattern on 2x2x3.
DISTDL_CHECK(broadcast_example4_1x1x3_to_2x2x3, world_size >= 12) {
    run_pair_case_all(world, kind, {{9, 10, 11}, {1, 1, 3}, rank_range(0, 12), {2, 2, 3}});
    run_pair_case_all(world, kind, {{3, 7, 11}, {3, 1, 1}, rank_range(0, 12), {2, 2, 3}, transpose_flags(true, false)});
}

DISTDL_CHECK(broadcast_example7_mirror_1x3_to_3x4_transpose_dest, world_size >= 12) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {{4, 5, 6}, {1, 3}, rank_range(0, 12), {3, 4}, transpose_flags(false, true)});
    if (world_size >= 15) run_pair_case_all(world, kind, {{12, 13, 14}, {1, 3}, rank_range(0, 12), {3, 4}, transpose_flags(false, true)});
}

DISTDL_CHECK(broadcast_example8_mirror_4x1_to_3x4_transpose_src, world_size >= 12) {
    run_pair_case_all(world, kind, {{0, 4, 8, 11}, {4, 1}, rank_range(0, 12), {3, 4}, transpose_flags(true, false)});
}

// Mirror of example 6: 3x1 does not broadcast to 1x3, unless one side is transposed.
DISTDL_CHECK(broadcast_example6_mirror_3x1_to_1x3, world_size >= 3) {
    const auto P_x = make_partition(world, rank_range(0, 3), {3, 1});
    const auto P_y = make_partition(world, rank_range(0, 3), {1, 3});
    DCHECK_THROWS(broadcast<double>(P_x, P_y), distdl::partition_error,
                  "Broadcast: P_x shape [3,1] cannot broadcast to P_y shape [1,3] (dimension 0: 3 vs 1)");
    DCHECK_THROWS(broadcast<float>(P_x, P_y), distdl::invalid_argument, "dimension 0: 3 vs 1");
    run_pair_case_all(world, kind, {rank_range(0, 3), {3, 1}, rank_range(0, 3), {1, 3}, transpose_flags(true, false)});
    run_pair_case_all(world, kind, {rank_range(0, 3), {3, 1}, {2, 0, 1}, {1, 3}, transpose_flags(false, true)});
}

// Mirror of example 5 (3x3x2 needs 18 workers): 1x1x3 does not broadcast to 1x3x2.
DISTDL_CHECK(broadcast_example5_mirror_rejected, world_size >= 6) {
    const auto P_x = make_partition(world, rank_range(0, 3), {1, 1, 3});
    const auto P_y = make_partition(world, rank_range(0, 6), {1, 3, 2});
    DCHECK_THROWS(broadcast<double>(P_x, P_y), distdl::partition_error,
                  "Broadcast: P_x shape [1,1,3] cannot broadcast to P_y shape [1,3,2] (dimension 2: 3 vs 2)");
    // More dimensions in P_x than in P_y.
    const auto P_z = make_partition(world, rank_range(0, 3), {3});
    DCHECK_THROWS(broadcast<double>(P_x, P_z), distdl::partition_error, "P_x shape [1,1,3]");
}

// Single source to every worker, from either end of the world.
DISTDL_CHECK(broadcast_single_source_to_world, world_size >= 1) {
    const int world_size = world->size();
    const int w = world_size;
    run_pair_case_all(world, kind, {{0}, {1}, rank_range(0, w), {static_cast<std::size_t>(w)}});
    run_pair_case_all(world, kind, {{w - 1}, {1, 1}, rank_range(0, w), {1, static_cast<std::size_t>(w)}});
}

// Disjoint partitions, the remaining ranks idle: P_x [h] on the first h ranks, P_y [m, h] next.
DISTDL_CHECK(broadcast_disjoint_with_idle_workers, world_size >= 2) {
    const int world_size = world->size();
    const int w = world_size;
    const int h = std::max(1, w / 3);
    const int m = (w - h) / h;
    const auto sh = static_cast<std::size_t>(h), sm = static_cast<std::size_t>(m);
    run_pair_case_all(world, kind, {rank_range(0, h), {sh}, rank_range(h, h + m * h), {sm, sh}});
    // Transposed destination: P_y [h, m] read as [m, h].
    run_pair_case_all(world, kind, {rank_range(0, h), {sh}, rank_range(h, h + m * h), {sh, sm}, transpose_flags(false, true)});
}

// Partly overlapping teams in scrambled order, idle ranks in between.
DISTDL_CHECK(broadcast_overlapping_scrambled, world_size >= 6) {
    run_pair_case_all(world, kind, {{5, 2}, {1, 2}, {4, 0, 1, 5}, {2, 2}});
    run_pair_case_all(world, kind, {{3, 1}, {2}, {0, 3, 1, 2, 5, 4}, {3, 2}});
}

// P_x of lower dimension is padded on the left with ones; transposes act before padding.
DISTDL_CHECK(broadcast_padding, world_size >= 6) {
    const int world_size = world->size();
    run_pair_case_all(world, kind, {{0, 1, 2}, {3}, rank_range(0, 6), {2, 3}});
    run_pair_case_all(world, kind, {{0, 1, 2}, {3}, rank_range(0, 6), {3, 2}, transpose_flags(false, true)});
    run_pair_case_all(world, kind, {{1, 3}, {2, 1}, rank_range(0, 6), {1, 3, 2}, transpose_flags(true, false)});
    if (world_size >= 9) run_pair_case_all(world, kind, {{6, 7, 8}, {3}, rank_range(0, 6), {2, 3}});
}

// DESIGN §3: [2,2,1] -> [3,2,2] with transpose_src: worker (a,b,0) feeds (*,a,b).
DISTDL_CHECK(broadcast_design_transpose_example, world_size >= 12) {
    const auto sources = distdl::ref::broadcast_sources({2, 2, 1}, {3, 2, 2}, true, false);
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t a = 0; a < 2; ++a)
            for (std::size_t b = 0; b < 2; ++b) DCHECK_EQ(sources[i * 4 + a * 2 + b], a * 2 + b);
    run_pair_case_all(world, kind, {{8, 9, 10, 11}, {2, 2, 1}, rank_range(0, 12), {3, 2, 2}, transpose_flags(true, false)});
    run_pair_case_all(world, kind, {rank_range(0, 6), {2, 3}, rank_range(0, 12), {2, 3, 2}, transpose_flags(true, false)});
    run_pair_case_all(world, kind, {rank_range(6, 12), {2, 3}, rank_range(0, 12), {2, 3, 2}, transpose_flags(true, true)});
}

// Identity: the same partition (flags agreeing): a copy, in new storage, without traffic.
DISTDL_CHECK(broadcast_identity_is_a_local_copy, world_size >= 1) {
    const int world_size = world->size();
    const auto w = static_cast<std::size_t>(world_size);
    const auto P = make_partition(world, rank_range(0, world_size), {w});
    const shape_t grid = w % 2 == 0 ? shape_t{2, w / 2} : shape_t{1, w};
    const auto G = make_partition(world, rank_range(0, world_size), grid);
    const std::vector<std::pair<distdl::cartesian_partition, broadcast_options>> setups{{P, transpose_flags(false, false)},
                                                                                        {G, transpose_flags(true, true)}};
    for (const auto& [part, opts] : setups) {
        broadcast<double> op(part, part, opts);
        const auto x = distdl::testing::indexed_tensor<double>({3, 4}, static_cast<std::size_t>(world->rank()) + 1);
        const auto before = world->traffic().total().messages;
        const auto y = op.forward(x);
        const auto dx = op.adjoint(y);
        DCHECK_EQ(world->traffic().total().messages, before);
        DCHECK(distdl::testing::same_bits(y, x));
        DCHECK(distdl::testing::same_bits(dx, x));
        DCHECK(y.data() != x.data());
        DCHECK(dx.data() != y.data());
    }
    run_pair_case_all(world, kind, {rank_range(0, world_size), {w}, rank_range(0, world_size), {w}});
}

// Shapes differ from call to call (batch and features), receivers learn them each time.
DISTDL_CHECK(broadcast_shape_changes_between_calls, world_size >= 2) {
    const int world_size = world->size();
    const auto P_x = make_partition(world, {world_size - 1}, {1});
    const auto P_y = make_partition(world, rank_range(0, world_size), {static_cast<std::size_t>(world_size)});
    broadcast<float> op(P_x, P_y);
    for (const shape_t& s : {shape_t{1, 5}, shape_t{4, 2, 3}, shape_t{0, 3}, shape_t{6}}) {
        const auto x = P_x.active() ? distdl::testing::indexed_tensor<float>(s, 1) : distdl::zero_volume<float>(0, true);
        const auto y = op.forward(x);
        DCHECK(distdl::testing::same_bits(y, distdl::testing::indexed_tensor<float>(s, 1)));
    }
}

// Workers that construct the layer with different element types all get a clean error.
DISTDL_CHECK(broadcast_dtype_mismatch_is_an_error, world_size >= 2) {
    const int world_size = world->size();
    const auto P_x = rank0_1d(world);
    const auto P_y = make_partition(world, rank_range(0, world_size), {static_cast<std::size_t>(world_size)});
    if (world->rank() == 1) DCHECK_THROWS(broadcast<float>(P_x, P_y), distdl::invalid_argument, "element type");
    else DCHECK_THROWS(broadcast<double>(P_x, P_y), distdl::invalid_argument, "float32 on world ranks [1]");
}

// Partitions made per team (each row of a 2 x 2 grid, and its first worker) name other workers
// on each row: every row broadcasts within itself, side by side.
DISTDL_CHECK(broadcast_per_team_partitions, world_size == 4) {
    const auto grid = distdl::partition::world(world).create_cartesian_topology_partition({2, 2});
    const auto row = grid.create_cartesian_subtopology_partition({false, true});
    const auto first = row.create_partition_inclusive({0}).create_cartesian_topology_partition({1});
    broadcast<double> b(first, row);
    const double source = double(world->rank() / 2 * 2);  // the world rank of my row's first worker
    const distdl::tensor<double> x =
        first.active() ? distdl::tensor<double>(shape_t{3}, source) : distdl::zero_volume<double>();
    const distdl::tensor<double> y = b.forward(x);
    DCHECK_EQ(distdl::shape_of(y), (shape_t{3}));
    for (double v : y) DCHECK_EQ(v, source);
}
