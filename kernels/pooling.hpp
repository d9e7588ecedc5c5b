#pragma once
// Fast local pooling on one worker (MaxPool1d/2d/3d, AvgPool1d/2d/3d): loops over whole output
// rows (the forward sums a row in a buffer of its own and stores it once), one kernel offset at
// a time, with the valid range of every offset precomputed, so the inner loops are branch-free
// strided sweeps (2×2 pooling runs near memcpy speed). Meaning as
// reference/pool.hpp: max counts padding as −∞ and routes the gradient to the first maximum of
// each window (row-major window order); avg counts padding in the divisor (count_include_pad)
// and has no dilation. oneDNN is not used: its dilated pooling
// measured 10–20× slower and it has no float64.
//
//   forward(x, y)                    y overwritten (resized only when its shape differs)
//   forward(x, y, argmax)            max: also each output's first maximum (in-plane index of x,
//                                    −1 for a window of padding only), for the cheap backward
//   backward(argmax, dy, x_shape, dx) max: dx overwritten with dy routed to the saved maxima
//   backward(x, dy, dx)              max: the same, finding the maxima again from x
//   backward(dy, x_shape, dx)        avg: dx overwritten
// The *_box forms compute a box of outputs only, from an input array placed anywhere relative
// to them (pool_region; indices outside the array count as padding), and the backward forms
// add into dx or overwrite it (pool_dx): the distributed layers pool their interior straight
// from their piece (with the ghost columns of the last dimension beside it, pool_sides) and
// only the rim from a halo buffer. The ties rule is the reference's: the first element of the
// window (row-major) is taken, then any strictly greater one; the max is the value taken.
// Objects hold only their geometry: any number of threads may use one object at once.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::kernels {

struct pool_geometry {
    std::vector<std::size_t> kernel_size = {};  // one entry per spatial dimension (1, 2 or 3)
    std::vector<std::size_t> stride = {};       // empty: kernel_size; one entry: every dimension
    std::vector<std::size_t> padding = {};      // empty: 0
    std::vector<std::size_t> dilation = {};     // empty: 1 (max pooling only)
};

// Where the outputs lie relative to an input array, per spatial dimension: output j reads
// input index s·j + d·t − offset (t = 0…k−1; outside [0, L) it is padding), and only outputs
// in [start, stop) are computed. For a whole tensor: offset = padding, [0, m).
struct pool_region {
    std::vector<std::int64_t> offset;
    shape_t start, stop;
};

// Columns beside the input array along the last spatial dimension (the distributed layers'
// ghosts there, so a worker pools whole output rows in one sweep instead of a strided column
// of rim outputs): input indices [−left_width, 0) are read from `left`, [L, L + right_width)
// from `right`, each an array of the input's shape with the last extent replaced by its width.
// P: const T (forward) or T (backward: the gradients of those columns are added there).
template <class P>
struct pool_sides {
    P* left = nullptr;
    std::size_t left_width = 0;
    P* right = nullptr;
    std::size_t right_width = 0;
};

// What a backward_box does with dx's own array (the side columns are always added to): add the
// box's gradients to it, or overwrite it (every element: the box's gradients, zero elsewhere),
// zeroing each row just before its first gradient instead of a pass over dx beforehand.
enum class pool_dx { add, overwrite };

// In-plane input index of each output's maximum (−1: none). With pool_sides, an index V + i
// (V: the input plane's volume) is entry i of the left columns' plane, V + V_left + i entry i
// of the right columns' plane.
using pool_argmax = std::vector<std::int32_t>;

template <class T>
class max_pool {
  public:
    explicit max_pool(const pool_geometry& geometry);
    const pool_geometry& geometry() const { return g_; }  // normalized
    shape_t output_shape(const shape_t& x_shape) const;
    void forward(const tensor<T>& x, tensor<T>& y) const;
    void forward(const tensor<T>& x, tensor<T>& y, pool_argmax& argmax) const;
    void backward(const pool_argmax& argmax, const tensor<T>& dy, const shape_t& x_shape, tensor<T>& dx) const;
    void backward(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dx) const;
    // Arrays of shape x_shape (N × C × L…), y_shape (N × C × m…); argmax has one entry per
    // output (y_shape's volume). forward_box writes y and argmax in the region's box;
    // backward_box adds dy there into dx at the saved maxima (or overwrites dx: pool_dx).
    void forward_box(const T* x, const shape_t& x_shape, const pool_region& r, T* y, const shape_t& y_shape,
                     std::int32_t* argmax, const pool_sides<const T>& sides = {}) const;
    void backward_box(const std::int32_t* argmax, const T* dy, const shape_t& y_shape, const pool_region& r, T* dx,
                      const shape_t& x_shape, const pool_sides<T>& sides = {}, pool_dx mode = pool_dx::add) const;

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
    // As max_pool's: forward_box writes y in the region's box, backward_box adds into dx (or
    // overwrites it: pool_dx).
    void forward_box(const T* x, const shape_t& x_shape, const pool_region& r, T* y, const shape_t& y_shape,
                     const pool_sides<const T>& sides = {}) const;
    void backward_box(const T* dy, const shape_t& y_shape, const pool_region& r, T* dx, const shape_t& x_shape,
                      const pool_sides<T>& sides = {}, pool_dx mode = pool_dx::add) const;

  private:
    pool_geometry g_;
};

}  // namespace distdl::kernels
