#include "core/detail/team_planning.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace distdl::detail {

namespace {

// Coordinates of a worker in a partition's effective shape: reversed when transposed, then
// padded on the left with zeros to `dim`.
shape_t effective_coords(const shape_t& coords, bool transposed, std::size_t dim) {
    shape_t e(dim - coords.size(), 0);
    if (transposed) e.insert(e.end(), coords.rbegin(), coords.rend());
    else e.insert(e.end(), coords.begin(), coords.end());
    return e;
}

// A partition's effective shape: reversed when transposed, then padded on the left with ones.
shape_t effective_shape(const shape_t& shape, bool transposed, std::size_t dim) {
    shape_t e = effective_coords(shape, transposed, dim);
    std::fill(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(dim - shape.size()), 1);
    return e;
}

// Key pairing workers of two partitions (DESIGN §3): the flat index over the matched
// dimensions, row-major; for a transposed partition its reversed coordinates are read
// column-major, which is the row-major index over the original dimensions.
std::size_t pairing_key(const shape_t& coords, const shape_t& extents, const std::vector<std::size_t>& matched,
                        bool transposed) {
    std::size_t key = 0;
    if (transposed) {
        for (auto it = matched.rbegin(); it != matched.rend(); ++it) key = key * extents[*it] + coords[*it];
    } else {
        for (auto d : matched) key = key * extents[d] + coords[d];
    }
    return key;
}

std::string describe(const char* role, const shape_t& shape, bool transposed) {
    return std::string(role) + " shape " + format_list(shape) + (transposed ? " (transposed)" : "");
}

// Teams between a partition `one` (one worker per key: the broadcast source or the reduction
// destination) and `many` (several workers per key). The caller checked the rules.
team_plan plan_teams(const cartesian_partition& one, bool one_transposed, const cartesian_partition& many,
                            bool many_transposed, std::size_t dim, const std::vector<std::size_t>& matched,
                            const shape_t& extents, int world_rank, bool one_sends) {
    std::size_t keys = 1;
    for (auto d : matched) keys *= extents[d];
    team_plan plan;
    plan.teams.assign(keys, {});
    std::vector<std::vector<int>> others(keys);
    for (int r = 0; r < one.size(); ++r) {
        const auto key = pairing_key(effective_coords(one.cartesian_index(r), one_transposed, dim), extents, matched,
                                     one_transposed);
        const int w = one.members()[static_cast<std::size_t>(r)];
        plan.teams[key].push_back(w);
        if (w == world_rank) (one_sends ? plan.send_key : plan.recv_key) = static_cast<long>(key);
    }
    for (int r = 0; r < many.size(); ++r) {
        const auto key = pairing_key(effective_coords(many.cartesian_index(r), many_transposed, dim), extents,
                                     matched, many_transposed);
        const int w = many.members()[static_cast<std::size_t>(r)];
        if (w != plan.teams[key].front()) others[key].push_back(w);
        if (w == world_rank) (one_sends ? plan.recv_key : plan.send_key) = static_cast<long>(key);
    }
    for (std::size_t k = 0; k < keys; ++k) plan.teams[k].insert(plan.teams[k].end(), others[k].begin(), others[k].end());
    return plan;
}

}  // namespace

team_plan plan_team_pair(const cartesian_partition& P_x, const cartesian_partition& P_y, bool transpose_src,
                         bool transpose_dest, bool broadcast) {
    const char* layer = broadcast ? "Broadcast" : "SumReduce";
    // The side with one worker per team (the broadcast source, the reduction destination) may
    // have fewer dimensions, and may have 1 where the other side is split.
    const cartesian_partition& one = broadcast ? P_x : P_y;
    const cartesian_partition& many = broadcast ? P_y : P_x;
    const bool one_transposed = broadcast ? transpose_src : transpose_dest;
    const bool many_transposed = broadcast ? transpose_dest : transpose_src;
    const auto problem = [&] {
        return std::string(layer) + ": " + describe("P_x", P_x.shape(), transpose_src) + " cannot " +
               (broadcast ? "broadcast" : "reduce") + " to " + describe("P_y", P_y.shape(), transpose_dest);
    };
    DISTDL_REQUIRE_AS(one.shape().size() <= many.shape().size(), partition_error,
                      problem() << " (" << (broadcast ? "P_x" : "P_y") << " has dimension " << one.shape().size()
                                << " > " << many.shape().size() << ")");
    const std::size_t dim = many.shape().size();
    const shape_t xs = effective_shape(P_x.shape(), transpose_src, dim);
    const shape_t ys = effective_shape(P_y.shape(), transpose_dest, dim);
    const shape_t& one_shape = broadcast ? xs : ys;
    std::vector<std::size_t> matched;
    for (std::size_t d = 0; d < dim; ++d) {
        DISTDL_REQUIRE_AS(xs[d] == ys[d] || one_shape[d] == 1, partition_error,
                          problem() << " (dimension " << d << ": " << xs[d] << " vs " << ys[d] << ")");
        if (xs[d] == ys[d]) matched.push_back(d);
    }
    return plan_teams(one, one_transposed, many, many_transposed, dim, matched, broadcast ? ys : xs,
                      P_x.world_comm()->rank(), broadcast);
}

}  // namespace distdl::detail
