#pragma once
// Helpers for the reference oracle tests: seeded random tensors and the dot product in double.
#include <cstdint>
#include <random>

#include "core/tensor.hpp"

namespace distdl::test {

template <class T>
tensor<T> random_tensor(const shape_t& shape, std::uint64_t seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    tensor<T> t(shape);
    for (auto& v : t) v = T(u(gen));
    return t;
}

template <class T>
double dot(const tensor<T>& a, const tensor<T>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += double(a.data()[i]) * double(b.data()[i]);
    return s;
}

template <class T>
double norm(const tensor<T>& a) {
    return std::sqrt(dot(a, a));
}

// |<F x, y> - <x, F* y>| / max(|F x| |y|, |x| |F* y|)
template <class T>
double adjoint_mismatch(const tensor<T>& x, const tensor<T>& Fx, const tensor<T>& y, const tensor<T>& Fty) {
    const double scale = std::max(norm(Fx) * norm(y), norm(x) * norm(Fty));
    return std::abs(dot(Fx, y) - dot(x, Fty)) / scale;
}

}  // namespace distdl::test
