#include "core/partition.hpp"

#include <algorithm>
#include <numeric>

#include "core/decomposition.hpp"

namespace distdl {

namespace {

std::vector<int> iota_ranks(int n) {
    std::vector<int> r(static_cast<std::size_t>(n));
    std::iota(r.begin(), r.end(), 0);
    return r;
}

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

}  // namespace

// ---------------------------------------------------------------- partition

partition::partition(std::shared_ptr<communicator> world, std::vector<int> members, shape_t shape)
    : world_(std::move(world)), members_(std::move(members)), shape_(std::move(shape)) {}

partition partition::world(std::shared_ptr<communicator> world) {
    DISTDL_REQUIRE_AS(world != nullptr, partition_error, "partition::world: no communicator given");
    const int n = world->size();
    partition p(world, iota_ranks(n), shape_t{static_cast<std::size_t>(n)});
    p.comm_ = p.world_;
    return p;
}

void partition::connect() {
    if (rank_in_this(world_->rank()) >= 0) comm_ = world_->create_sub(members_);
}

shape_t partition::index() const { return active() ? shape_t{static_cast<std::size_t>(rank())} : shape_t{}; }

void partition::require_active(const char* what) const {
    DISTDL_REQUIRE_AS(active(), partition_error,
                      what << ": world rank " << world_->rank() << " is not active in partition "
                           << format_list(members_));
}

int partition::rank_in_this(int world_rank) const {
    auto it = std::find(members_.begin(), members_.end(), world_rank);
    return it == members_.end() ? -1 : static_cast<int>(it - members_.begin());
}

void partition::require_same_world(const partition& other, const char* what) const {
    DISTDL_REQUIRE_AS(world_ == other.world_, partition_error,
                      what << ": the partitions belong to different worlds");
}

partition partition::create_partition_inclusive(const std::vector<int>& ranks) const {
    std::vector<bool> seen(members_.size(), false);
    std::vector<int> chosen;
    chosen.reserve(ranks.size());
    for (int r : ranks) {
        DISTDL_REQUIRE_AS(r >= 0 && r < size(), partition_error,
                          "create_partition_inclusive: rank " << r << " out of range for a partition of " << size()
                                                              << " workers (ranks " << format_list(ranks) << ")");
        DISTDL_REQUIRE_AS(!seen[static_cast<std::size_t>(r)], partition_error,
                          "create_partition_inclusive: rank " << r << " repeated in " << format_list(ranks));
        seen[static_cast<std::size_t>(r)] = true;
        chosen.push_back(members_[static_cast<std::size_t>(r)]);
    }
    partition p(world_, chosen, shape_t{chosen.size()});
    if (chosen == members_) p.comm_ = comm_;  // the same team: no new communicator needed
    else p.connect();
    return p;
}

partition partition::create_partition_union(const partition& other) const {
    require_same_world(other, "create_partition_union");
    std::vector<int> joined = members_;
    for (int m : other.members_)
        if (std::find(joined.begin(), joined.end(), m) == joined.end()) joined.push_back(m);
    partition p(world_, joined, shape_t{joined.size()});
    if (joined == members_) p.comm_ = comm_;
    else p.connect();
    return p;
}

cartesian_partition partition::create_cartesian_topology_partition(const shape_t& shape) const {
    DISTDL_REQUIRE_AS(!shape.empty(), partition_error, "create_cartesian_topology_partition: empty shape");
    DISTDL_REQUIRE_AS(volume(shape) == members_.size(), partition_error,
                      "create_cartesian_topology_partition: shape " << format_list(shape) << " holds " << volume(shape)
                                                                    << " workers but the partition has "
                                                                    << members_.size());
    cartesian_partition p(world_, members_, shape);
    p.comm_ = comm_;  // same team, same order: the grid is only a view of it
    return p;
}

bool partition::operator==(const partition& other) const {
    return world_ == other.world_ && members_ == other.members_ && shape_ == other.shape_;
}

// ---------------------------------------------------------------- cartesian_partition

void cartesian_partition::require_known_team(const char* what) const {
    DISTDL_REQUIRE_AS(members_.size() == volume(shape_), partition_error,
                      what << ": a partition of shape " << format_list(shape_) << " names " << members_.size()
                           << " workers on world rank " << world_->rank()
                           << " (a per-team partition held by a worker outside its team)");
}

shape_t cartesian_partition::index() const { return active() ? cartesian_index(rank()) : shape_t{}; }

shape_t cartesian_partition::cartesian_index(int rank) const {
    DISTDL_REQUIRE_AS(rank >= 0 && rank < size(), partition_error,
                      "cartesian_index: rank " << rank << " out of range for a partition of " << size());
    return unravel_index(static_cast<std::size_t>(rank), shape_);
}

int cartesian_partition::rank_of(const shape_t& index) const {
    DISTDL_REQUIRE_AS(index.size() == shape_.size(), partition_error,
                      "rank_of: index " << format_list(index) << " for partition shape " << format_list(shape_));
    for (std::size_t d = 0; d < index.size(); ++d)
        DISTDL_REQUIRE_AS(index[d] < shape_[d], partition_error,
                          "rank_of: index " << format_list(index) << " outside partition shape " << format_list(shape_));
    return static_cast<int>(ravel_index(index, shape_));
}

std::vector<std::pair<int, int>> cartesian_partition::neighbor_ranks(int rank) const {
    const shape_t c = cartesian_index(rank);
    std::vector<std::pair<int, int>> neighbours(c.size(), {-1, -1});
    for (std::size_t d = 0; d < c.size(); ++d) {
        shape_t n = c;
        if (c[d] > 0) {
            n[d] = c[d] - 1;
            neighbours[d].first = rank_of(n);
        }
        if (c[d] + 1 < shape_[d]) {
            n[d] = c[d] + 1;
            neighbours[d].second = rank_of(n);
        }
    }
    return neighbours;
}

cartesian_partition cartesian_partition::create_cartesian_subtopology_partition(
    const std::vector<bool>& remain_dims) const {
    DISTDL_REQUIRE_AS(remain_dims.size() == shape_.size(), partition_error,
                      "create_cartesian_subtopology_partition: " << remain_dims.size()
                                                                 << " flags for a partition of dimension "
                                                                 << shape_.size());
    shape_t sub_shape;
    for (std::size_t d = 0; d < shape_.size(); ++d)
        if (remain_dims[d]) sub_shape.push_back(shape_[d]);
    if (sub_shape.empty()) sub_shape.push_back(1);  // keeping no dimension leaves each worker alone
    if (!active()) return cartesian_partition(world_, {}, sub_shape);

    // My team: the workers whose coordinates agree with mine outside the kept dimensions, in
    // rank order (which is row-major over the kept dimensions).
    const shape_t mine = index();
    std::vector<int> team;
    for (int r = 0; r < size(); ++r) {
        const shape_t c = cartesian_index(r);
        bool same = true;
        for (std::size_t d = 0; d < c.size() && same; ++d) same = remain_dims[d] || c[d] == mine[d];
        if (same) team.push_back(members_[static_cast<std::size_t>(r)]);
    }
    cartesian_partition p(world_, team, sub_shape);
    if (team == members_) p.comm_ = comm_;
    else p.connect();
    return p;
}

partition cartesian_partition::create_allreduction_partition(const std::vector<std::size_t>& axes) const {
    std::vector<bool> keep(shape_.size(), false);
    for (auto a : axes) {
        DISTDL_REQUIRE_AS(a < shape_.size(), partition_error,
                          "create_allreduction_partition: axis " << a << " out of range for partition shape "
                                                                 << format_list(shape_));
        DISTDL_REQUIRE_AS(!keep[a], partition_error,
                          "create_allreduction_partition: axis " << a << " repeated in " << format_list(axes));
        keep[a] = true;
    }
    cartesian_partition grid = create_cartesian_subtopology_partition(keep);
    partition p(world_, grid.members_, shape_t{grid.members_.size()});
    p.comm_ = grid.comm_;
    return p;
}

namespace {

// One team of a broadcast (or reduction): its root and its other members, as world ranks.
struct team_plan {
    std::vector<std::vector<int>> teams;  // team k: root first
    long send_key = -1;                   // team where this worker sends (broadcast root / reduction leaf)
    long recv_key = -1;                   // team where this worker receives
};

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

// Builds the teams of `plan` this worker belongs to, in increasing key order: every worker
// creates (and later uses) its teams in that one global order, so none waits in a cycle.
static team_pair connect_plan(const std::shared_ptr<communicator>& world, const team_plan& plan,
                                        partition inactive) {
    team_pair out{inactive, inactive, true};
    std::vector<long> keys;
    for (long k : {plan.send_key, plan.recv_key})
        if (k >= 0 && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    for (long k : keys) {
        partition team = partition::world(world).create_partition_inclusive(plan.teams[static_cast<std::size_t>(k)]);
        if (k == plan.send_key) out.send = team;
        if (k == plan.recv_key) out.recv = team;
    }
    out.send_first = plan.recv_key < 0 || (plan.send_key >= 0 && plan.send_key <= plan.recv_key);
    return out;
}

team_pair cartesian_partition::create_broadcast_partition_to(const cartesian_partition& dest,
                                                                       bool transpose_src, bool transpose_dest) const {
    return create_team_pair_to(dest, transpose_src, transpose_dest, true);
}

team_pair cartesian_partition::create_reduction_partition_to(const cartesian_partition& dest,
                                                                       bool transpose_src, bool transpose_dest) const {
    return create_team_pair_to(dest, transpose_src, transpose_dest, false);
}

team_pair cartesian_partition::create_team_pair_to(const cartesian_partition& dest, bool transpose_src,
                                                             bool transpose_dest, bool broadcast) const {
    const char* layer = broadcast ? "Broadcast" : "SumReduce";
    require_same_world(dest, broadcast ? "create_broadcast_partition_to" : "create_reduction_partition_to");
    require_known_team(layer);
    dest.require_known_team(layer);
    // The side with one worker per team (the broadcast source, the reduction destination) may
    // have fewer dimensions, and may have 1 where the other side is split.
    const cartesian_partition& one = broadcast ? *this : dest;
    const cartesian_partition& many = broadcast ? dest : *this;
    const bool one_transposed = broadcast ? transpose_src : transpose_dest;
    const bool many_transposed = broadcast ? transpose_dest : transpose_src;
    const auto problem = [&] {
        return std::string(layer) + ": " + describe("P_x", shape_, transpose_src) + " cannot " +
               (broadcast ? "broadcast" : "reduce") + " to " + describe("P_y", dest.shape_, transpose_dest);
    };
    DISTDL_REQUIRE_AS(one.shape_.size() <= many.shape_.size(), partition_error,
                      problem() << " (" << (broadcast ? "P_x" : "P_y") << " has dimension " << one.shape_.size()
                                << " > " << many.shape_.size() << ")");
    const std::size_t dim = many.shape_.size();
    const shape_t xs = effective_shape(shape_, transpose_src, dim);
    const shape_t ys = effective_shape(dest.shape_, transpose_dest, dim);
    const shape_t& one_shape = broadcast ? xs : ys;
    std::vector<std::size_t> matched;
    for (std::size_t d = 0; d < dim; ++d) {
        DISTDL_REQUIRE_AS(xs[d] == ys[d] || one_shape[d] == 1, partition_error,
                          problem() << " (dimension " << d << ": " << xs[d] << " vs " << ys[d] << ")");
        if (xs[d] == ys[d]) matched.push_back(d);
    }
    const auto plan = plan_teams(one, one_transposed, many, many_transposed, dim, matched, broadcast ? ys : xs,
                                    world_->rank(), broadcast);
    return connect_plan(world_, plan, partition(world_, {}, shape_t{0}));
}

}  // namespace distdl
