#include "verify/random.hpp"

namespace distdl::verify {

std::uint64_t mix_seed(std::uint64_t value) {
    value += 0x9e3779b97f4a7c15ull;
    value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ull;
    value = (value ^ (value >> 27)) * 0x94d049bb133111ebull;
    return value ^ (value >> 31);
}

std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index) {
    return mix_seed(mix_seed(mix_seed(seed) ^ purpose) + index);
}

template <class T>
tensor<T> random_tensor(const shape_t& shape, std::uint64_t seed) {
    tensor<T> out(shape);
    std::uint64_t state = seed;
    for (auto& v : out) {
        state = mix_seed(state);
        const auto bits = static_cast<std::int64_t>(state >> 40);  // 24 random bits
        v = static_cast<T>(static_cast<double>(bits - (1 << 23)) / static_cast<double>(1 << 23));
    }
    return out;
}

template tensor<float> random_tensor<float>(const shape_t&, std::uint64_t);
template tensor<double> random_tensor<double>(const shape_t&, std::uint64_t);

}  // namespace distdl::verify
