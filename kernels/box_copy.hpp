#pragma once
// Copy (or add) a box of one row-major array into a box of another, one contiguous run of the
// innermost dimension at a time: halo windows, padding and unpadding of local tensors (the
// primitives' box walk, core/detail/box_copy.hpp, behind checks that name what was given).
// Loops over contiguous rows, because xtensor views are 5–15× slower for this.
#include <cstddef>

#include "core/tensor.hpp"

namespace distdl::kernels {

enum class copy_mode { assign, add };

// dst[dst_start + i] (=, +=) src[src_start + i] for every multi-index i < extent (row-major
// arrays of the given shapes, all of the same rank). Boxes outside their arrays are an error.
template <class T>
void copy_box(const T* src, const shape_t& src_shape, const shape_t& src_start, T* dst, const shape_t& dst_shape,
              const shape_t& dst_start, const shape_t& extent, copy_mode mode = copy_mode::assign);

// Tensor front-end of the same.
template <class T>
void copy_box(const tensor<T>& src, const shape_t& src_start, tensor<T>& dst, const shape_t& dst_start,
              const shape_t& extent, copy_mode mode = copy_mode::assign);

// x zero-padded by lower[e] / upper[e] entries along every dimension e, into `out` (resized
// only when its shape differs).
template <class T>
void pad(const tensor<T>& x, const shape_t& lower, const shape_t& upper, tensor<T>& out);

}  // namespace distdl::kernels
