#include "layers/conv_initial.hpp"

#include "layers/initial_values.hpp"

namespace distdl {

namespace {

// Parameter tensor ids of the convolutions (Linear uses 1 and 2).
constexpr std::uint64_t weight_id = 3;
constexpr std::uint64_t bias_id = 4;

}  // namespace

double conv_initial_weight(const conv_spec& spec, std::uint64_t index) {
    return initial_parameter_value(spec.seed, weight_id, index, spec.fan_in());
}

double conv_initial_bias(const conv_spec& spec, std::uint64_t index) {
    return initial_parameter_value(spec.seed, bias_id, index, spec.fan_in());
}

template <class T>
conv_parameters<T> conv_initial_parameters(const conv_spec& spec) {
    conv_parameters<T> p{tensor<T>(spec.weight_shape()), tensor<T>(shape_t{spec.bias ? spec.out_channels : 0})};
    for (std::size_t e = 0; e < p.weight.size(); ++e) p.weight.data()[e] = static_cast<T>(conv_initial_weight(spec, e));
    for (std::size_t e = 0; e < p.bias.size(); ++e) p.bias.data()[e] = static_cast<T>(conv_initial_bias(spec, e));
    return p;
}

template conv_parameters<float> conv_initial_parameters<float>(const conv_spec&);
template conv_parameters<double> conv_initial_parameters<double>(const conv_spec&);

}  // namespace distdl
