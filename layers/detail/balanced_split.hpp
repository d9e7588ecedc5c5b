#pragma once
// Shared by the layers that learn their global input shape from the pieces (convolutions,
// pooling): whether the pieces along one dimension of a worker grid are the balanced split
// (DESIGN §3) of one length, and which worker is the first that is not.
#include <cstddef>
#include <limits>

#include "core/decomposition.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

struct split_along {
    std::size_t length = 0;  // the extents of the workers at index 0 in every other dimension, summed
    std::size_t off = std::numeric_limits<std::size_t>::max();  // first worker off the split (none: max)
    std::size_t want = 0;    // that worker's extent in the balanced split of `length`
    bool balanced() const { return off == std::numeric_limits<std::size_t>::max(); }
};

// `extent(w)`: the extent along dimension d of worker w (row-major index on `grid`).
template <class Extent>
split_along check_balanced_split(const shape_t& grid, std::size_t d, const Extent& extent) {
    split_along s;
    // Row-major: worker w has index w / stride % grid[d] along d (arithmetic, not a multi-index
    // per worker: every worker checks every other, thousands of them on the simulator).
    std::size_t stride = 1;
    for (std::size_t e = d + 1; e < grid.size(); ++e) stride *= grid[e];
    for (std::size_t i = 0; i < grid[d]; ++i) s.length += extent(i * stride);
    const std::size_t workers = volume(grid);
    for (std::size_t w = 0; w < workers; ++w) {
        const std::size_t want = balanced_size(s.length, grid[d], w / stride % grid[d]);
        if (extent(w) != want) {
            s.off = w;
            s.want = want;
            break;
        }
    }
    return s;
}

}  // namespace distdl::detail
