#include "core/detail/team_planning.hpp"

#include <algorithm>
#include <string>

#include "core/decomposition.hpp"
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

// Where the matched dimensions of a worker with key `key` stand, in effective coordinates (the
// inverse of pairing_key; unmatched dimensions are left 0).
shape_t coords_of_key(std::size_t key, const shape_t& extents, const std::vector<std::size_t>& matched,
                      bool transposed, std::size_t dim) {
    shape_t e(dim, 0);
    if (transposed) {
        for (auto d : matched) {
            e[d] = key % extents[d];
            key /= extents[d];
        }
    } else {
        for (auto it = matched.rbegin(); it != matched.rend(); ++it) {
            e[*it] = key % extents[*it];
            key /= extents[*it];
        }
    }
    return e;
}

// The effective dimension of original dimension i of a partition with `nd` dimensions.
std::size_t effective_dim(std::size_t i, std::size_t nd, bool transposed, std::size_t dim) {
    return dim - nd + (transposed ? nd - 1 - i : i);
}

std::size_t key_of(const cartesian_partition& p, int rank, bool transposed, std::size_t dim,
                   const std::vector<std::size_t>& matched, const shape_t& extents) {
    return pairing_key(effective_coords(p.cartesian_index(rank), transposed, dim), extents, matched, transposed);
}

// Teams between a partition `one` (one worker per key: the broadcast source or the reduction
// destination) and `many` (several workers per key). The caller checked the rules. Team k is
// the worker of `one` with key k, then the workers of `many` with key k in rank order (without
// the first if it is also there); only this worker's teams are built.
team_plan plan_teams(const cartesian_partition& one, bool one_transposed, const cartesian_partition& many,
                     bool many_transposed, std::size_t dim, const std::vector<std::size_t>& matched,
                     const shape_t& extents, bool one_sends) {
    team_plan plan;
    // A worker's position in a partition is its rank there (inactive: not a member).
    if (one.active())
        (one_sends ? plan.send_key : plan.recv_key) =
            static_cast<long>(key_of(one, one.rank(), one_transposed, dim, matched, extents));
    if (many.active())
        (one_sends ? plan.recv_key : plan.send_key) =
            static_cast<long>(key_of(many, many.rank(), many_transposed, dim, matched, extents));

    for (long k : {plan.send_key, plan.recv_key}) {
        if (k < 0 || plan.teams.count(k)) continue;
        const auto key = static_cast<std::size_t>(k);
        std::vector<int>& team = plan.teams[k];
        // The root: unmatched dimensions of `one` have extent 1 (the rules), so coordinate 0.
        const shape_t& one_shape = one.shape();
        const shape_t e_one = coords_of_key(key, extents, matched, one_transposed, dim);
        shape_t c_one(one_shape.size());
        for (std::size_t i = 0; i < c_one.size(); ++i) c_one[i] = e_one[effective_dim(i, c_one.size(), one_transposed, dim)];
        const int root = one.members()[ravel_index(c_one, one_shape)];
        team.push_back(root);
        // The others: the workers of `many` whose matched coordinates are the key's, counted off
        // in rank order (row-major over `many`'s dimensions, the free ones as an odometer).
        const shape_t& many_shape = many.shape();
        const std::size_t nd = many_shape.size();
        const shape_t e_many = coords_of_key(key, extents, matched, many_transposed, dim);
        std::vector<bool> fixed(nd, false);
        shape_t c(nd, 0);
        for (auto d : matched) {
            const std::size_t i = many_transposed ? nd - 1 - (d - (dim - nd)) : d - (dim - nd);
            fixed[i] = true;
            c[i] = e_many[d];
        }
        std::size_t count = 1;
        for (std::size_t i = 0; i < nd; ++i)
            if (!fixed[i]) count *= many_shape[i];
        team.reserve(count + 1);
        for (std::size_t n = 0; n < count; ++n) {
            const int w = many.members()[ravel_index(c, many_shape)];
            if (w != root) team.push_back(w);
            for (std::size_t i = nd; i-- > 0;) {
                if (fixed[i]) continue;
                if (++c[i] < many_shape[i]) break;
                c[i] = 0;
            }
        }
    }
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
    return plan_teams(one, one_transposed, many, many_transposed, dim, matched, broadcast ? ys : xs, broadcast);
}

}  // namespace distdl::detail
