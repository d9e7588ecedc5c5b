#pragma once
// Worker placements and refused calls shared by the randomized sweeps of the layers with three
// partitions (conv_general_sweep_test.cpp, linear_sweep_test.cpp).
#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/module.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::testing {

// `count` distinct ranks of a world of `world`, in random order.
inline std::vector<int> random_workers(std::mt19937_64& rng, std::size_t world, std::size_t count) {
    std::vector<int> all(world);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), rng);
    all.resize(count);
    return all;
}

// A refused call between two good ones: worker `refuser` of P_x gives x (kind x_piece), or of
// P_y gives dy (kind dy_piece), with one channel or feature (dimension 1) too many.
struct refusal {
    enum kind_t { none, x_piece, dy_piece } kind = none;
    std::size_t refuser = 0;
    // "x on P_x worker 2 (world rank 5)": what every worker's message must name.
    std::string names(const std::vector<int>& x_workers, const std::vector<int>& y_workers) const {
        const int rank = (kind == x_piece ? x_workers : y_workers)[refuser];
        return (kind == x_piece ? "x on P_x worker " : "dy on P_y worker ") + std::to_string(refuser) +
               " (world rank " + std::to_string(rank) + ")";
    }
};

// The refused call on this worker (P_x index px, P_y index py; -1: not in it) with the good
// pieces x and dy of every worker; returns what it threw (empty: nothing).
template <class T>
std::string refused_call(module<T>& layer, const std::vector<tensor<T>>& x, const std::vector<tensor<T>>& dy, int px,
                         int py, const refusal& r) {
    auto piece = [&](const std::vector<tensor<T>>& pieces, int at, bool bad) {
        if (at < 0) return zero_volume<T>();
        if (!bad) return pieces[std::size_t(at)];
        shape_t shape = shape_of(pieces[std::size_t(at)]);
        ++shape[1];
        return tensor<T>(shape, T(1));
    };
    tensor<T> y, dx;
    try {
        layer.forward(piece(x, px, r.kind == refusal::x_piece && px == int(r.refuser)), y);
        if (r.kind == refusal::dy_piece) layer.adjoint(piece(dy, py, py == int(r.refuser)), dx);
    } catch (const invalid_argument& error) {
        return error.what();
    }
    return {};
}

// Whether the refused call threw the same message, naming the refusing worker, on every worker
// of the layer (P_x, P_y and P_w together) and nothing elsewhere (empty: so). thrown: by rank.
inline std::string refusal_problem(const refusal& r, const std::vector<int>& x_workers,
                                   const std::vector<int>& y_workers, const std::vector<int>& w_workers,
                                   const std::vector<std::string>& thrown) {
    const std::string names = r.names(x_workers, y_workers);
    const auto refuser = std::size_t((r.kind == refusal::x_piece ? x_workers : y_workers)[r.refuser]);
    for (std::size_t w = 0; w < thrown.size(); ++w) {
        using verify::runners::rank_in;
        const bool in_layer = rank_in(x_workers, w) >= 0 || rank_in(y_workers, w) >= 0 || rank_in(w_workers, w) >= 0;
        if (!in_layer) {
            if (!thrown[w].empty()) return "worker " + std::to_string(w) + " outside the layer threw " + thrown[w];
            continue;
        }
        if (thrown[w].find(names) == std::string::npos)
            return "worker " + std::to_string(w) + " threw \"" + thrown[w] + "\", which does not name " + names;
        if (thrown[w] != thrown[refuser])
            return "worker " + std::to_string(w) + " threw \"" + thrown[w] + "\", the refusing worker \"" +
                   thrown[refuser] + "\"";
    }
    return {};
}

}  // namespace distdl::testing
