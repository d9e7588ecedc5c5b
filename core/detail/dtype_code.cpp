#include "core/detail/dtype_agreement.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.hpp"

namespace distdl::detail {

std::string dtype_name(std::uint64_t code) {
    return code <= static_cast<std::uint64_t>(dtype::byte) ? to_string(static_cast<dtype>(code)) : "unknown";
}

void require_same_dtype(communicator& world, dtype mine, const char* layer) {
    const auto codes = world.all_gather<std::uint64_t>(static_cast<std::uint64_t>(mine));
    if (std::all_of(codes.begin(), codes.end(), [&](std::uint64_t c) { return c == codes.front(); })) return;
    std::map<std::uint64_t, std::vector<int>> ranks_by_type;
    for (std::size_t r = 0; r < codes.size(); ++r) ranks_by_type[codes[r]].push_back(static_cast<int>(r));
    std::ostringstream msg;
    msg << layer << ": workers disagree on the element type:";
    for (const auto& [code, ranks] : ranks_by_type) msg << " " << dtype_name(code) << " on world ranks " << format_list(ranks);
    throw invalid_argument(msg.str());
}

}  // namespace distdl::detail
