// Partition API (spec 001) on any transport: teams, unions, grids, equality, data sharing.
#include <algorithm>
#include <numeric>

#include "core/partition.hpp"
#include "tests/common/checks.hpp"

using namespace distdl;

namespace {

std::vector<int> range(int a, int b) {
    std::vector<int> r(static_cast<std::size_t>(b - a));
    std::iota(r.begin(), r.end(), a);
    return r;
}

}  // namespace

DISTDL_CHECK(world_partition_basics, true) {
    const auto P = partition::world(world);
    DCHECK_EQ(P.size(), world->size());
    DCHECK_EQ(P.rank(), world->rank());
    DCHECK(P.active());
    DCHECK_EQ(P.shape(), shape_t{static_cast<std::size_t>(world->size())});
    DCHECK_EQ(P.index(), shape_t{static_cast<std::size_t>(world->rank())});
    DCHECK(P == partition::world(world));
}

DISTDL_CHECK(inclusive_subpartition_in_given_order, world_size >= 2) {
    const auto P = partition::world(world);
    const int n = P.size();
    // Every other worker, in reverse order.
    std::vector<int> chosen;
    for (int r = n - 1; r >= 0; r -= 2) chosen.push_back(r);
    const auto sub = P.create_partition_inclusive(chosen);
    DCHECK_EQ(sub.members(), chosen);
    DCHECK_EQ(sub.size(), static_cast<int>(chosen.size()));
    DCHECK_EQ(sub.shape(), shape_t{chosen.size()});
    const auto it = std::find(chosen.begin(), chosen.end(), world->rank());
    if (it == chosen.end()) {
        DCHECK(!sub.active());
        DCHECK_EQ(sub.rank(), -1);
        DCHECK(sub.comm() == nullptr);
    } else {
        DCHECK(sub.active());
        DCHECK_EQ(sub.rank(), static_cast<int>(it - chosen.begin()));
        // The team communicates: its members sum their world ranks.
        const int total = sub.comm()->all_reduce_sum(world->rank());
        DCHECK_EQ(total, std::accumulate(chosen.begin(), chosen.end(), 0));
    }
    // A sub-partition of a sub-partition names workers by their rank in the parent.
    const auto subsub = sub.create_partition_inclusive({0});
    DCHECK_EQ(subsub.members(), std::vector<int>{chosen.front()});
    DCHECK_EQ(subsub.active(), world->rank() == chosen.front());
}

DISTDL_CHECK(inclusive_subpartition_rejects_bad_ranks, true) {
    const auto P = partition::world(world);
    const int n = P.size();
    DCHECK_THROWS(P.create_partition_inclusive({0, n}), partition_error, "out of range");
    DCHECK_THROWS(P.create_partition_inclusive({-1}), partition_error, "out of range");
    DCHECK_THROWS(P.create_partition_inclusive({0, 0}), partition_error, "repeated");
}

DISTDL_CHECK(union_puts_callers_workers_first_without_repeats, world_size >= 3) {
    const auto P = partition::world(world);
    const int n = P.size();
    const auto a = P.create_partition_inclusive({n - 1, 0});
    const auto b = P.create_partition_inclusive(range(0, n - 1));
    const auto u = a.create_partition_union(b);
    std::vector<int> expected{n - 1, 0};
    for (int r = 1; r < n - 1; ++r) expected.push_back(r);
    DCHECK_EQ(u.members(), expected);
    DCHECK(u.active());
    DCHECK_EQ(u.rank(), static_cast<int>(std::find(expected.begin(), expected.end(), world->rank()) - expected.begin()));
    const auto again = b.create_partition_union(a);
    DCHECK_EQ(again.members(), range(0, n));
    DCHECK(again != u);  // same team, different order
}

DISTDL_CHECK(union_across_worlds_is_refused, true) {
    // A second world over the same ranks: partitions of different worlds never mix.
    const auto other_world = partition::world(world->create_sub(range(0, world->size())));
    const auto P = partition::world(world);
    DCHECK(P != other_world);
    DCHECK_THROWS(P.create_partition_union(other_world), partition_error, "different worlds");
}

DISTDL_CHECK(cartesian_topology_indices_and_neighbours, world_size == 12) {
    const auto P = partition::world(world).create_cartesian_topology_partition({2, 3, 2});
    DCHECK_EQ(P.shape(), (shape_t{2, 3, 2}));
    DCHECK_EQ(P.dim(), 3u);
    DCHECK_EQ(P.cartesian_index(7), (shape_t{1, 0, 1}));
    DCHECK_EQ(P.rank_of({1, 2, 0}), 10);
    DCHECK_EQ(P.index(), P.cartesian_index(world->rank()));
    const auto nb = P.neighbor_ranks(8);  // index (1,1,0)
    DCHECK_EQ(nb[0], (std::pair<int, int>{2, -1}));
    DCHECK_EQ(nb[1], (std::pair<int, int>{6, 10}));
    DCHECK_EQ(nb[2], (std::pair<int, int>{-1, 9}));
    DCHECK_THROWS(P.cartesian_index(12), partition_error, "out of range");
}

