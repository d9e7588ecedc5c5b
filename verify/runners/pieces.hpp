#pragma once
// Helpers the runner files share: moving pieces between "indexed by world rank" (what the
// harness passes around) and "indexed by partition rank" (what the reference takes).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/tensor.hpp"
#include "verify/case_file.hpp"
#include "verify/random.hpp"

namespace distdl::verify::runners {

// ---- The harness's own meaning of idle outputs and input splits (DESIGN §3) ----
// Written here, not taken from core or the reference, so that a wrong zero-volume shape or a
// wrong remainder placement there cannot agree with itself and pass the case library.

// What a worker holding no piece passes or returns: shape {0}.
template <class T>
tensor<T> no_piece() {
    return tensor<T>(shape_t{0});
}

// What a worker without output returns when the layer keeps the batch: {batch, 0}; else {0}.
template <class T>
tensor<T> idle_piece(std::size_t batch, bool preserve_batch) {
    return preserve_batch ? tensor<T>(shape_t{batch, 0}) : tensor<T>(shape_t{0});
}

// Extents of the pieces of a length-n dimension over `parts` workers, in worker order.
// balanced: n/P each, the first n%P workers one more; unbalanced (case files' "unbalanced"):
// n/P each, worker 0 also every remainder.
inline std::vector<std::size_t> split_extents(std::size_t n, std::size_t parts, input_split kind) {
    std::vector<std::size_t> out(parts, n / parts);
    const std::size_t remainder = n % parts;
    if (kind == input_split::unbalanced) out[0] += remainder;
    else
        for (std::size_t i = 0; i < remainder; ++i) ++out[i];
    return out;
}

// The piece of `global` each worker of a partition of shape `parts` holds (worker r at the
// row-major grid index of r), split along every dimension by split_extents.
template <class T>
std::vector<tensor<T>> split_pieces(const tensor<T>& global, const shape_t& parts, input_split kind) {
    const std::size_t dims = parts.size();
    std::vector<std::vector<std::size_t>> starts(dims), extents(dims);
    for (std::size_t d = 0; d < dims; ++d) {
        extents[d] = split_extents(global.shape()[d], parts[d], kind);
        std::size_t at = 0;
        for (auto e : extents[d]) {
            starts[d].push_back(at);
            at += e;
        }
    }
    std::size_t workers = 1;
    for (auto p : parts) workers *= p;
    std::vector<tensor<T>> out;
    for (std::size_t r = 0; r < workers; ++r) {
        xt::xstrided_slice_vector slices;
        std::size_t rest = r;
        std::vector<std::size_t> index(dims);
        for (std::size_t d = dims; d-- > 0;) {
            index[d] = rest % parts[d];
            rest /= parts[d];
        }
        for (std::size_t d = 0; d < dims; ++d)
            slices.push_back(xt::range(starts[d][index[d]], starts[d][index[d]] + extents[d][index[d]]));
        out.emplace_back(xt::strided_view(global, slices));
    }
    return out;
}

// Position of world rank `w` in `workers`, or -1.
inline int rank_in(const std::vector<int>& workers, std::size_t w) {
    auto it = std::find(workers.begin(), workers.end(), static_cast<int>(w));
    return it == workers.end() ? -1 : static_cast<int>(it - workers.begin());
}

// The pieces of the listed workers, in partition order.
template <class T>
std::vector<tensor<T>> pieces_of(const std::vector<tensor<T>>& by_world, const std::vector<int>& workers) {
    std::vector<tensor<T>> out;
    for (int w : workers) out.push_back(by_world.at(static_cast<std::size_t>(w)));
    return out;
}

// Random pieces of `shape` on the listed workers (independent streams per world rank),
// no_piece() elsewhere.
template <class T>
std::vector<tensor<T>> random_on(const std::vector<int>& workers, const shape_t& shape, int world_size,
                                 std::uint64_t seed) {
    std::vector<tensor<T>> out;
    for (std::size_t w = 0; w < static_cast<std::size_t>(world_size); ++w)
        out.push_back(rank_in(workers, w) >= 0 ? random_tensor<T>(shape, derive_seed(seed, input_data, w))
                                               : no_piece<T>());
    return out;
}

// Pieces of `global` over a partition of shape `parts` with `workers` members; when the
// partition's rank differs from the tensor's (a case the layer must refuse), every worker gets
// the whole tensor, so that the layer, not the harness, decides.
template <class T>
std::vector<tensor<T>> split_or_whole(const tensor<T>& global, const shape_t& parts, input_split kind,
                                      std::size_t workers) {
    if (parts.size() == global.dimension()) return split_pieces(global, parts, kind);
    return std::vector<tensor<T>>(workers, global);
}

// Places partition-ordered pieces at their world ranks; `elsewhere(w)` for the other ranks.
template <class T>
std::vector<tensor<T>> place(const std::vector<tensor<T>>& pieces, const std::vector<int>& workers, int world_size,
                             const std::function<tensor<T>(std::size_t)>& elsewhere) {
    std::vector<tensor<T>> out;
    for (std::size_t w = 0; w < static_cast<std::size_t>(world_size); ++w) {
        const int r = rank_in(workers, w);
        out.push_back(r >= 0 ? pieces[static_cast<std::size_t>(r)] : elsewhere(w));
    }
    return out;
}

// The pieces of `global` split by `kind` over a partition of shape `parts`, at the world ranks of
// its `workers`; no_piece() elsewhere.
template <class T>
std::vector<tensor<T>> split_on(const tensor<T>& global, const shape_t& parts, const std::vector<int>& workers,
                                int world_size, input_split kind = input_split::balanced) {
    return place<T>(split_pieces(global, parts, kind), workers, world_size, [](std::size_t) { return no_piece<T>(); });
}

// A case's input: the global tensor of `shape` drawn from the seed, in pieces over a partition of
// shape `parts` (split_or_whole) at the world ranks of its `workers`; no_piece() elsewhere.
template <class T>
std::vector<tensor<T>> random_input(const shape_t& shape, const shape_t& parts, const std::vector<int>& workers,
                                    int world_size, std::uint64_t seed, input_split kind = input_split::balanced) {
    const tensor<T> global = random_tensor<T>(shape, derive_seed(seed, input_data, 0));
    return place<T>(split_or_whole(global, parts, kind, workers.size()), workers, world_size,
                    [](std::size_t) { return no_piece<T>(); });
}

inline std::size_t batch_of(const shape_t& shape) { return shape.empty() ? 0 : shape[0]; }

}  // namespace distdl::verify::runners
