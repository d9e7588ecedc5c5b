#pragma once
// Private helper of the data-movement primitives (repartition, halo_exchange): copy a box of
// one row-major array into a box of another, either assigning or adding. Packing a region
// into a contiguous message buffer is the special case where the destination is the buffer
// itself (shape == extent, start 0); unpacking is the reverse. The innermost dimension is
// copied as one contiguous run, so the cost is one loop step per run, not per element.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::detail {

enum class box_op { assign, add };

// dst[dst_start + i] (op)= src[src_start + i] for every i in [0, extent), all multi-indices
// row-major in their arrays' shapes. The boxes must lie inside their arrays.
template <class T>
void copy_box(const T* src, const shape_t& src_shape, const shape_t& src_start, T* dst, const shape_t& dst_shape,
              const shape_t& dst_start, const shape_t& extent, box_op op) {
    const std::size_t rank = extent.size();
    if (volume(extent) == 0) return;
    if (rank == 0) {
        if (op == box_op::assign) *dst = *src;
        else *dst += *src;
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
    std::size_t src_offset = 0, dst_offset = 0;
    for (std::size_t k = 0; k < rank; ++k) {
        src_offset += src_start[k] * src_stride[k];
        dst_offset += dst_start[k] * dst_stride[k];
    }
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

}  // namespace distdl::detail
