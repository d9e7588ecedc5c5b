#pragma once
// Private helper of the layers: the communicator of every worker of a layer (the union of its
// partitions), over which the workers agree on the reason of a refusal.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/partition.hpp"

namespace distdl::detail {

// Flags by world rank: whether that worker belongs to one of `parts` (all of one world). One
// pass per partition: a search per rank costs O(n^2), seconds at thousands of simulated workers.
std::vector<char> world_membership(std::initializer_list<const partition*> parts);

// Every worker that belongs to one of `parts` (all of one world), in world rank order; null on
// the other workers. Called by every worker of the world. The partitions must know their members
// on every worker (partition.hpp: inclusive, union and Cartesian topology partitions do).
std::shared_ptr<communicator> layer_workers_comm(std::initializer_list<const partition*> parts);

// problem_formatter for agree_on_call (call_status.hpp) when the lowest-ranked worker's reason
// is the whole message: the workers that know one report the same refusal.
std::string first_problem(const std::string& first, const std::string& last, std::uint64_t count);

}  // namespace distdl::detail
