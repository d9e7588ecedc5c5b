#include "simulator/context.hpp"

#include "core/error.hpp"
#include "simulator/summary.hpp"

namespace distdl::sim {

std::string name(const context_state& context) {
    return "context " + std::to_string(context.id) + " (world ranks " + format_ranks(context.members) + ")";
}

std::string who(const context_state& context, int rank) {
    std::string out = "rank " + std::to_string(rank);
    if (context.id != 0) out += " (world rank " + std::to_string(context.members[static_cast<std::size_t>(rank)]) + ")";
    return out;
}

}  // namespace distdl::sim
