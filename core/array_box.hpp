#pragma once
// A box of a row-major array as the data of one message (communicator::isend_box / irecv_box):
// the message is the box's elements in the box's own row-major order, so a box of volume n
// matches any send or receive of n elements of the same type, contiguous or box.
//
// `array_box` is how callers name a box (array shape, start, extent, in elements);
// `strided_layout` is what a transport gets: the same box in bytes, as contiguous runs walked by
// an odometer over at most `strided_layout::max_dims` outer dimensions, after merging every
// dimension that continues the one inside it (a packed buffer is one run). Building it checks
// the box against its array once; walking it touches only the box.
#include <cstddef>
#include <vector>

namespace distdl {

// The elements [start, start + extent) of a row-major array of shape `shape` (one rank for all).
struct array_box {
    std::vector<std::size_t> shape;
    std::vector<std::size_t> start;
    std::vector<std::size_t> extent;
};

// Whether [start, start + extent) lies inside an array of shape `shape` (all three of one rank).
bool box_lies_inside(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& start,
                     const std::vector<std::size_t>& extent);

struct strided_layout {
    static constexpr std::size_t max_dims = 8;
    std::size_t offset = 0;  // bytes from the array's first byte to the box's first byte
    std::size_t run = 0;     // bytes of one contiguous run (0: an empty box)
    std::size_t dims = 0;    // outer dimensions, outermost first
    std::size_t count[max_dims] = {};
    std::size_t stride[max_dims] = {};  // bytes between consecutive runs along that dimension

    std::size_t bytes() const {
        std::size_t total = run;
        for (std::size_t k = 0; k < dims; ++k) total *= count[k];
        return total;
    }
    bool contiguous() const { return dims == 0; }
};

// One run of `bytes` bytes at offset 0: a plain buffer.
strided_layout contiguous_layout(std::size_t bytes);

// The layout of `box` for elements of `element_size` bytes. Throws invalid_argument (naming
// the box and `what`) if the box does not lie inside its array or the ranks differ; returns
// false, leaving `out` unspecified, if the box needs more than max_dims outer dimensions.
bool make_layout(const array_box& box, std::size_t element_size, strided_layout& out, const char* what = "box");

// Walks the runs of a layout in order, any number of bytes at a time.
class layout_cursor {
  public:
    explicit layout_cursor(const strided_layout& layout);
    // Bytes from the array's first byte to the current position.
    std::size_t offset() const { return offset_; }
    // Bytes left in the current run (0 only at the end).
    std::size_t left() const { return left_; }
    // Moves `bytes` (at most left()) forward, to the next run when this one is done.
    void advance(std::size_t bytes);

  private:
    const strided_layout& layout_;
    std::size_t offset_;
    std::size_t left_;
    std::size_t index_[strided_layout::max_dims] = {};
};

// Copies the box `src_layout` of `src` into the box `dst_layout` of `dst`, element i of one
// into element i of the other in row-major box order. The layouts hold the same number of
// bytes; the boxes do not overlap.
void copy_layout(void* dst, const strided_layout& dst_layout, const void* src, const strided_layout& src_layout);

}  // namespace distdl
