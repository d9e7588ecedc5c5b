#pragma once
// The random case generator's draws (random_cases.cpp, random_refusals.cpp,
// random_sequential.cpp): uniform integers, choices and worker lists from one SplitMix64 stream,
// the same on every platform (no std:: distributions), so that every rank of a job draws the
// same cases; and the shapes, partitions and geometry constraints those files share.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/halo_exchange.hpp"
#include "verify/random.hpp"

namespace distdl::verify {

// Uniform draws from one SplitMix64 stream (the same on every platform).
class draws {
  public:
    explicit draws(std::uint64_t seed) : state_(seed) {}
    std::size_t between(std::size_t lo, std::size_t hi) {  // lo..hi inclusive
        state_ = mix_seed(state_);
        return lo + std::size_t(state_ % (hi - lo + 1));
    }
    bool one_in(std::size_t n) { return between(1, n) == 1; }
    template <class T>
    T pick(const std::vector<T>& values) {
        return values[between(0, values.size() - 1)];
    }
    // `n` distinct world ranks of 0..world-1, in random order.
    std::vector<int> workers(std::size_t n, std::size_t world) {
        std::vector<int> all(world);
        for (std::size_t r = 0; r < world; ++r) all[r] = int(r);
        for (std::size_t i = 0; i < n; ++i) std::swap(all[i], all[between(i, world - 1)]);
        all.resize(n);
        return all;
    }

  private:
    std::uint64_t state_;
};

namespace random_draws {

using json = nlohmann::json;
using sizes = std::vector<std::size_t>;

inline sizes concat(sizes head, const sizes& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

inline std::size_t product(const sizes& v) {
    std::size_t p = 1;
    for (const std::size_t e : v) p *= e;
    return p;
}

// A partition shape of `rank` dimensions of 1-3 workers each (1 more often), at most `budget`
// workers in all.
inline sizes draw_grid(draws& d, std::size_t rank, std::size_t budget) {
    sizes grid(rank, 1);
    for (std::size_t t = 0; t < rank; ++t) {
        const std::size_t parts = d.pick<std::size_t>({1, 1, 2, 3});
        if (product(grid) * parts <= budget) grid[t] = parts;
    }
    return grid;
}

// The input and output splits of P_w (1-3 each), at most `budget` workers together.
inline std::pair<std::size_t, std::size_t> draw_in_out(draws& d, std::size_t budget) {
    std::size_t p_in = 1, p_out = 1;
    do {
        p_in = d.between(1, 3), p_out = d.between(1, 3);
    } while (p_in * p_out > budget);
    return {p_in, p_out};
}

inline json partition(const std::vector<int>& workers, const sizes& shape) {
    return {{"workers", workers}, {"shape", shape}};
}

// Whether every window of a kernel along a dimension of length n reads an input, not padding
// only (a max pooling's window of padding only gives -inf, which a later convolution makes NaN).
inline bool every_window_reads_input(std::size_t n, std::size_t k, std::size_t s, std::size_t p, std::size_t dil) {
    for (std::size_t o = 0; o < kernel_output_length(n, k, s, p, dil); ++o) {
        bool reads = false;
        for (std::size_t t = 0; t < k; ++t) reads |= o * s + t * dil >= p && o * s + t * dil < p + n;
        if (!reads) return false;
    }
    return true;
}

}  // namespace random_draws

}  // namespace distdl::verify
