#pragma once
// Helpers the runner files share: moving pieces between "indexed by world rank" (what the
// harness passes around) and "indexed by partition rank" (what the reference takes).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/tensor.hpp"
#include "verify/random.hpp"

namespace distdl::verify::runners {

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
// zero-volume {0} elsewhere.
template <class T>
std::vector<tensor<T>> random_on(const std::vector<int>& workers, const shape_t& shape, int world_size,
                                 std::uint64_t seed) {
    std::vector<tensor<T>> out;
    for (std::size_t w = 0; w < static_cast<std::size_t>(world_size); ++w)
        out.push_back(rank_in(workers, w) >= 0 ? random_tensor<T>(shape, derive_seed(seed, input_data, w))
                                               : zero_volume<T>());
    return out;
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

inline std::size_t batch_of(const shape_t& shape) { return shape.empty() ? 0 : shape[0]; }

}  // namespace distdl::verify::runners
