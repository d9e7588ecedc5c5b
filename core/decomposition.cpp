#include "core/decomposition.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace distdl {

std::size_t balanced_size(std::size_t n, std::size_t parts, std::size_t i) {
    DISTDL_REQUIRE(parts > 0, "balanced_size: cannot split over 0 parts");
    DISTDL_REQUIRE(i < parts, "balanced_size: part " << i << " out of range for " << parts << " parts");
    return n / parts + (i < n % parts ? 1 : 0);
}

std::size_t balanced_start(std::size_t n, std::size_t parts, std::size_t i) {
    DISTDL_REQUIRE(parts > 0, "balanced_start: cannot split over 0 parts");
    DISTDL_REQUIRE(i <= parts, "balanced_start: part " << i << " out of range for " << parts << " parts");
    return (n / parts) * i + std::min(i, n % parts);
}

std::size_t balanced_stop(std::size_t n, std::size_t parts, std::size_t i) {
    return balanced_start(n, parts, i) + balanced_size(n, parts, i);
}

std::vector<std::size_t> balanced_sizes(std::size_t n, std::size_t parts) {
    std::vector<std::size_t> sizes(parts);
    for (std::size_t i = 0; i < parts; ++i) sizes[i] = balanced_size(n, parts, i);
    return sizes;
}

shape_t index_box::extent() const {
    shape_t e(rank());
    for (std::size_t d = 0; d < rank(); ++d) e[d] = stop[d] > start[d] ? stop[d] - start[d] : 0;
    return e;
}

std::size_t index_box::volume() const { return distdl::volume(extent()); }

bool index_box::operator==(const index_box& other) const {
    return start == other.start && stop == other.stop;
}

index_box balanced_box(const shape_t& shape, const shape_t& parts, const shape_t& index) {
    DISTDL_REQUIRE(shape.size() == parts.size() && parts.size() == index.size(),
                   "balanced_box: tensor shape " << format_list(shape) << ", partition shape "
                                                 << format_list(parts) << " and index " << format_list(index)
                                                 << " must have the same length");
    index_box box{shape_t(shape.size()), shape_t(shape.size())};
    for (std::size_t d = 0; d < shape.size(); ++d) {
        box.start[d] = balanced_start(shape[d], parts[d], index[d]);
        box.stop[d] = balanced_stop(shape[d], parts[d], index[d]);
    }
    return box;
}

index_box intersect(const index_box& a, const index_box& b) {
    DISTDL_REQUIRE(a.rank() == b.rank(), "intersect: boxes of rank " << a.rank() << " and " << b.rank());
    index_box r{shape_t(a.rank()), shape_t(a.rank())};
    for (std::size_t d = 0; d < a.rank(); ++d) {
        r.start[d] = std::max(a.start[d], b.start[d]);
        r.stop[d] = std::max(r.start[d], std::min(a.stop[d], b.stop[d]));
    }
    return r;
}

index_box relative_to(const index_box& inner, const index_box& outer) {
    DISTDL_REQUIRE(inner.rank() == outer.rank(), "relative_to: boxes of rank " << inner.rank() << " and " << outer.rank());
    index_box r = inner;
    for (std::size_t d = 0; d < inner.rank(); ++d) {
        DISTDL_REQUIRE(inner.start[d] >= outer.start[d] && inner.stop[d] <= outer.stop[d],
                       "relative_to: box does not lie inside its outer box in dimension " << d);
        r.start[d] -= outer.start[d];
        r.stop[d] -= outer.start[d];
    }
    return r;
}

namespace {

// [first, last) of the parts i < parts with start_of(i + 1) > start and start_of(i) < stop,
// for a non-decreasing start_of over 0..parts.
template <class StartOf>
std::pair<std::size_t, std::size_t> meeting(std::size_t parts, std::size_t start, std::size_t stop, StartOf start_of) {
    if (start >= stop) return {0, 0};
    std::size_t lo = 0, hi = parts;  // first part whose stop exceeds start
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (start_of(mid + 1) > start) hi = mid;
        else lo = mid + 1;
    }
    const std::size_t first = lo;
    hi = parts;  // first part that starts at or after stop
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (start_of(mid) >= stop) hi = mid;
        else lo = mid + 1;
    }
    return {first, std::max(first, lo)};
}

}  // namespace

std::pair<std::size_t, std::size_t> parts_meeting(const shape_t& offsets, std::size_t start, std::size_t stop) {
    DISTDL_REQUIRE(!offsets.empty(), "parts_meeting: offsets need one entry more than the parts, got none");
    return meeting(offsets.size() - 1, start, stop, [&](std::size_t i) { return offsets[i]; });
}

std::pair<std::size_t, std::size_t> balanced_parts_meeting(std::size_t n, std::size_t parts, std::size_t start,
                                                           std::size_t stop) {
    DISTDL_REQUIRE(parts > 0, "balanced_parts_meeting: cannot split over 0 parts");
    return meeting(parts, start, stop, [&](std::size_t i) { return (n / parts) * i + std::min(i, n % parts); });
}

std::size_t ravel_index(const shape_t& index, const shape_t& shape) {
    DISTDL_REQUIRE(index.size() == shape.size(), "ravel_index: index " << format_list(index) << " for shape " << format_list(shape));
    std::size_t flat = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        DISTDL_REQUIRE(index[d] < shape[d], "ravel_index: index " << format_list(index) << " outside shape " << format_list(shape));
        flat = flat * shape[d] + index[d];
    }
    return flat;
}

shape_t unravel_index(std::size_t flat, const shape_t& shape) {
    DISTDL_REQUIRE(flat < volume(shape), "unravel_index: " << flat << " outside shape " << format_list(shape));
    shape_t index(shape.size());
    for (std::size_t d = shape.size(); d-- > 0;) {
        index[d] = flat % shape[d];
        flat /= shape[d];
    }
    return index;
}

}  // namespace distdl
