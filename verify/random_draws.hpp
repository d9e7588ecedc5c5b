#pragma once
// The random case generator's draws (random_cases.cpp, random_refusals.cpp): uniform integers,
// choices and worker lists from one SplitMix64 stream, the same on every platform (no std::
// distributions), so that every rank of a job draws the same cases.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

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

}  // namespace distdl::verify
