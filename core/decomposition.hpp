#pragma once
// Balanced decomposition: how a length-n dimension is split over P workers, and boxes of
// global indices ([start, stop) per dimension) with their intersections.
#include <cstddef>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace distdl {

// Worker i of P gets n/P elements, plus one if i < n%P (the first n%P workers get the extra).
std::size_t balanced_size(std::size_t n, std::size_t parts, std::size_t i);
std::size_t balanced_start(std::size_t n, std::size_t parts, std::size_t i);
std::size_t balanced_stop(std::size_t n, std::size_t parts, std::size_t i);
std::vector<std::size_t> balanced_sizes(std::size_t n, std::size_t parts);

// A box of global indices: [start[d], stop[d]) in every dimension d.
struct index_box {
    shape_t start;
    shape_t stop;

    std::size_t rank() const { return start.size(); }
    shape_t extent() const;
    std::size_t volume() const;
    bool empty() const { return volume() == 0; }
    bool operator==(const index_box& other) const;
    bool operator!=(const index_box& other) const { return !(*this == other); }
};

// The box of global `shape` that worker `index` of a `parts`-shaped partition owns.
index_box balanced_box(const shape_t& shape, const shape_t& parts, const shape_t& index);

// Overlap of two boxes of the same rank (possibly empty: stop clamped to start).
index_box intersect(const index_box& a, const index_box& b);

// `inner` relative to the origin of `outer` (inner must lie inside outer).
index_box relative_to(const index_box& inner, const index_box& outer);

// The parts of a dimension that meet [start, stop), as the half-open range [first, last) of
// part indices (first == last: none), by binary search: planning then visits only a worker's
// own peers instead of every worker. The range may include parts of extent 0.
// Part i is [offsets[i], offsets[i + 1]) (offsets ascending, one more entry than parts).
std::pair<std::size_t, std::size_t> parts_meeting(const shape_t& offsets, std::size_t start, std::size_t stop);
// The same for a balanced split of length n over `parts` (part i starts at balanced_start).
std::pair<std::size_t, std::size_t> balanced_parts_meeting(std::size_t n, std::size_t parts, std::size_t start,
                                                           std::size_t stop);

// The range [first, last) from the first to the last part i < parts for which meets(i) holds
// (first == last: none), by a scan. It holds every such part, so visiting the range and
// checking each part is exact; where the parts' intervals ascend along a dimension (a kernel's
// windows over a balanced split), the range is just the parts that meet a given interval and
// maybe some empty ones between them.
template <class Meets>
std::pair<std::size_t, std::size_t> parts_where(std::size_t parts, Meets meets) {
    std::size_t first = 0, last = parts;
    while (first < parts && !meets(first)) ++first;
    while (last > first && !meets(last - 1)) --last;
    return {first, last};
}

// Calls visit(flat) for every index of the box [first[d], last[d]) of a row-major grid of
// `shape`, in increasing flat order (nothing when the box is empty).
template <class Visit>
void for_each_grid_index(const shape_t& first, const shape_t& last, const shape_t& shape, Visit visit) {
    const std::size_t dims = shape.size();
    for (std::size_t d = 0; d < dims; ++d)
        if (first[d] >= last[d]) return;
    shape_t at = first;
    for (;;) {
        std::size_t flat = 0;
        for (std::size_t d = 0; d < dims; ++d) flat = flat * shape[d] + at[d];
        visit(flat);
        std::size_t d = dims;
        while (d-- > 0) {
            if (++at[d] < last[d]) break;
            at[d] = first[d];
        }
        if (d == static_cast<std::size_t>(-1)) return;
    }
}

// Row-major flat index <-> multi-index in `shape`.
std::size_t ravel_index(const shape_t& index, const shape_t& shape);
shape_t unravel_index(std::size_t flat, const shape_t& shape);

}  // namespace distdl
