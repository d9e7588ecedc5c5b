#pragma once
// Shared by the misuse checks: the odd worker out and the expected texts of a disagreement,
// with rank sets written out by hand (not with the library's own formatter).
#include <string>
#include <vector>

#include "tests/primitives/primitive_test_util.hpp"

namespace distdl::testing {

// "[0]", "[0,1]", "[0-3]": world ranks 0 .. n-1 as a message writes them.
inline std::string first_ranks(int n) {
    if (n == 1) return "[0]";
    if (n == 2) return "[0,1]";
    return "[0-" + std::to_string(n - 1) + "]";
}

// The misuse checks make the last world rank the odd one out.
inline bool odd_one(const std::shared_ptr<communicator>& world) { return world->rank() == world->size() - 1; }

// "<layer>: workers disagree on <arg>: <usual> on world ranks [0-(n-2)], <odd> on world ranks [n-1]"
inline std::string disagreement(const std::shared_ptr<communicator>& world, const std::string& layer,
                                const std::string& arg, const std::string& usual, const std::string& odd) {
    const int n = world->size();
    return layer + ": workers disagree on " + arg + ": " + usual + " on world ranks " + first_ranks(n - 1) + ", " +
           odd + " on world ranks [" + std::to_string(n - 1) + "]";
}

}  // namespace distdl::testing
