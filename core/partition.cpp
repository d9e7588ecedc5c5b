#include "core/partition.hpp"

#include <algorithm>
#include <numeric>

#include "core/decomposition.hpp"
#include "core/detail/shared_members.hpp"
#include "core/detail/team_planning.hpp"

namespace distdl {

// ---------------------------------------------------------------- partition

partition::partition(std::shared_ptr<communicator> world, std::shared_ptr<const std::vector<int>> members, shape_t shape)
    : world_(std::move(world)), members_(std::move(members)), shape_(std::move(shape)) {}

partition::partition(std::shared_ptr<communicator> world, std::vector<int> members, shape_t shape)
    : partition(std::move(world), detail::shared_members(std::move(members)), std::move(shape)) {}

partition partition::world(std::shared_ptr<communicator> world) {
    DISTDL_REQUIRE_AS(world != nullptr, partition_error, "partition::world: no communicator given");
    const int n = world->size();
    partition p(world, detail::shared_iota(n), shape_t{static_cast<std::size_t>(n)});
    p.comm_ = p.world_;
    return p;
}

void partition::connect() {
    if (rank_in_this(world_->rank()) >= 0) comm_ = world_->create_sub(*members_);
}

shape_t partition::index() const { return active() ? shape_t{static_cast<std::size_t>(rank())} : shape_t{}; }

std::string partition::worker_name(std::size_t index) const {
    return "worker " + std::to_string(index) + " (world rank " + std::to_string(members().at(index)) + ")";
}

void partition::require_active(const char* what) const {
    DISTDL_REQUIRE_AS(active(), partition_error,
                      what << ": world rank " << world_->rank() << " is not active in partition "
                           << format_list(*members_));
}

int partition::rank_in_this(int world_rank) const {
    auto it = std::find(members_->begin(), members_->end(), world_rank);
    return it == members_->end() ? -1 : static_cast<int>(it - members_->begin());
}

void partition::require_same_world(const partition& other, const char* what) const {
    DISTDL_REQUIRE_AS(world_ == other.world_, partition_error,
                      what << ": the partitions belong to different worlds");
}

partition partition::create_partition_inclusive(const std::vector<int>& ranks) const {
    std::vector<bool> seen(members_->size(), false);
    std::vector<int> chosen;
    chosen.reserve(ranks.size());
    for (int r : ranks) {
        DISTDL_REQUIRE_AS(r >= 0 && r < size(), partition_error,
                          "create_partition_inclusive: rank " << r << " out of range for a partition of " << size()
                                                              << " workers (ranks " << format_list(ranks) << ")");
        DISTDL_REQUIRE_AS(!seen[static_cast<std::size_t>(r)], partition_error,
                          "create_partition_inclusive: rank " << r << " repeated in " << format_list(ranks));
        seen[static_cast<std::size_t>(r)] = true;
        chosen.push_back((*members_)[static_cast<std::size_t>(r)]);
    }
    if (chosen == *members_) {  // the same team: no new list or communicator needed
        partition p(world_, members_, shape_t{chosen.size()});
        p.comm_ = comm_;
        return p;
    }
    const shape_t shape{chosen.size()};
    partition p(world_, std::move(chosen), shape);
    p.connect();
    return p;
}

partition partition::create_partition_union(const partition& other) const {
    require_same_world(other, "create_partition_union");
    // Membership by world rank, in one pass (a search per member costs O(n^2) per worker).
    std::vector<bool> present(static_cast<std::size_t>(world_->size()), false);
    for (int m : *members_) present[static_cast<std::size_t>(m)] = true;
    std::vector<int> added;
    for (int m : *other.members_)
        if (!present[static_cast<std::size_t>(m)]) {
            present[static_cast<std::size_t>(m)] = true;
            added.push_back(m);
        }
    if (added.empty()) {  // the same team
        partition p(world_, members_, shape_t{members_->size()});
        p.comm_ = comm_;
        return p;
    }
    std::vector<int> joined;
    joined.reserve(members_->size() + added.size());
    joined.insert(joined.end(), members_->begin(), members_->end());
    joined.insert(joined.end(), added.begin(), added.end());
    const shape_t shape{joined.size()};
    partition p(world_, std::move(joined), shape);
    p.connect();
    return p;
}

cartesian_partition partition::create_cartesian_topology_partition(const shape_t& shape) const {
    DISTDL_REQUIRE_AS(!shape.empty(), partition_error, "create_cartesian_topology_partition: empty shape");
    // A grid without workers would leave the primitives built on it nobody to send or receive.
    for (std::size_t d = 0; d < shape.size(); ++d)
        DISTDL_REQUIRE_AS(shape[d] > 0, partition_error,
                          "create_cartesian_topology_partition: shape "
                              << format_list(shape) << " has extent 0 in dimension " << d
                              << "; every dimension needs at least 1 worker");
    DISTDL_REQUIRE_AS(volume(shape) == members_->size(), partition_error,
                      "create_cartesian_topology_partition: shape " << format_list(shape) << " holds " << volume(shape)
                                                                    << " workers but the partition has "
                                                                    << members_->size());
    cartesian_partition p(world_, members_, shape);
    p.comm_ = comm_;  // same team, same order: the grid is only a view of it
    return p;
}

bool partition::operator==(const partition& other) const {
    return world_ == other.world_ && (members_ == other.members_ || *members_ == *other.members_) &&
           shape_ == other.shape_;
}

// ---------------------------------------------------------------- cartesian_partition

void cartesian_partition::require_known_team(const char* what) const {
    DISTDL_REQUIRE_AS(members_->size() == volume(shape_), partition_error,
                      what << ": a partition of shape " << format_list(shape_) << " names " << members_->size()
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
    if (!active()) return cartesian_partition(world_, detail::shared_members({}), sub_shape);

    if (std::all_of(remain_dims.begin(), remain_dims.end(), [](bool keep) { return keep; })) {
        cartesian_partition p(world_, members_, sub_shape);  // every dimension kept: the same team
        p.comm_ = comm_;
        return p;
    }

    // My team: the workers whose coordinates agree with mine outside the kept dimensions, in
    // rank order, which is row-major over the kept dimensions: counted off directly, without
    // visiting the other teams.
    const std::size_t dim = shape_.size();
    const shape_t mine = index();
    shape_t stride(dim, 1);
    for (std::size_t d = dim - 1; d-- > 0;) stride[d] = stride[d + 1] * shape_[d + 1];
    std::size_t base = 0;
    std::vector<std::size_t> kept;
    for (std::size_t d = 0; d < dim; ++d) {
        if (remain_dims[d]) kept.push_back(d);
        else base += mine[d] * stride[d];
    }
    const std::size_t count = volume(sub_shape);
    std::vector<int> team;
    team.reserve(count);
    shape_t at(kept.size(), 0);  // odometer over the kept dimensions, last fastest
    for (std::size_t i = 0; i < count; ++i) {
        std::size_t r = base;
        for (std::size_t k = 0; k < kept.size(); ++k) r += at[k] * stride[kept[k]];
        team.push_back((*members_)[r]);
        for (std::size_t k = kept.size(); k-- > 0;) {
            if (++at[k] < shape_[kept[k]]) break;
            at[k] = 0;
        }
    }
    if (team == *members_) {
        cartesian_partition p(world_, members_, sub_shape);
        p.comm_ = comm_;
        return p;
    }
    cartesian_partition p(world_, std::move(team), sub_shape);
    p.connect();
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
    partition p(world_, grid.members_, shape_t{grid.members_->size()});
    p.comm_ = grid.comm_;
    return p;
}

// Builds the teams of `plan` this worker belongs to, in increasing key order: every worker
// creates (and later uses) its teams in that one global order, so none waits in a cycle.
static team_pair connect_plan(const std::shared_ptr<communicator>& world, const detail::team_plan& plan,
                              partition inactive) {
    team_pair out{inactive, inactive, true};
    std::vector<long> keys;
    for (long k : {plan.send_key, plan.recv_key})
        if (k >= 0 && std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
    std::sort(keys.begin(), keys.end());
    for (long k : keys) {
        partition team = partition::world(world).create_partition_inclusive(plan.teams.at(k));
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
    const detail::team_plan plan = detail::plan_team_pair(*this, dest, transpose_src, transpose_dest, broadcast);
    return connect_plan(world_, plan, partition(world_, detail::shared_members({}), shape_t{0}));
}

}  // namespace distdl
