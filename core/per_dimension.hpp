#pragma once
// Options given per spatial dimension (kernel size, stride, padding, dilation): one entry per
// dimension, one entry for all of them, or none (the default).
#include <cstddef>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace distdl {

// `values` with `dims` entries: as given, its single entry repeated, or `fallback` when empty.
// Another number of entries is refused naming `owner` and `what`.
inline std::vector<std::size_t> per_dimension(const std::vector<std::size_t>& values, std::size_t dims,
                                              const std::vector<std::size_t>& fallback, const std::string& owner,
                                              const char* what) {
    if (values.empty()) return fallback;
    if (values.size() == 1) return std::vector<std::size_t>(dims, values[0]);
    DISTDL_REQUIRE(values.size() == dims, owner << ": " << what << " " << format_list(values) << " has "
                                                << values.size() << " entries, expected "
                                                << (dims == 1 ? std::string("1 (one spatial dimension)")
                                                              : "1 or " + std::to_string(dims) +
                                                                    " (one per spatial dimension)"));
    return values;
}

}  // namespace distdl
