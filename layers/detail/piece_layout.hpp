#pragma once
// Agreement on the layout of the pieces of P_x when no global shape is given (the pooling
// layers without pool_options::input_shape, Flatten): every worker of P_x shares its piece's
// shape (one all-gather) and every worker judges all of them alike, so a bad piece is refused on
// every worker with the same text. The pieces must be the balanced split (DESIGN §3) of one
// global shape along every dimension, of P_x's rank (at most 5).
#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "core/decomposition.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "layers/detail/balanced_split.hpp"

namespace distdl {

// Returns the problem (empty: none); on success `global` is the global input shape. `dims` says
// what the dimensions are, for the message (e.g. "N × C × 2 spatial extents").
inline std::string agree_on_piece_layout(const cartesian_partition& P_x, const std::string& name, const shape_t& piece,
                                         shape_t& global, const std::string& dims) {
    constexpr std::size_t words = 6;  // the rank, then up to 5 extents
    std::array<std::uint64_t, words> mine{};
    mine[0] = piece.size();
    for (std::size_t t = 0; t < piece.size() && t + 1 < words; ++t) mine[t + 1] = piece[t];
    const auto all = P_x.allgather_data(mine);
    const shape_t& grid = P_x.shape();
    const std::size_t rank = grid.size();
    const auto extent = [&](std::size_t w, std::size_t t) { return std::size_t(all[w][t + 1]); };
    const auto worker = [&](std::size_t w) {
        std::ostringstream out;
        out << name << ": x on P_x " << P_x.worker_name(w) << " has shape ";
        if (all[w][0] + 1 > words) out << "of rank " << all[w][0];
        else
            out << format_piece_shape(
                std::vector<std::uint64_t>(all[w].begin() + 1, all[w].begin() + 1 + std::ptrdiff_t(all[w][0])));
        return out.str();
    };
    for (std::size_t w = 0; w < all.size(); ++w)
        if (all[w][0] != rank)
            return worker(w) + ", expected " + std::to_string(rank) + " dimensions (" + dims + ", as P_x " +
                   format_list(grid) + ")";
    global.assign(rank, 0);
    for (std::size_t t = 0; t < rank; ++t) {
        const auto split = detail::check_balanced_split(grid, t, [&](std::size_t w) { return extent(w, t); });
        global[t] = split.length;
        if (!split.balanced())
            return worker(split.off) + ", but the pieces along dimension " + std::to_string(t) + " are not " +
                   detail::unbalanced_reason(split);
    }
    return {};
}

}  // namespace distdl
