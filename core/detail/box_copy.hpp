#pragma once
// Private helper of the data-movement code: copy a box of one row-major array into a box of
// another (assign or add), fill a box, and tell whether a box is one contiguous run. Packing a
// region into a message buffer is the case where the destination is the buffer itself (shape
// == extent, start 0); unpacking is the reverse. The innermost dimension is copied as one
// contiguous run, so the cost is one loop step per run, not per element. Every box is checked
// against its array once per call (not per element): a box outside its array is a planning
// error and throws distdl::error instead of touching memory it does not own.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

enum class box_op { assign, add };

// Throws distdl::error unless [start, start + extent) lies inside `shape` (same ranks).
inline void require_box_inside(const shape_t& shape, const shape_t& start, const shape_t& extent, const char* what) {
    bool inside = shape.size() == start.size() && shape.size() == extent.size();
    for (std::size_t d = 0; inside && d < shape.size(); ++d)
        inside = start[d] <= shape[d] && extent[d] <= shape[d] - start[d];
    DISTDL_REQUIRE_AS(inside, ::distdl::error,
                      "internal error: " << what << " box at " << format_list(start) << " of extent "
                                         << format_list(extent) << " does not lie inside an array of shape "
                                         << format_list(shape));
}

// Offset of the first element of the box and whether the box is one contiguous run of its
// array: every dimension after the first one of extent > 1 spans the whole array.
inline bool box_is_contiguous(const shape_t& shape, const shape_t& start, const shape_t& extent) {
    std::size_t d = 0;
    while (d < extent.size() && extent[d] == 1) ++d;
    for (++d; d < extent.size(); ++d)
        if (extent[d] != shape[d] || start[d] != 0) return false;
    return true;
}

inline std::size_t box_offset(const shape_t& shape, const shape_t& start) {
    std::size_t offset = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) offset = offset * shape[d] + start[d];
    return offset;
}

// dst[dst_start + i] (op)= src[src_start + i] for every i in [0, extent), all multi-indices
// row-major in their arrays' shapes.
template <class T>
void copy_box(const T* src, const shape_t& src_shape, const shape_t& src_start, T* dst, const shape_t& dst_shape,
              const shape_t& dst_start, const shape_t& extent, box_op op) {
    require_box_inside(src_shape, src_start, extent, "source");
    require_box_inside(dst_shape, dst_start, extent, "destination");
    const std::size_t rank = extent.size();
    if (volume(extent) == 0) return;
    if (rank == 0) {
        if (op == box_op::assign) *dst = *src;
        else *dst += *src;
        return;
    }
    if (box_is_contiguous(src_shape, src_start, extent) && box_is_contiguous(dst_shape, dst_start, extent)) {
        // One run in both arrays (whole rows, a packed buffer): a single copy or add loop.
        const T* s = src + box_offset(src_shape, src_start);
        T* d = dst + box_offset(dst_shape, dst_start);
        const std::size_t n = volume(extent);
        if (op == box_op::assign) std::copy(s, s + n, d);
        else
            for (std::size_t i = 0; i < n; ++i) d[i] += s[i];
        return;
    }
    // Element strides of both arrays (row-major); one small allocation per box, none per element.
    std::vector<std::size_t> src_stride(rank), dst_stride(rank), counter(rank, 0);
    src_stride[rank - 1] = 1;
    dst_stride[rank - 1] = 1;
    for (std::size_t k = rank - 1; k-- > 0;) {
        src_stride[k] = src_stride[k + 1] * src_shape[k + 1];
        dst_stride[k] = dst_stride[k + 1] * dst_shape[k + 1];
    }
    std::size_t src_offset = box_offset(src_shape, src_start), dst_offset = box_offset(dst_shape, dst_start);
    const std::size_t run = extent[rank - 1];
    // Odometer over the outer dimensions; offsets are updated incrementally.
    while (true) {
        const T* s = src + src_offset;
        T* d = dst + dst_offset;
        if (op == box_op::assign) std::copy(s, s + run, d);
        else
            for (std::size_t i = 0; i < run; ++i) d[i] += s[i];
        std::size_t k = rank - 1;
        while (k-- > 0) {
            if (++counter[k] < extent[k]) {
                src_offset += src_stride[k];
                dst_offset += dst_stride[k];
                break;
            }
            src_offset -= (extent[k] - 1) * src_stride[k];
            dst_offset -= (extent[k] - 1) * dst_stride[k];
            counter[k] = 0;
        }
        if (k == static_cast<std::size_t>(-1)) return;
    }
}

// Packs box [start, start + extent) of `src` (shape src_shape) into the contiguous `dst`.
template <class T>
void pack_box(const T* src, const shape_t& src_shape, const shape_t& start, const shape_t& extent, T* dst) {
    copy_box(src, src_shape, start, dst, extent, shape_t(extent.size(), 0), extent, box_op::assign);
}

// Unpacks the contiguous `src` into box [start, start + extent) of `dst` (assign or add).
template <class T>
void unpack_box(const T* src, T* dst, const shape_t& dst_shape, const shape_t& start, const shape_t& extent,
                box_op op) {
    copy_box(src, extent, shape_t(extent.size(), 0), dst, dst_shape, start, extent, op);
}

// dst[start + i] = value for every i in [0, extent).
template <class T>
void fill_box(T* dst, const shape_t& shape, const shape_t& start, const shape_t& extent, T value) {
    require_box_inside(shape, start, extent, "filled");
    const std::size_t rank = extent.size();
    if (volume(extent) == 0) return;
    if (rank == 0) {
        *dst = value;
        return;
    }
    std::vector<std::size_t> index(start);
    const std::size_t run = extent[rank - 1];
    while (true) {
        T* d = dst + box_offset(shape, index);
        std::fill(d, d + run, value);
        std::size_t k = rank - 1;
        while (k-- > 0) {
            if (++index[k] < start[k] + extent[k]) break;
            index[k] = start[k];
        }
        if (k == static_cast<std::size_t>(-1)) return;
    }
}

// Fills every element of the array `shape` outside the box [start, start + extent) (at most
// two slabs per dimension), leaving the box itself untouched.
template <class T>
void fill_outside_box(T* dst, const shape_t& shape, const shape_t& start, const shape_t& extent, T value) {
    require_box_inside(shape, start, extent, "kept");
    const std::size_t rank = shape.size();
    if (volume(extent) == 0) {
        fill_box(dst, shape, shape_t(rank, 0), shape, value);
        return;
    }
    // Slab d: inside the box in dimensions < d, outside it in dimension d, anything after.
    shape_t lo(rank, 0), ext(shape);
    for (std::size_t d = 0; d < rank; ++d) {
        ext[d] = start[d];
        lo[d] = 0;
        fill_box(dst, shape, lo, ext, value);
        lo[d] = start[d] + extent[d];
        ext[d] = shape[d] - lo[d];
        fill_box(dst, shape, lo, ext, value);
        lo[d] = start[d];
        ext[d] = extent[d];
    }
}

}  // namespace distdl::detail