DISTDL_CHECK(cartesian_shape_must_hold_every_worker, true) {
    const auto P = partition::world(world);
    const auto n = static_cast<std::size_t>(P.size());
    DCHECK_THROWS(P.create_cartesian_topology_partition({n + 1}), partition_error, "holds");
    DCHECK_THROWS(P.create_cartesian_topology_partition({n, 2}), partition_error, "holds");
    DCHECK_THROWS(P.create_cartesian_topology_partition({}), partition_error, "empty");
    // No grid without workers (the primitives on it would have nobody to send or receive).
    const auto none = P.create_partition_inclusive({});
    DCHECK_THROWS(none.create_cartesian_topology_partition({0}), partition_error,
                  "create_cartesian_topology_partition: shape [0] has extent 0 in dimension 0; every dimension needs "
                  "at least 1 worker");
    DCHECK_THROWS(none.create_cartesian_topology_partition({2, 0}), partition_error, "extent 0 in dimension 1");
    const auto grid = P.create_cartesian_topology_partition({1, n, 1});
    DCHECK_EQ(grid.index(), (shape_t{0, static_cast<std::size_t>(world->rank()), 0}));
}

DISTDL_CHECK(inactive_partition_knows_its_shape, world_size >= 2) {
    const auto P = partition::world(world).create_partition_inclusive({1}).create_cartesian_topology_partition({1, 1});
    DCHECK_EQ(P.shape(), (shape_t{1, 1}));
    DCHECK_EQ(P.active(), world->rank() == 1);
    DCHECK_EQ(P.index(), (world->rank() == 1 ? shape_t{0, 0} : shape_t{}));
    if (!P.active()) DCHECK_THROWS(P.allgather_data(1), partition_error, "not active");
}

namespace {

// Expected teams of the spec 001 tables (root first), and which team each world rank
// sends in and receives in (-1: none).
const std::vector<std::vector<int>> spec_teams{{1, 0, 6, 7}, {2, 3, 8, 9}, {3, 4, 5, 10, 11}};

void check_roles(const team_pair& roles, int expected_send, int expected_recv) {
    if (expected_send < 0) {
        DCHECK(!roles.send.active());
    } else {
        DCHECK(roles.send.active());
        DCHECK_EQ(roles.send.members(), spec_teams[static_cast<std::size_t>(expected_send)]);
    }
    if (expected_recv < 0) {
        DCHECK(!roles.recv.active());
    } else {
        DCHECK(roles.recv.active());
        DCHECK_EQ(roles.recv.members(), spec_teams[static_cast<std::size_t>(expected_recv)]);
    }
}

}  // namespace

