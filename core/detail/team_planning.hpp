#pragma once
// Private helper of the partition code: the rules and the teams of a broadcast from one
// Cartesian partition to another, or of a sum-reduction (DESIGN §3, spec 000/001). Pure
// computation on the partitions' shapes and members; partition.cpp connects the teams.
#include <map>
#include <vector>

#include "core/partition.hpp"

namespace distdl::detail {

// The teams of a broadcast (or reduction) this worker belongs to, as world ranks, each with its
// root first, by key (the teams of all workers are numbered 0, 1, ... alike on every worker);
// and the keys of the teams where this worker sends and receives (-1: none).
struct team_plan {
    std::map<long, std::vector<int>> teams;  // only send_key's and recv_key's
    long send_key = -1;  // team where this worker sends (broadcast root / reduction leaf)
    long recv_key = -1;  // team where this worker receives
};

// Checks the rules (partition_error naming both shapes and the first bad dimension) and lists
// this worker's teams. `P_x`, `P_y`: source and destination. Costs O(dimension) plus the size
// of this worker's teams: no worker visits the teams of others.
team_plan plan_team_pair(const cartesian_partition& P_x, const cartesian_partition& P_y, bool transpose_src,
                         bool transpose_dest, bool broadcast);

}  // namespace distdl::detail
