#pragma once
// Shared by the layers that learn their global input shape from the pieces (convolutions,
// pooling): whether the pieces along one dimension of a worker grid are the balanced split
// (DESIGN §3) of one length, and which worker is the first that is not.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include "core/decomposition.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

struct split_along {
    std::size_t length = 0;  // the length the pieces are the split of (see check_balanced_split)
    std::size_t off = std::numeric_limits<std::size_t>::max();  // first worker off the split (none: max)
    std::size_t want = 0;    // that worker's extent in the balanced split of `length`
    bool balanced() const { return off == std::numeric_limits<std::size_t>::max(); }
};

// How many of `line` (the extents along one dimension) match the balanced split of q * n + r
// (q + 1 for the first r, q for the others), for every r in [0, n).
inline std::vector<std::size_t> split_matches(const std::vector<std::size_t>& line, std::size_t q) {
    const std::size_t n = line.size();
    std::vector<std::size_t> matches(n, 0);
    std::size_t tail = 0;  // workers r.. with q
    for (std::size_t w = 0; w < n; ++w) tail += line[w] == q;
    std::size_t head = 0;  // workers ..r-1 with q + 1
    for (std::size_t r = 0; r < n; ++r) {
        matches[r] = head + tail;
        head += line[r] == q + 1;
        tail -= line[r] == q;
    }
    return matches;
}

// `extent(w)`: the extent along dimension d of worker w (row-major index on `grid`). The length
// is that of the workers at index 0 in every other dimension: their sum when they are its
// balanced split; otherwise the length whose split most of them match, so that the worker named
// is the one whose piece differs (2, 2, 3, 2 is 8 with worker 2 off, not 9 with worker 0 off).
template <class Extent>
split_along check_balanced_split(const shape_t& grid, std::size_t d, const Extent& extent) {
    split_along s;
    // Row-major: worker w has index w / stride % grid[d] along d (arithmetic, not a multi-index
    // per worker: every worker checks every other, thousands of them on the simulator).
    std::size_t stride = 1;
    for (std::size_t e = d + 1; e < grid.size(); ++e) stride *= grid[e];
    const std::size_t n = grid[d];
    std::vector<std::size_t> line(n);
    for (std::size_t i = 0; i < n; ++i) {
        line[i] = extent(i * stride);
        s.length += line[i];
    }
    std::size_t best = 0;
    for (std::size_t i = 0; i < n; ++i) best += line[i] == balanced_size(s.length, n, i);
    if (best < n) {
        // A balanced split has at most two extents, q and q + 1: the two most frequent ones on
        // the line (and one less) are the candidates for q (error path only).
        std::vector<std::size_t> sorted = line;
        std::sort(sorted.begin(), sorted.end());
        std::vector<std::pair<std::size_t, std::size_t>> runs;  // (count, extent)
        for (std::size_t i = 0; i < n;) {
            std::size_t j = i;
            while (j < n && sorted[j] == sorted[i]) ++j;
            runs.emplace_back(j - i, sorted[i]);
            i = j;
        }
        std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {  // most frequent, then smallest
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        for (std::size_t k = 0; k < std::min<std::size_t>(runs.size(), 2); ++k)
            for (const std::size_t q : {runs[k].second, runs[k].second - 1}) {
                if (q == std::numeric_limits<std::size_t>::max()) continue;  // 0 - 1
                const auto matches = split_matches(line, q);
                for (std::size_t r = 0; r < n; ++r) {
                    std::size_t length = 0;
                    if (matches[r] <= best || __builtin_mul_overflow(q, n, &length) ||
                        __builtin_add_overflow(length, r, &length))
                        continue;
                    best = matches[r];
                    s.length = length;
                }
            }
    }
    const std::size_t workers = volume(grid);
    for (std::size_t w = 0; w < workers; ++w) {
        const std::size_t want = balanced_size(s.length, n, w / stride % n);
        if (extent(w) != want) {
            s.off = w;
            s.want = want;
            break;
        }
    }
    return s;
}

}  // namespace distdl::detail
