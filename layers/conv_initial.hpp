#pragma once
// The global initial model of a convolution, whatever its partitions: weight
// out_channels x in_channels x kernel..., bias out_channels ({0} without bias). Element e
// (row-major) is initial_parameter_value(seed, id, e, in_channels * prod(kernel_size))
// (layers/initial_values.hpp), so it depends only on (seed, channels, kernel) and every
// distributed run starts from the serial model.
#include <cstdint>

#include "core/tensor.hpp"
#include "layers/conv_options.hpp"

namespace distdl {

template <class T>
struct conv_parameters {
    tensor<T> weight;
    tensor<T> bias;
};

template <class T>
conv_parameters<T> conv_initial_parameters(const conv_spec& spec);

// Value of global weight element `index` (row-major), and of bias element `index`.
double conv_initial_weight(const conv_spec& spec, std::uint64_t index);
double conv_initial_bias(const conv_spec& spec, std::uint64_t index);

}  // namespace distdl
