#pragma once
// Serial pooling (MaxPool1d/2d/3d, AvgPool1d/2d/3d), the oracle for kernels/ and the pool layers.
//
// x: N × C × L_1…L_D, D = 1, 2 or 3. Window of output index j along dimension e: padded input
// indices s·j + d·t, t = 0…k−1 (kernel k, stride s, padding p, dilation d); output length
// m = floor((L + 2p − d(k−1) − 1)/s) + 1.
//  - max: y[n,c,j] = max over the window of x_padded, where padding counts as −∞ (a window made
//    only of padding gives −∞). The adjoint (with respect to the input, at the point x) sends
//    dy[n,c,j] to the FIRST maximum of the window, windows scanned in row-major order of t.
//  - avg (count_include_pad, no dilation): y[n,c,j] = (Σ over the window of x_padded) / k_1⋯k_D,
//    padding counting as 0 but in the divisor. Its adjoint spreads dy/(k_1⋯k_D) over the window.
// stride defaults to the kernel size, padding to 0, dilation to 1 (empty vectors); geometry
// vectors have one entry per spatial dimension or one for all of them.
#include <cstddef>

#include "core/tensor.hpp"
#include "reference/window_geometry.hpp"

namespace distdl::ref {

struct pool_geometry {
    per_dim kernel_size = {};
    per_dim stride = {};    // empty: kernel_size
    per_dim padding = {};   // empty: 0
    per_dim dilation = {};  // empty: 1 (max pooling only)
};

// N × C × m_1…m_D.
shape_t pool_output_shape(const shape_t& x_shape, const pool_geometry& g);

template <class T>
tensor<T> max_pool(const tensor<T>& x, const pool_geometry& g);

// dx: dy routed to the first maximum of each window of x.
template <class T>
tensor<T> max_pool_adjoint(const tensor<T>& x, const tensor<T>& dy, const pool_geometry& g);

template <class T>
tensor<T> avg_pool(const tensor<T>& x, const pool_geometry& g);

template <class T>
tensor<T> avg_pool_adjoint(const tensor<T>& dy, const shape_t& x_shape, const pool_geometry& g);

}  // namespace distdl::ref
