#pragma once
// Geometry of a local convolution, fixed at construction: channels, and per spatial dimension
// the kernel size, stride, zero padding and dilation (the meaning of reference/conv.hpp:
// y[n,co,j] = b[co] + Σ_ci Σ_t w[co,ci,t] · x_padded[n,ci,s·j + d·t], output length
// floor((L + 2p − d(k−1) − 1)/s) + 1 per spatial dimension).
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::kernels {

struct conv_geometry {
    std::size_t in_channels = 0;
    std::size_t out_channels = 0;
    std::vector<std::size_t> kernel_size = {};  // one entry per spatial dimension (1, 2 or 3 of them)
    std::vector<std::size_t> stride = {};       // empty: 1; one entry: the same for every dimension
    std::vector<std::size_t> padding = {};      // empty: 0 (typical when a halo exchange padded x)
    std::vector<std::size_t> dilation = {};     // empty: 1
    bool bias = false;
};

// The geometry with every per-dimension vector spelled out; invalid geometries throw
// distdl::invalid_argument naming what was given.
conv_geometry normalized(const conv_geometry& g);

// N × C_out × m… for an input of shape N × C_in × L… (the kernel must fit in every dimension).
shape_t conv_output_shape(const conv_geometry& normalized_geometry, const shape_t& x_shape);

}  // namespace distdl::kernels
