#pragma once
// Sizes derived from user arguments (kernel extents d*(k-1)+1, padded lengths n+2p, volumes,
// offsets) computed with an overflow check: a value that does not fit is refused with a
// distdl::invalid_argument naming the quantity, instead of wrapping into a wrong size.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace distdl {

// Throws invalid_argument "<what>: <a> <op> <b> overflows 64-bit sizes".
[[noreturn]] inline void throw_size_overflow(std::string_view what, std::size_t a, const char* op, std::size_t b) {
    std::ostringstream msg;
    msg << what << ": " << a << " " << op << " " << b << " does not fit in a 64-bit size (overflow)";
    throw invalid_argument(msg.str());
}

inline std::size_t checked_add(std::size_t a, std::size_t b, std::string_view what) {
    std::size_t out;
    if (__builtin_add_overflow(a, b, &out)) throw_size_overflow(what, a, "+", b);
    return out;
}

inline std::size_t checked_mul(std::size_t a, std::size_t b, std::string_view what) {
    std::size_t out;
    if (__builtin_mul_overflow(a, b, &out)) throw_size_overflow(what, a, "*", b);
    return out;
}

// A size used as a signed offset (window bounds may be negative): refused above INT64_MAX.
inline std::int64_t checked_signed(std::size_t a, std::string_view what) {
    if (a > static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())) {
        std::ostringstream msg;
        msg << what << ": " << a << " exceeds the largest signed 64-bit offset";
        throw invalid_argument(msg.str());
    }
    return static_cast<std::int64_t>(a);
}

inline std::size_t checked_volume(const std::vector<std::size_t>& shape, std::string_view what) {
    std::size_t v = 1;
    for (auto e : shape)
        if (e == 0) return 0;
    const std::string named = std::string(what) + " " + format_list(shape);
    for (auto e : shape) v = checked_mul(v, e, named);
    return v;
}

// For a value every member of a team holds, summed over the `count` members into `sum` (modulo
// 2^64): whether this member's value times `count` differs from the sum. Every member passes
// only when all values are equal: a product that would wrap counts as differing (it is the
// largest value's, so the sum itself may have wrapped).
inline bool differs_from_sum(std::uint64_t value, std::uint64_t count, std::uint64_t sum) {
    std::uint64_t times;
    return __builtin_mul_overflow(value, count, &times) || times != sum;
}

}  // namespace distdl
