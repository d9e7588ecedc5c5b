#include "core/dtype.hpp"

namespace distdl {

std::size_t size_of(dtype t) {
    switch (t) {
        case dtype::float32: return 4;
        case dtype::float64: return 8;
        case dtype::int32: return 4;
        case dtype::int64: return 8;
        case dtype::uint64: return 8;
        case dtype::byte: return 1;
    }
    return 0;
}

std::string to_string(dtype t) {
    switch (t) {
        case dtype::float32: return "float32";
        case dtype::float64: return "float64";
        case dtype::int32: return "int32";
        case dtype::int64: return "int64";
        case dtype::uint64: return "uint64";
        case dtype::byte: return "byte";
    }
    return "unknown";
}

bool is_summable(dtype t) { return t != dtype::byte; }

}  // namespace distdl
