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

#include "core/array_box.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

enum class box_op { assign, add };

// Throws distdl::error unless [start, start + extent) lies inside `shape` (same ranks).
inline void require_box_inside(const shape_t& shape, const shape_t& start, const shape_t& extent, const char* what) {
    DISTDL_REQUIRE_AS(box_lies_inside(shape, start, extent), ::distdl::error,
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

// Index scratch of one box walk: on the stack up to `inline_rank` dimensions, so that a call
// of a primitive allocates nothing per box; on the heap beyond.
class index_scratch {
  public:
    static constexpr std::size_t inline_rank = 8;
    index_scratch(std::size_t n, std::size_t value) {
        if (n > inline_rank) heap_.assign(n, value);
        else std::fill(inline_, inline_ + n, value);
    }
    std::size_t* data() { return heap_.empty() ? inline_ : heap_.data(); }
    std::size_t& operator[](std::size_t i) { return data()[i]; }

  private:
    std::size_t inline_[inline_rank];
    std::vector<std::size_t> heap_;
};

// `rows` runs of `run` elements, src and dst advancing by their own steps from run to run:
// the innermost walk of a box copy, a plain loop (a column box is one element per row, where a
// call per run would cost more than the element).
template <class T>
void copy_runs(const T* src, std::size_t src_step, T* dst, std::size_t dst_step, std::size_t rows, std::size_t run,
               box_op op) {
    constexpr std::size_t short_run = 16;  // shorter runs: an element loop instead of a memmove call
    for (std::size_t r = 0; r < rows; ++r, src += src_step, dst += dst_step) {
        if (op == box_op::add)
            for (std::size_t i = 0; i < run; ++i) dst[i] += src[i];
        else if (run < short_run)
            for (std::size_t i = 0; i < run; ++i) dst[i] = src[i];
        else
            std::copy(src, src + run, dst);
    }
}

// The box walk behind copy_box, pack_box and unpack_box, on checked boxes. A null start is
// the origin.
template <class T>
void copy_checked_box(const T* src, const shape_t& src_shape, const std::size_t* src_start, T* dst,
                      const shape_t& dst_shape, const std::size_t* dst_start, const shape_t& extent, box_op op) {
    const std::size_t rank = extent.size();
    if (volume(extent) == 0) return;
    if (rank == 0) {
        if (op == box_op::assign) *dst = *src;
        else *dst += *src;
        return;
    }
    // Element strides of both arrays (row-major) and the offsets of the boxes' first elements.
    index_scratch src_stride(rank, 1), dst_stride(rank, 1), counter(rank, 0);
    for (std::size_t k = rank - 1; k-- > 0;) {
        src_stride[k] = src_stride[k + 1] * src_shape[k + 1];
        dst_stride[k] = dst_stride[k + 1] * dst_shape[k + 1];
    }
    std::size_t src_offset = 0, dst_offset = 0;
    for (std::size_t k = 0; k < rank; ++k) {
        if (src_start != nullptr) src_offset += src_start[k] * src_stride[k];
        if (dst_start != nullptr) dst_offset += dst_start[k] * dst_stride[k];
    }
    // Dimensions (from the innermost) where both boxes span their whole arrays merge into one
    // run with the next outer dimension: a packed buffer or whole rows are one loop.
    std::size_t run = extent[rank - 1];
    std::size_t outer = rank - 1;  // dimensions [0, outer) are walked by the odometer
    while (outer > 0 && extent[outer] == src_shape[outer] && extent[outer] == dst_shape[outer]) {
        --outer;
        run *= extent[outer];
    }
    // The innermost walked dimension is copy_runs' loop; an odometer walks the ones outside it,
    // offsets updated incrementally.
    // Dimensions of extent 1 next to the run do not move: the loop takes the next one out.
    std::size_t walked = outer;
    while (walked > 0 && extent[walked - 1] == 1) --walked;
    if (walked > 0) --walked;  // the odometer's dimensions: [0, walked); copy_runs' loop: walked
    const std::size_t rows = outer > 0 ? extent[walked] : 1;
    const std::size_t src_step = outer > 0 ? src_stride[walked] : 0, dst_step = outer > 0 ? dst_stride[walked] : 0;
    while (true) {
        copy_runs(src + src_offset, src_step, dst + dst_offset, dst_step, rows, run, op);
        std::size_t k = walked;
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

// dst[dst_start + i] (op)= src[src_start + i] for every i in [0, extent), all multi-indices
// row-major in their arrays' shapes.
template <class T>
void copy_box(const T* src, const shape_t& src_shape, const shape_t& src_start, T* dst, const shape_t& dst_shape,
              const shape_t& dst_start, const shape_t& extent, box_op op) {
    require_box_inside(src_shape, src_start, extent, "source");
    require_box_inside(dst_shape, dst_start, extent, "destination");
    copy_checked_box(src, src_shape, src_start.data(), dst, dst_shape, dst_start.data(), extent, op);
}

// Packs box [start, start + extent) of `src` (shape src_shape) into the contiguous `dst`.
template <class T>
void pack_box(const T* src, const shape_t& src_shape, const shape_t& start, const shape_t& extent, T* dst) {
    require_box_inside(src_shape, start, extent, "source");
    copy_checked_box(src, src_shape, start.data(), dst, extent, nullptr, extent, box_op::assign);
}

// Unpacks the contiguous `src` into box [start, start + extent) of `dst` (assign or add).
template <class T>
void unpack_box(const T* src, T* dst, const shape_t& dst_shape, const shape_t& start, const shape_t& extent,
                box_op op) {
    require_box_inside(dst_shape, start, extent, "destination");
    copy_checked_box(src, extent, nullptr, dst, dst_shape, start.data(), extent, op);
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
    index_scratch stride(rank, 1), counter(rank, 0);
    for (std::size_t k = rank - 1; k-- > 0;) stride[k] = stride[k + 1] * shape[k + 1];
    std::size_t offset = 0;
    for (std::size_t k = 0; k < rank; ++k) offset += start[k] * stride[k];
    std::size_t run = extent[rank - 1];
    std::size_t outer = rank - 1;
    while (outer > 0 && extent[outer] == shape[outer]) {
        --outer;
        run *= extent[outer];
    }
    while (true) {
        std::fill(dst + offset, dst + offset + run, value);
        std::size_t k = outer;
        while (k-- > 0) {
            if (++counter[k] < extent[k]) {
                offset += stride[k];
                break;
            }
            offset -= (extent[k] - 1) * stride[k];
            counter[k] = 0;
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
