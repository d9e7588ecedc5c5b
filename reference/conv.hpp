#pragma once
// Serial convolution (Conv1d/2d/3d), the oracle for kernels/ and the distributed conv layers.
//
// x: N × C_in × L_1…L_D, w: C_out × C_in × k_1…k_D, b: C_out (optional), D = 1, 2 or 3.
// Along spatial dimension e, with stride s, zero padding p and dilation d,
//   y[n, co, j] = b[co] + Σ_ci Σ_t w[co, ci, t] · x_padded[n, ci, s·j + d·t]
// (multi-indices j and t; x_padded is x with p zeros on both sides), and the output length is
//   m = floor((L + 2p − d(k−1) − 1)/s) + 1  (a kernel that does not fit is an error).
// The adjoints are the transposes of this linear map with respect to x, w and b.
// Geometry vectors have one entry per spatial dimension or one entry for all of them;
// empty means the default (stride 1, padding 0, dilation 1).
#include <cstddef>
#include <type_traits>

#include "core/tensor.hpp"
#include "reference/window_geometry.hpp"

namespace distdl::ref {

struct conv_geometry {
    per_dim stride = {};
    per_dim padding = {};
    per_dim dilation = {};
};

// Output shape N × C_out × m_1…m_D for input shape x_shape and weight shape w_shape.
shape_t conv_output_shape(const shape_t& x_shape, const shape_t& w_shape, const conv_geometry& g);

// y = w * x + b; `b` may be null (no bias).
template <class T>
tensor<T> conv_forward(const tensor<T>& x, const tensor<T>& w, const std::type_identity_t<tensor<T>>* b,
                       const conv_geometry& g);

// dx = (∂y/∂x)ᵀ dy, shape x_shape.
template <class T>
tensor<T> conv_adjoint_input(const tensor<T>& dy, const tensor<T>& w, const shape_t& x_shape,
                             const conv_geometry& g);

// dw = (∂y/∂w)ᵀ dy, shape w_shape.
template <class T>
tensor<T> conv_adjoint_weight(const tensor<T>& x, const tensor<T>& dy, const shape_t& w_shape,
                              const conv_geometry& g);

// db[co] = Σ_n Σ_j dy[n, co, j].
template <class T>
tensor<T> conv_adjoint_bias(const tensor<T>& dy);

}  // namespace distdl::ref
