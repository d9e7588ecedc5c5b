// Broadcast and reduction teams (spec 001) against an oracle that lists every team of the
// pairing by visiting every worker of both partitions (what each worker did before it came to
// build only its own teams): shapes with padding, transposes and overlapping members.
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

// Coordinates reversed when transposed, padded on the left to `dim` with `pad`.
shape_t effective(const shape_t& coords, bool transposed, std::size_t dim, std::size_t pad) {
    shape_t e(dim - coords.size(), pad);
    if (transposed) e.insert(e.end(), coords.rbegin(), coords.rend());
    else e.insert(e.end(), coords.begin(), coords.end());
    return e;
}

struct oracle_plan {
    std::vector<std::vector<int>> teams;
    long send_key = -1, recv_key = -1;
};

// Every team of the pairing, the root first; keys as DESIGN §3 (flat index over the matched
// dimensions; a transposed partition's reversed coordinates read column-major).
oracle_plan oracle(const cartesian_partition& P_x, const cartesian_partition& P_y, bool transpose_src,
                   bool transpose_dest, bool broadcast, int me) {
    const auto& one = broadcast ? P_x : P_y;
    const auto& many = broadcast ? P_y : P_x;
    const bool one_t = broadcast ? transpose_src : transpose_dest;
    const bool many_t = broadcast ? transpose_dest : transpose_src;
    const std::size_t dim = many.dim();
    const shape_t xs = effective(P_x.shape(), transpose_src, dim, 1);
    const shape_t ys = effective(P_y.shape(), transpose_dest, dim, 1);
    const shape_t& extents = broadcast ? ys : xs;
    std::vector<std::size_t> matched;
    for (std::size_t d = 0; d < dim; ++d)
        if (xs[d] == ys[d]) matched.push_back(d);
    const auto key_of = [&](const shape_t& c, bool t) {
        std::size_t key = 0;
        if (t) for (auto it = matched.rbegin(); it != matched.rend(); ++it) key = key * extents[*it] + c[*it];
        else for (auto d : matched) key = key * extents[d] + c[d];
        return key;
    };
    std::size_t keys = 1;
    for (auto d : matched) keys *= extents[d];
    oracle_plan plan;
    plan.teams.resize(keys);
    std::vector<std::vector<int>> others(keys);
    for (int r = 0; r < one.size(); ++r) {
        const auto key = key_of(effective(one.cartesian_index(r), one_t, dim, 0), one_t);
        const int w = one.members()[static_cast<std::size_t>(r)];
        plan.teams[key].push_back(w);
        if (w == me) (broadcast ? plan.send_key : plan.recv_key) = static_cast<long>(key);
    }
    for (int r = 0; r < many.size(); ++r) {
        const auto key = key_of(effective(many.cartesian_index(r), many_t, dim, 0), many_t);
        const int w = many.members()[static_cast<std::size_t>(r)];
        if (w != plan.teams[key].front()) others[key].push_back(w);
        if (w == me) (broadcast ? plan.recv_key : plan.send_key) = static_cast<long>(key);
    }
    for (std::size_t k = 0; k < keys; ++k) plan.teams[k].insert(plan.teams[k].end(), others[k].begin(), others[k].end());
    return plan;
}

void check_against_oracle(const cartesian_partition& P_x, const cartesian_partition& P_y, bool transpose_src,
                          bool transpose_dest, bool broadcast) {
    const int me = P_x.world_comm()->rank();
    const auto roles = broadcast ? P_x.create_broadcast_partition_to(P_y, transpose_src, transpose_dest)
                                 : P_x.create_reduction_partition_to(P_y, transpose_src, transpose_dest);
    const auto want = oracle(P_x, P_y, transpose_src, transpose_dest, broadcast, me);
    if (want.send_key < 0) DCHECK(!roles.send.active());
    else DCHECK_EQ(roles.send.members(), want.teams[static_cast<std::size_t>(want.send_key)]);
    if (want.recv_key < 0) DCHECK(!roles.recv.active());
    else DCHECK_EQ(roles.recv.members(), want.teams[static_cast<std::size_t>(want.recv_key)]);
    DCHECK_EQ(roles.send_first, want.recv_key < 0 || (want.send_key >= 0 && want.send_key <= want.recv_key));
}

cartesian_partition grid(const partition& world, const std::vector<int>& members, const shape_t& shape) {
    return world.create_partition_inclusive(members).create_cartesian_topology_partition(shape);
}

}  // namespace

DISTDL_CHECK(teams_match_oracle_without_transposes, world_size >= 12) {
    const auto W = partition::world(world);
    // Disjoint and overlapping members; a lower-dimensional side padded on the left.
    check_against_oracle(grid(W, {9, 10, 11}, {1, 3}), grid(W, range(0, 6), {2, 3}), false, false, true);
    check_against_oracle(grid(W, {4, 1, 0}, {1, 3}), grid(W, range(0, 6), {2, 3}), false, false, true);
    check_against_oracle(grid(W, {5, 2}, {2}), grid(W, range(0, 8), {2, 2, 2}), false, false, true);
    check_against_oracle(grid(W, range(0, 12), {2, 3, 2}), grid(W, {1, 2, 3}, {1, 3, 1}), false, false, false);
    check_against_oracle(grid(W, range(0, 12), {2, 3, 2}), grid(W, {7}, {1, 1, 1}), false, false, false);
    check_against_oracle(grid(W, {11, 3, 7, 0}, {2, 2}), grid(W, {6, 5, 4, 3}, {2, 2}), false, false, true);
}

DISTDL_CHECK(teams_match_oracle_with_transposes, world_size >= 12) {
    const auto W = partition::world(world);
    check_against_oracle(grid(W, {0, 1}, {2, 1}), grid(W, range(0, 6), {3, 2}), true, false, true);
    check_against_oracle(grid(W, {3, 8}, {1, 2}), grid(W, range(2, 6), {2, 2}), false, true, true);
    check_against_oracle(grid(W, {0, 1, 2, 3}, {2, 2, 1}), grid(W, range(0, 12), {3, 2, 2}), true, false, true);
    check_against_oracle(grid(W, range(0, 6), {2, 3}), grid(W, {10, 4, 1}, {3, 1}), false, true, false);
    check_against_oracle(grid(W, range(0, 6), {3, 2}), grid(W, {9, 8, 7, 6, 5, 4}, {3, 2}), true, true, false);
    check_against_oracle(grid(W, range(6, 12), {2, 3}), grid(W, range(0, 6), {3, 2}), true, false, true);
}
