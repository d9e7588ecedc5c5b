#pragma once
// Options given per spatial dimension (kernel size, stride, padding, dilation): one entry per
// dimension, one entry for all of them, or none (the default).
#include <concepts>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace distdl {

// A per-dimension option of the layers: a braced list ({3}, {3, 5}) or a plain number, which is
// the one entry used for every dimension (`.kernel_size = 3` is {3}; not std::vector's count).
// A negative number is refused (it would wrap to a huge count); a fraction or a bool does not
// compile.
struct per_dimension_list : std::vector<std::size_t> {
    using std::vector<std::size_t>::vector;
    per_dimension_list() = default;
    per_dimension_list(std::size_t every) : std::vector<std::size_t>{every} {}  // implicit on purpose
    template <std::integral I>
        requires(!std::same_as<I, bool> && !std::same_as<I, std::size_t>)
    per_dimension_list(I every) : per_dimension_list(count_of(every)) {}
    template <std::floating_point F>
    per_dimension_list(F) = delete;  // 2.7 would be cut to 2
    per_dimension_list(bool) = delete;
    per_dimension_list(std::vector<std::size_t> values) : std::vector<std::size_t>(std::move(values)) {}

  private:
    template <class I>
    static std::size_t count_of(I every) {
        if constexpr (std::is_signed_v<I>)
            DISTDL_REQUIRE(every >= 0, "a per-dimension option (kernel_size, stride, padding, dilation) counts "
                                       "elements, got " << every);
        return static_cast<std::size_t>(every);
    }
};

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
