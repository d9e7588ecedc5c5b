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

template <class T> constexpr dtype dtype_of();
template <> constexpr dtype dtype_of<float>() { return dtype::float32; }
template <> constexpr dtype dtype_of<double>() { return dtype::float64; }
template <> constexpr dtype dtype_of<std::int32_t>() { return dtype::int32; }
template <> constexpr dtype dtype_of<std::int64_t>() { return dtype::int64; }
template <> constexpr dtype dtype_of<std::uint64_t>() { return dtype::uint64; }
template <> constexpr dtype dtype_of<unsigned char>() { return dtype::byte; }

}  // namespace distdl
