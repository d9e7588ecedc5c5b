#pragma once
// Deterministic test data: the same seed gives the same tensors on every platform, compiler
// and transport (std:: distributions are implementation-defined, so values are made here).
#include <cstdint>

#include "core/tensor.hpp"

namespace distdl::verify {

// SplitMix64 step: a well-mixed 64-bit value from any input.
std::uint64_t mix_seed(std::uint64_t value);
// An independent stream for (seed, purpose, index), e.g. (case seed, input, rank).
std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t purpose, std::uint64_t index);

// Entries uniform in [-1, 1), multiples of 2^-23 so they are exact in float and double
// (the same data then tests both precisions).
template <class T>
tensor<T> random_tensor(const shape_t& shape, std::uint64_t seed);

// Purposes for derive_seed.
enum seed_purpose : std::uint64_t { input_data = 1, adjoint_probe = 2, parameter_data = 3 };

}  // namespace distdl::verify
