#pragma once
// Construction-time check that every worker built a module with the same element type: MPI
// does not compare type signatures, so a float message received as double would corrupt data.
#include <cstdint>
#include <string>

#include "core/communicator.hpp"
#include "core/dtype.hpp"

namespace distdl::detail {

// Collective over every rank of `world`: throws invalid_argument, identically everywhere,
// when the ranks constructed `layer` with different element types.
void require_same_dtype(communicator& world, dtype mine, const char* layer);

// Name of a dtype sent as a number ("unknown" when out of range).
std::string dtype_name(std::uint64_t code);

}  // namespace distdl::detail