DISTDL_CHECK(spec_broadcast_1x3x1_to_2x3x2_tables, world_size >= 12) {
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive({1, 2, 3}).create_cartesian_topology_partition({1, 3, 1});
    const auto P_y = W.create_partition_inclusive(range(0, 12)).create_cartesian_topology_partition({2, 3, 2});
    const auto roles = P_x.create_broadcast_partition_to(P_y);
    // Spec 001 table: P_send / P_recv for workers 0..11.
    const int send[12] = {-1, 0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1};
    const int recv[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
    const int me = world->rank();
    check_roles(roles, me < 12 ? send[me] : -1, me < 12 ? recv[me] : -1);
    // The teams move data: every receiver gets its root's world rank.
    int mine = me, received = -1;
    auto do_send = [&] {
        if (roles.send.active()) roles.send.comm()->broadcast(roles.recv == roles.send ? &received : &mine, 1, 0);
    };
    auto do_recv = [&] {
        if (roles.recv.active() && roles.recv != roles.send) roles.recv.comm()->broadcast(&received, 1, 0);
    };
    if (roles.send == roles.recv) received = mine;
    if (roles.send_first) do_send(), do_recv();
    else do_recv(), do_send();
    if (roles.recv.active()) DCHECK_EQ(received, roles.recv.members().front());
}

DISTDL_CHECK(spec_reduction_2x3x2_to_1x3x1_tables, world_size >= 12) {
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive(range(0, 12)).create_cartesian_topology_partition({2, 3, 2});
    const auto P_y = W.create_partition_inclusive({1, 2, 3}).create_cartesian_topology_partition({1, 3, 1});
    const auto roles = P_x.create_reduction_partition_to(P_y);
    const int send[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
    const int recv[12] = {-1, 0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1};
    const int me = world->rank();
    check_roles(roles, me < 12 ? send[me] : -1, me < 12 ? recv[me] : -1);
}

DISTDL_CHECK(spec_allreduction_2x3x2_over_dims_0_and_2, world_size >= 12) {
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive(range(0, 12)).create_cartesian_topology_partition({2, 3, 2});
    const auto team = P_x.create_allreduction_partition({0, 2});
    const std::vector<std::vector<int>> expected{{0, 1, 6, 7}, {2, 3, 8, 9}, {4, 5, 10, 11}};
    if (world->rank() >= 12) {
        DCHECK(!team.active());
        return;
    }
    DCHECK_EQ(team.members(), expected[P_x.index()[1]]);
    DCHECK_EQ(team.shape(), shape_t{4});
    // No axes: every worker alone; all axes: the whole partition.
    DCHECK_EQ(P_x.create_allreduction_partition({}).members(), std::vector<int>{world->rank()});
    DCHECK_EQ(P_x.create_allreduction_partition({0, 1, 2}).members(), range(0, 12));
    DCHECK_THROWS(P_x.create_allreduction_partition({3}), partition_error, "out of range");
    DCHECK_THROWS(P_x.create_allreduction_partition({1, 1}), partition_error, "repeated");
}

DISTDL_CHECK(subtopology_keeps_the_grid_of_remaining_dimensions, world_size == 12) {
    const auto P = partition::world(world).create_cartesian_topology_partition({2, 3, 2});
    const auto rows = P.create_cartesian_subtopology_partition({false, true, false});
    DCHECK_EQ(rows.shape(), shape_t{3});
    const auto mine = P.index();
    std::vector<int> expected;
    for (std::size_t b = 0; b < 3; ++b) expected.push_back(P.rank_of({mine[0], b, mine[2]}));
    DCHECK_EQ(rows.members(), expected);
    DCHECK_EQ(rows.index(), shape_t{mine[1]});
}

DISTDL_CHECK(transposed_pairing_follows_design_example, world_size >= 12) {
    // [2,2,1] -> [3,2,2] with transpose_src: worker (a,b,0) feeds (*,a,b).
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive({0, 1, 2, 3}).create_cartesian_topology_partition({2, 2, 1});
    const auto P_y = W.create_partition_inclusive(range(0, 12)).create_cartesian_topology_partition({3, 2, 2});
    const auto roles = P_x.create_broadcast_partition_to(P_y, true, false);
    if (world->rank() < 4) {
        const auto x = P_x.index();
        std::vector<int> expected{P_x.rank_of(x)};
        for (std::size_t i = 0; i < 3; ++i) {
            const int y = P_y.rank_of({i, x[0], x[1]});
            if (y != expected.front()) expected.push_back(y);
        }
        DCHECK_EQ(roles.send.members(), expected);
    }
    if (world->rank() < 12) {
        const auto y = P_y.index();
        DCHECK_EQ(roles.recv.members().front(), P_x.rank_of({y[1], y[2], 0}));
    }
}

DISTDL_CHECK(rule_violations_are_refused_with_shapes_and_dimension, world_size >= 18 || world_size == 9) {
    const auto W = partition::world(world);
    // Spec 000 example 5: 3x3x2 does not reduce to 1x1x3.
    if (world->size() >= 18) {
        const auto P_x = W.create_partition_inclusive(range(0, 18)).create_cartesian_topology_partition({3, 3, 2});
        const auto P_y = W.create_partition_inclusive({0, 1, 2}).create_cartesian_topology_partition({1, 1, 3});
        DCHECK_THROWS(P_x.create_reduction_partition_to(P_y), partition_error,
                      "P_x shape [3,3,2] cannot reduce to P_y shape [1,1,3] (dimension 2: 2 vs 3)");
    }
    // Spec 000 example 6: 1x3 does not reduce to 3x1, but does with either transpose.
    const auto P_x = W.create_partition_inclusive({0, 1, 2}).create_cartesian_topology_partition({1, 3});
    const auto P_y = W.create_partition_inclusive({3, 4, 5}).create_cartesian_topology_partition({3, 1});
    DCHECK_THROWS(P_x.create_reduction_partition_to(P_y), partition_error, "(dimension 0: 1 vs 3)");
    DCHECK_THROWS(P_y.create_broadcast_partition_to(P_x), partition_error,
                  "P_x shape [3,1] cannot broadcast to P_y shape [1,3] (dimension 0: 3 vs 1)");
    const auto ok = P_x.create_reduction_partition_to(P_y, true, false);
    if (world->rank() <= 2) DCHECK(ok.send.active());
    // Broadcasting to a partition of lower dimension is refused.
    const auto P_3d = W.create_partition_inclusive({0}).create_cartesian_topology_partition({1, 1, 1});
    const auto P_1d = W.create_partition_inclusive({1}).create_cartesian_topology_partition({1});
    DCHECK_THROWS(P_3d.create_broadcast_partition_to(P_1d), partition_error, "dimension 3 > 1");
}

DISTDL_CHECK(cyclic_roles_do_not_deadlock, world_size >= 2) {
    // a sends to b and b sends to a: each worker holds two teams.
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive({0, 1}).create_cartesian_topology_partition({2});
    const auto P_y = W.create_partition_inclusive({1, 0}).create_cartesian_topology_partition({2});
    const auto roles = P_x.create_broadcast_partition_to(P_y);
    std::vector<double> mine(1000, world->rank()), got(1000, -1.0);
    auto send = [&] { roles.send.comm()->broadcast(mine.data(), mine.size(), 0); };
    auto recv = [&] { roles.recv.comm()->broadcast(got.data(), got.size(), 0); };
    if (world->rank() < 2) {
        if (roles.send_first) send(), recv();
        else recv(), send();
        DCHECK_EQ(got[999], static_cast<double>(1 - world->rank()));
    }
}

DISTDL_CHECK(broadcast_and_allgather_data, true) {
    const auto P = partition::world(world);
    const int n = P.size();
    // Mode 1: from a worker of this partition; receivers do not know the length.
    std::vector<int> data;
    if (P.rank() == n - 1) data = {7, 8, 9};
    DCHECK_EQ(P.broadcast_data(data, n - 1), (std::vector<int>{7, 8, 9}));
    // Mode 2: from the first worker of a sub-partition that only it knows the data of.
    const auto sub = P.create_partition_inclusive({n - 1});
    std::vector<double> shape;
    if (sub.active()) shape = {4.0, 5.0};
    DCHECK_EQ(P.broadcast_data(shape, sub), (std::vector<double>{4.0, 5.0}));
    DCHECK_THROWS(P.broadcast_data(data, n), partition_error, "out of range");
    // Allgather of scalars and of lists of different lengths.
    const auto ranks = P.allgather_data(P.rank() * 10);
    for (int r = 0; r < n; ++r) DCHECK_EQ(ranks[static_cast<std::size_t>(r)], r * 10);
    const auto lists = P.allgather_data(std::vector<int>(static_cast<std::size_t>(P.rank()), P.rank()));
    for (int r = 0; r < n; ++r) DCHECK_EQ(lists[static_cast<std::size_t>(r)], std::vector<int>(static_cast<std::size_t>(r), r));
}

DISTDL_CHECK(equality_is_same_world_team_order_and_shape, world_size >= 2) {
    const auto W = partition::world(world);
    const auto a = W.create_partition_inclusive({0, 1});
    DCHECK(a == W.create_partition_inclusive({0, 1}));
    DCHECK(a != W.create_partition_inclusive({1, 0}));
    DCHECK(a.create_cartesian_topology_partition({2, 1}) == a.create_cartesian_topology_partition({2, 1}));
    DCHECK(a.create_cartesian_topology_partition({2, 1}) != a.create_cartesian_topology_partition({1, 2}));
}

DISTDL_CHECK(partitions_of_lower_dimension_are_padded_with_ones, world_size >= 6) {
    // [3] -> [2,3]: P_x is read as [1,3]; worker i feeds column i.
    const auto W = partition::world(world);
    const auto P_x = W.create_partition_inclusive({0, 1, 2}).create_cartesian_topology_partition({3});
    const auto P_y = W.create_partition_inclusive({0, 1, 2, 3, 4, 5}).create_cartesian_topology_partition({2, 3});
    const auto roles = P_x.create_broadcast_partition_to(P_y);
    if (world->rank() < 3) DCHECK_EQ(roles.send.members(), (std::vector<int>{world->rank(), world->rank() + 3}));
    const auto back = P_y.create_reduction_partition_to(P_x);
    if (world->rank() < 6) DCHECK_EQ(back.send.members().front(), world->rank() % 3);
}

DISTDL_CHECK(per_team_partitions_of_outsiders_are_refused_not_crashed, world_size >= 3) {
    // Rows of a 2x1 grid on workers {0,1}: worker 2 holds a row partition that names no team.
    const auto W = partition::world(world);
    const auto grid = W.create_partition_inclusive({0, 1}).create_cartesian_topology_partition({2, 1});
    const auto row = grid.create_cartesian_subtopology_partition({false, true});
    const auto dest = W.create_cartesian_topology_partition({static_cast<std::size_t>(world->size())});
    if (world->rank() >= 2) {
        DCHECK(!row.active());
        DCHECK_EQ(row.shape(), shape_t{1});
        DCHECK_THROWS(row.create_broadcast_partition_to(dest), partition_error, "outside its team");
        DCHECK_THROWS(dest.create_reduction_partition_to(row), partition_error, "outside its team");
    }
}
