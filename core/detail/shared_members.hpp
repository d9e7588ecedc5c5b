#pragma once
// Member lists of partitions, shared: every worker of a world holds every partition, so a
// list of n world ranks held by each of n workers would cost O(n^2) memory when the workers
// are threads of one process (the simulator). Lists are immutable once made, and equal lists
// are the same object across the process: memory O(n) per distinct list. Under MPI each
// process holds its own copy, as before.
#include <memory>
#include <vector>

namespace distdl::detail {

using member_list = std::shared_ptr<const std::vector<int>>;

// The process's copy of `ranks`: an existing live list with the same contents, or a new one.
// Thread-safe; costs one pass over `ranks` (no allocation when a copy exists).
member_list shared_members(std::vector<int> ranks);

// The list 0, 1, ..., n-1 (a world's members), shared the same way; O(1) once it exists.
member_list shared_iota(int n);

}  // namespace distdl::detail
