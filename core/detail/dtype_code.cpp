#include "core/detail/dtype_code.hpp"

namespace distdl::detail {

std::string dtype_name(std::uint64_t code) {
    return code <= static_cast<std::uint64_t>(dtype::byte) ? to_string(static_cast<dtype>(code)) : "unknown";
}

}  // namespace distdl::detail
