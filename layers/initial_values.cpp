#include "layers/initial_values.hpp"

#include <cmath>

namespace distdl {

namespace {

// SplitMix64 finaliser: a well-mixed 64-bit value from any input.
std::uint64_t mix(std::uint64_t v) {
    v += 0x9e3779b97f4a7c15ull;
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
    return v ^ (v >> 31);
}

}  // namespace

double initial_parameter_value(std::uint64_t seed, std::uint64_t tensor_id, std::uint64_t index, std::size_t fan_in) {
    const std::uint64_t h = mix(mix(mix(seed) ^ tensor_id) + index);
    const auto bits = static_cast<std::int64_t>(h >> 40);                // 24 bits
    const double u = static_cast<double>(bits - (1 << 23)) / (1 << 23);  // [-1, 1), exact in float
    const double bound = fan_in == 0 ? 0.0 : 1.0 / std::sqrt(static_cast<double>(fan_in));
    return u * bound;
}

}  // namespace distdl
