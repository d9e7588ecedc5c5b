#pragma once
// Shared by the misuse checks: partitions over the whole world and the expected rank sets
// of a message, written out by hand (not with the library's own formatter).
#include <string>
#include <vector>

#include "tests/primitives/primitive_test_util.hpp"

namespace distdl::testing {

inline cartesian_partition whole_world_1d(const std::shared_ptr<communicator>& world) {
    return make_partition(world, rank_range(0, world->size()), {static_cast<std::size_t>(world->size())});
}

// "[0]", "[0,1]", "[0-3]": world ranks 0 .. n-1 as a message writes them.
inline std::string first_ranks(int n) {
    if (n == 1) return "[0]";
    if (n == 2) return "[0,1]";
    return "[0-" + std::to_string(n - 1) + "]";
}

}  // namespace distdl::testing
