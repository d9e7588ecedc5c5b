#pragma once
// Helpers for the kernel tests: seeded random tensors and a normalised comparison.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "core/tensor.hpp"

namespace distdl::test {

template <class T>
tensor<T> random_tensor(const shape_t& shape, std::mt19937_64& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    tensor<T> t(shape);
    for (auto& v : t) v = T(u(gen));
    return t;
}

template <class T>
constexpr double tolerance() {
    return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

// max |a − b| / max(1e-30, max |b|): errors relative to the size of the expected values.
template <class T>
double relative_error(const tensor<T>& a, const tensor<T>& b) {
    if (a.shape() != b.shape()) return INFINITY;
    double diff = 0, scale = 1e-30;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(double(a.data()[i]) - double(b.data()[i])));
        scale = std::max(scale, std::abs(double(b.data()[i])));
    }
    return a.size() == 0 ? 0.0 : diff / scale;
}

inline std::size_t pick(std::mt19937_64& gen, std::size_t lo, std::size_t hi) {  // uniform in [lo, hi]
    return std::uniform_int_distribution<std::size_t>(lo, hi)(gen);
}

}  // namespace distdl::test
