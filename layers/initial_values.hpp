#pragma once
// The initial values of learnable parameters, shared by the layers that have them (Linear, the
// convolutions): element `index` (row-major global index) of parameter tensor `tensor_id` is
// bound * u(seed, tensor_id, index), with u a counter-based hash in [-1, 1) (multiples of 2^-23,
// so exact in float and double) and bound = 1/sqrt(fan_in) (PyTorch's default range; 0 when
// fan_in is 0). Counter-based: one element's value needs no other, so every worker fills its
// own block and a serial run starts from the same model as every distributed run.
#include <cstddef>
#include <cstdint>

namespace distdl {

double initial_parameter_value(std::uint64_t seed, std::uint64_t tensor_id, std::uint64_t index, std::size_t fan_in);

}  // namespace distdl
