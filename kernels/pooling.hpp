#pragma once
// Fast local pooling on one worker (MaxPool1d/2d/3d, AvgPool1d/2d/3d): loops over whole output
// rows, one kernel offset at a time, with the valid range of every offset precomputed, so the
// inner loops are branch-free strided sweeps (2×2 pooling runs near memcpy speed). Meaning as reference/pool.hpp: max counts padding as −∞ and routes the
// gradient to the first maximum of each window (row-major window order); avg counts padding in
// the divisor (count_include_pad) and has no dilation. oneDNN is not used: its dilated pooling
// measured 10–20× slower and it has no float64.
//
//   forward(x, y)            y overwritten (resized only when its shape differs)
//   backward(x, dy, dx)      max: dx overwritten with dy routed to each window's first maximum of x
//   backward(dy, x_shape, dx) avg: dx overwritten
// Objects hold only their geometry: any number of threads may use one object at once.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::kernels {

struct pool_geometry {
    std::vector<std::size_t> kernel_size = {};  // one entry per spatial dimension (1, 2 or 3)
    std::vector<std::size_t> stride = {};       // empty: kernel_size; one entry: every dimension
    std::vector<std::size_t> padding = {};      // empty: 0
    std::vector<std::size_t> dilation = {};     // empty: 1 (max pooling only)
};

template <class T>
class max_pool {
  public:
    explicit max_pool(const pool_geometry& geometry);
    const pool_geometry& geometry() const { return g_; }  // normalized
    shape_t output_shape(const shape_t& x_shape) const;
    void forward(const tensor<T>& x, tensor<T>& y) const;
    void backward(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dx) const;

  private:
    pool_geometry g_;
};

template <class T>
class avg_pool {
  public:
    explicit avg_pool(const pool_geometry& geometry);
    const pool_geometry& geometry() const { return g_; }  // normalized
    shape_t output_shape(const shape_t& x_shape) const;
    void forward(const tensor<T>& x, tensor<T>& y) const;
    void backward(const tensor<T>& dy, const shape_t& x_shape, tensor<T>& dx) const;

  private:
    pool_geometry g_;
};

}  // namespace distdl::kernels
