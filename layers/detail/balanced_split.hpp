#pragma once
// Shared by the layers that learn their global input shape from the pieces (convolutions,
// pooling): whether the pieces along one dimension of a worker grid are the balanced split
// (DESIGN §3) of one length, and which worker is the first that is not.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/decomposition.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

struct split_along {
    std::size_t length = 0;  // the length the pieces are the split of (see check_balanced_split)
    std::size_t off = std::numeric_limits<std::size_t>::max();  // first worker off the split (none: max)
    std::size_t want = 0;    // that worker's extent in the balanced split of `length`
    std::vector<std::size_t> line;  // off the split: the extents along d of that worker's line
    bool balanced() const { return off == std::numeric_limits<std::size_t>::max(); }
};

// `extent(w)`: the extent along dimension d of worker w (row-major index on `grid`). The length
// is the sum of the extents of the workers at index 0 in every other dimension when every worker
// matches its balanced split; otherwise the length whose split most workers match, so that the
// worker named is one whose piece differs (2, 2, 3, 2 is 8 with worker 2 off, not 9 with worker
// 0 off; on a grid of lines, the majority of all of them counts, not the first line alone).
template <class Extent>
split_along check_balanced_split(const shape_t& grid, std::size_t d, const Extent& extent) {
    split_along s;
    // Row-major: worker w has index w / stride % grid[d] along d (arithmetic, not a multi-index
    // per worker: every worker checks every other, thousands of them on the simulator).
    std::size_t stride = 1;
    for (std::size_t e = d + 1; e < grid.size(); ++e) stride *= grid[e];
    const std::size_t n = grid[d], workers = volume(grid);
    for (std::size_t i = 0; i < n; ++i) s.length += extent(i * stride);
    const auto index_along = [&](std::size_t w) { return w / stride % n; };
    const auto fits = [&](std::size_t w, std::size_t length) {
        return extent(w) == balanced_size(length, n, index_along(w));
    };
    const auto first_off = [&](std::size_t length) {
        for (std::size_t w = 0; w < workers; ++w)
            if (!fits(w, length)) return w;
        return std::numeric_limits<std::size_t>::max();
    };
    s.off = first_off(s.length);
    if (s.balanced()) return s;

    // Error path. A balanced split has two extents, q + 1 (the first r) and q: the two most
    // frequent extents (and one less) are the candidates for q; for each, the r that most
    // workers match, counted per index along d.
    std::vector<std::size_t> sorted(workers);
    for (std::size_t w = 0; w < workers; ++w) sorted[w] = extent(w);
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::pair<std::size_t, std::size_t>> runs;  // (count, extent)
    for (std::size_t i = 0; i < workers;) {
        std::size_t j = i;
        while (j < workers && sorted[j] == sorted[i]) ++j;
        runs.emplace_back(j - i, sorted[i]);
        i = j;
    }
    std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {  // most frequent, then smallest
        return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    const auto matches_of = [&](std::size_t length) {
        std::size_t m = 0;
        for (std::size_t w = 0; w < workers; ++w) m += fits(w, length);
        return m;
    };
    std::size_t best = matches_of(s.length);
    std::vector<std::size_t> upper(n), lower(n);  // per index: workers with q + 1, with q
    for (std::size_t k = 0; k < std::min<std::size_t>(runs.size(), 2); ++k)
        for (const std::size_t q : {runs[k].second, runs[k].second - 1}) {
            if (q == std::numeric_limits<std::size_t>::max()) continue;  // 0 - 1
            std::fill(upper.begin(), upper.end(), 0);
            std::fill(lower.begin(), lower.end(), 0);
            for (std::size_t w = 0; w < workers; ++w) {
                const std::size_t e = extent(w), i = index_along(w);
                upper[i] += e == q + 1;
                lower[i] += e == q;
            }
            std::size_t head = 0, tail = 0;  // matches of the indices below r (q + 1), from r on (q)
            for (std::size_t i = 0; i < n; ++i) tail += lower[i];
            for (std::size_t r = 0; r < n; ++r) {
                std::size_t length = 0;
                if (head + tail > best && !__builtin_mul_overflow(q, n, &length) &&
                    !__builtin_add_overflow(length, r, &length)) {
                    best = head + tail;
                    s.length = length;
                }
                head += upper[r];
                tail -= lower[r];
            }
        }
    s.off = first_off(s.length);
    if (!s.balanced()) {
        s.want = balanced_size(s.length, n, index_along(s.off));
        const std::size_t first = s.off - index_along(s.off) * stride;
        for (std::size_t i = 0; i < n; ++i) s.line.push_back(extent(first + i * stride));
    }
    return s;
}

// Why pieces off the split are refused, to follow "the pieces along dimension d are not ": the
// worker's line with the split of its sum, and the length most pieces fit where that differs
// (pieces [5,3] beside lines of [3,3] are off the split of 6, not of their own sum 8).
inline std::string unbalanced_reason(const split_along& s) {
    std::size_t sum = 0;
    bool overflow = false;
    for (std::size_t e : s.line) overflow |= __builtin_add_overflow(sum, e, &sum);
    std::ostringstream out;
    out << "a balanced split: its line along that dimension has extents " << format_list(s.line);
    std::vector<std::size_t> split;
    for (std::size_t i = 0; !overflow && i < s.line.size(); ++i) split.push_back(balanced_size(sum, s.line.size(), i));
    if (!overflow && split == s.line) {  // balanced by itself: the lines disagree with each other
        out << ", the balanced split of " << sum << ", but every line along it must split the same length, and the "
            << "most pieces fit the balanced split of " << s.length << ", which gives it extent " << s.want;
        return out.str();
    }
    if (!overflow)
        out << ", and the balanced split of their sum " << sum << " over " << s.line.size() << " is "
            << format_list(split);
    if (overflow || sum != s.length)
        out << "; the most pieces fit the balanced split of " << s.length << ", which gives it extent " << s.want;
    else
        out << " (expected extent " << s.want << ")";
    return out.str();
}

}  // namespace distdl::detail
