#pragma once
// The serial reference of one convolution problem in double, for the kernel tests: each pass's
// exact result, the same sums over |terms| (the scale of their rounding) and the terms of the
// longest sum, which test::rounding_ratio takes.
#include <cstddef>

#include "reference/conv.hpp"
#include "tests/kernels/kernel_test_util.hpp"

namespace distdl::test {

struct conv_oracle {
    tensor<double> y_exact, y_magnitude;    // forward
    tensor<double> dx_exact, dx_magnitude;  // backward data
    // One backward_weights' worth (the kernels add it onto what dw and db hold).
    tensor<double> dw_once, dw_once_magnitude, db_once, db_once_magnitude;
    std::size_t positions = 0;  // batch x output positions
    // Terms per sum: forward C_in * kernel volume (+ bias); an input gradient at most C_out *
    // kernel volume; weight and bias gradients batch * output positions (+ what they held).
    std::size_t forward_terms = 0, data_terms = 0, weight_terms = 0;
};

template <class T>
tensor<double> in_double(const tensor<T>& t) {
    return xt::cast<double>(t);
}
inline tensor<double> absolute(const tensor<double>& t) { return xt::abs(t); }

// b is used only with `bias`; w has the shape C_out x C_in x kernel.
template <class T>
conv_oracle conv_reference(const tensor<T>& x, const tensor<T>& w, const tensor<T>& b, bool bias,
                           const tensor<T>& dy, const ref::conv_geometry& rg) {
    const auto x64 = in_double(x), w64 = in_double(w), b64 = in_double(b), dy64 = in_double(dy);
    const auto x_abs = absolute(x64), w_abs = absolute(w64), b_abs = absolute(b64), dy_abs = absolute(dy64);
    conv_oracle o;
    const shape_t w_shape = shape_of(w);
    const shape_t y_shape = shape_of(dy);
    std::size_t kernel_volume = 1;
    for (std::size_t e = 2; e < w_shape.size(); ++e) kernel_volume *= w_shape[e];
    o.positions = y_shape[0];
    for (std::size_t e = 2; e < y_shape.size(); ++e) o.positions *= y_shape[e];
    o.forward_terms = w_shape[1] * kernel_volume + 1;
    o.data_terms = w_shape[0] * kernel_volume;
    o.weight_terms = o.positions + 1;
    o.y_exact = ref::conv_forward(x64, w64, bias ? &b64 : nullptr, rg);
    o.y_magnitude = ref::conv_forward(x_abs, w_abs, bias ? &b_abs : nullptr, rg);
    o.dx_exact = ref::conv_adjoint_input(dy64, w64, shape_of(x), rg);
    o.dx_magnitude = ref::conv_adjoint_input(dy_abs, w_abs, shape_of(x), rg);
    o.dw_once = ref::conv_adjoint_weight(x64, dy64, w_shape, rg);
    o.dw_once_magnitude = ref::conv_adjoint_weight(x_abs, dy_abs, w_shape, rg);
    o.db_once = ref::conv_adjoint_bias(dy64);
    o.db_once_magnitude = ref::conv_adjoint_bias(dy_abs);
    return o;
}

}  // namespace distdl::test
