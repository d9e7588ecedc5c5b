#pragma once
// Element types that travel through a communicator.
#include <cstddef>
#include <cstdint>
#include <string>

namespace distdl {

enum class dtype { float32, float64, int32, int64, uint64, byte };

std::size_t size_of(dtype t);
std::string to_string(dtype t);
bool is_summable(dtype t);  // byte is not: reductions of raw bytes are meaningless

template <class T> inline constexpr bool unsupported_element_type = false;
// The dtype of T; another type is refused at compile time (it used to fail only at link time).
template <class T> constexpr dtype dtype_of() {
    static_assert(unsupported_element_type<T>, "distdl: this element type cannot travel through a communicator; "
                                               "use float, double, std::int32_t, std::int64_t, std::uint64_t or "
                                               "unsigned char (bytes)");
    return dtype::byte;
}
template <> constexpr dtype dtype_of<float>() { return dtype::float32; }
template <> constexpr dtype dtype_of<double>() { return dtype::float64; }
template <> constexpr dtype dtype_of<std::int32_t>() { return dtype::int32; }
template <> constexpr dtype dtype_of<std::int64_t>() { return dtype::int64; }
template <> constexpr dtype dtype_of<std::uint64_t>() { return dtype::uint64; }
template <> constexpr dtype dtype_of<unsigned char>() { return dtype::byte; }

}  // namespace distdl
