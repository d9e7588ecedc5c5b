#pragma once
// A dtype travels between workers as a number (in shape headers and agreement digests).
#include <cstdint>
#include <string>

#include "core/dtype.hpp"

namespace distdl::detail {

// Name of a dtype sent as a number ("unknown" when out of range).
std::string dtype_name(std::uint64_t code);

}  // namespace distdl::detail
