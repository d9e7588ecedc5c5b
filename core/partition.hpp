#pragma once
// Partitions (spec 001): an ordered team of workers drawn from one world, and the
// Cartesian partition that arranges such a team on a grid. Every worker of the world holds
// every partition object; a worker outside the team holds an inactive partition, which still
// knows its shape and, for partitions made by create_partition_inclusive / _union /
// create_cartesian_topology_partition, its members. The per-team partitions (subtopology,
// all-reduction, broadcast and reduction teams) name no members on workers outside them.
// Member lists are immutable and shared: equal lists are one object in the process (the
// simulator runs every worker as a thread; per-worker copies would cost O(n^2) memory).
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/communicator.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl {

class cartesian_partition;

class partition {
  public:
    // The partition of every rank of `world`, in rank order.
    static partition world(std::shared_ptr<communicator> world);

    // Number of workers, and this worker's position in the team (-1 when inactive).
    int size() const { return static_cast<int>(members_->size()); }
    int rank() const { return comm_ ? comm_->rank() : -1; }
    bool active() const { return comm_ != nullptr; }
    // A plain partition is 1-dimensional: shape {size}, index {rank}.
    const shape_t& shape() const { return shape_; }
    shape_t index() const;

    // World ranks of the team, in partition order.
    const std::vector<int>& members() const { return *members_; }
    // "worker 2 (world rank 5)": worker `index` of this partition in messages (default: this one).
    std::string worker_name(std::size_t index) const;
    std::string worker_name() const { return worker_name(static_cast<std::size_t>(rank())); }
    // This worker's communicator over the team (null when inactive).
    const std::shared_ptr<communicator>& comm() const { return comm_; }
    const std::shared_ptr<communicator>& world_comm() const { return world_; }

    // Sub-team of the listed workers (ranks of this partition, in the new order).
    partition create_partition_inclusive(const std::vector<int>& ranks) const;
    // This team followed by the workers of `other` that are not already in it.
    partition create_partition_union(const partition& other) const;
    // The same team on a grid of `shape` (row-major: rank = ravel(index)).
    cartesian_partition create_cartesian_topology_partition(const shape_t& shape) const;

    // Same world, same workers in the same order, same shape.
    bool operator==(const partition& other) const;
    bool operator!=(const partition& other) const { return !(*this == other); }

    // Broadcast from worker `root` of this partition; receivers need not know the length.
    template <class T>
    std::vector<T> broadcast_data(std::vector<T> data, int root = 0) const;
    // Broadcast from worker 0 of `source`, a team whose first worker belongs to this one:
    // for data whose structure only the sub-team knows.
    template <class T>
    std::vector<T> broadcast_data(std::vector<T> data, const partition& source) const;
    // Every worker's value (or list of values, of any lengths), in partition order.
    template <class T>
    std::vector<T> allgather_data(const T& value) const;
    template <class T>
    std::vector<std::vector<T>> allgather_data(const std::vector<T>& values) const;

  protected:
    partition(std::shared_ptr<communicator> world, std::shared_ptr<const std::vector<int>> members, shape_t shape);
    // Shares an existing copy of `members` when there is one (core/detail/shared_members).
    partition(std::shared_ptr<communicator> world, std::vector<int> members, shape_t shape);
    // Members of the world create the team communicator; others stay inactive.
    void connect();
    void require_active(const char* what) const;
    int rank_in_this(int world_rank) const;  // -1 when not a member
    void require_same_world(const partition& other, const char* what) const;

    std::shared_ptr<communicator> world_;
    std::shared_ptr<const std::vector<int>> members_;  // never null
    shape_t shape_;
    std::shared_ptr<communicator> comm_;

    friend class cartesian_partition;
};

// The two teams a worker uses in a broadcast or a sum-reduction between partitions (spec 001):
// `send` and `recv` are inactive where the worker has no such role. `send_first` says which
// to use first so that workers holding two teams never wait on each other in a cycle.
struct team_pair {
    partition send;
    partition recv;
    bool send_first;
};

class cartesian_partition : public partition {
  public:
    // Grid coordinates of this worker (empty when inactive) and of any worker.
    shape_t index() const;
    shape_t cartesian_index(int rank) const;
    int rank_of(const shape_t& index) const;
    // For each dimension, the ranks of the previous and next worker (-1 at an edge).
    std::vector<std::pair<int, int>> neighbor_ranks(int rank) const;
    std::size_t dim() const { return shape_.size(); }

    // Teams of the workers that share their coordinates outside the kept dimensions; each
    // keeps the kept dimensions as its grid (as MPI_Cart_sub).
    cartesian_partition create_cartesian_subtopology_partition(const std::vector<bool>& remain_dims) const;
    // Teams (no topology) that sum together when reducing over `axes` (spec 001, AllSumReduce).
    partition create_allreduction_partition(const std::vector<std::size_t>& axes) const;
    // Teams of a broadcast from this partition to `dest`: one per worker of this partition,
    // that worker first, then the receiving workers of `dest` in their order.
    team_pair create_broadcast_partition_to(const cartesian_partition& dest, bool transpose_src = false,
                                                      bool transpose_dest = false) const;
    // Teams of a sum-reduction from this partition to `dest`: one per worker of `dest`, that
    // worker first, then the contributing workers of this partition in their order.
    team_pair create_reduction_partition_to(const cartesian_partition& dest, bool transpose_src = false,
                                                      bool transpose_dest = false) const;

  private:
    using partition::partition;
    // Refuses a partition whose members this worker does not know (see the top of this file).
    void require_known_team(const char* what) const;
    // The rules and teams of a broadcast (or, with broadcast false, a sum-reduction) to dest.
    team_pair create_team_pair_to(const cartesian_partition& dest, bool transpose_src, bool transpose_dest,
                                           bool broadcast) const;
    friend class partition;
};

// ---- templates ----

template <class T>
std::vector<T> partition::broadcast_data(std::vector<T> data, int root) const {
    static_assert(std::is_trivially_copyable<T>::value, "broadcast_data needs trivially copyable elements");
    require_active("broadcast_data");
    DISTDL_REQUIRE_AS(root >= 0 && root < size(), partition_error,
                      "broadcast_data: root " << root << " out of range for a partition of " << size());
    std::uint64_t length = data.size();
    comm_->broadcast(&length, 1, dtype::uint64, root);
    data.resize(length);
    comm_->broadcast(data.data(), length * sizeof(T), dtype::byte, root);
    return data;
}

template <class T>
std::vector<T> partition::broadcast_data(std::vector<T> data, const partition& source) const {
    require_same_world(source, "broadcast_data");
    DISTDL_REQUIRE_AS(source.size() > 0, partition_error, "broadcast_data: the source partition is empty");
    const int root = rank_in_this(source.members().front());
    DISTDL_REQUIRE_AS(root >= 0, partition_error,
                      "broadcast_data: source worker " << source.members().front() << " is not in this partition "
                                                       << format_list(*members_));
    return broadcast_data(std::move(data), root);
}

template <class T>
std::vector<T> partition::allgather_data(const T& value) const {
    static_assert(std::is_trivially_copyable<T>::value, "allgather_data needs trivially copyable values");
    require_active("allgather_data");
    std::vector<T> all(members_->size());
    comm_->all_gather(&value, all.data(), sizeof(T), dtype::byte);
    return all;
}

template <class T>
std::vector<std::vector<T>> partition::allgather_data(const std::vector<T>& values) const {
    static_assert(std::is_trivially_copyable<T>::value, "allgather_data needs trivially copyable values");
    const auto lengths = allgather_data<std::uint64_t>(values.size());
    std::uint64_t longest = 0;
    for (auto l : lengths) longest = std::max(longest, l);
    std::vector<T> padded(longest);
    std::copy(values.begin(), values.end(), padded.begin());
    std::vector<T> flat(longest * members_->size());
    comm_->all_gather(padded.data(), flat.data(), longest * sizeof(T), dtype::byte);
    std::vector<std::vector<T>> all(members_->size());
    for (std::size_t r = 0; r < all.size(); ++r)
        all[r].assign(flat.begin() + r * longest, flat.begin() + r * longest + lengths[r]);
    return all;
}

}  // namespace distdl
