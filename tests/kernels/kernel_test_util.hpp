#pragma once
// Helpers for the kernel tests: seeded test data from verify's generator and a normalised
// comparison (verify's).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/tensor.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

namespace distdl::test {

// A seeded stream of test data, the same on every platform (verify's SplitMix64; std::
// distributions are implementation-defined): integer picks for random geometries and seeds
// for verify::random_tensor, drawn in program order.
class stream {
  public:
    explicit stream(std::uint64_t seed) : seed_(seed) {}
    std::uint64_t operator()() { return verify::derive_seed(seed_, 0, index_++); }

  private:
    std::uint64_t seed_;
    std::uint64_t index_ = 0;
};

// Uniform in [lo, hi] (the modulo bias is below 2^-50 for these small ranges).
inline std::size_t pick(stream& gen, std::size_t lo, std::size_t hi) { return lo + gen() % (hi - lo + 1); }

// verify::random_tensor (entries in [-1, 1), exact in float and double) with the next seed.
template <class T>
tensor<T> random_tensor(const shape_t& shape, stream& gen) {
    return verify::random_tensor<T>(shape, gen());
}

template <class T>
double tolerance() {
    return verify::equivalence_tolerance(dtype_of<T>());
}

// max |a - b| / max |b| (infinite for another shape or a NaN): verify's comparison.
template <class T>
double relative_error(const tensor<T>& a, const tensor<T>& b) {
    return verify::compare_piece(a, b, false, 0.0, "kernel output").relative_error;
}

// How far a kernel's sums are from the exact sums, in units of their rounding bound (a pass
// is <= 1). `exact`: the same sums in double from the same inputs (the reference accumulates in
// double); `magnitude`: the sums of the terms' absolute values (the reference on |inputs|);
// `terms`: the most terms any one sum has. Per element the bound is
//     lambda * sqrt(terms) * (u_T + u_double) * magnitude,   lambda = 8,
// the probabilistic rounding-error bound of a sum or dot product of n terms in any order
// (Higham and Mary, SIAM J. Sci. Comput. 41(5), 2019), which fails with probability at most
// 2n exp(-lambda^2 / 2) < 3e-14 * n per element; u_double covers the rounding of `exact`
// itself. Why not max|got - exact| / max|exact| <= 1e-5: a weight gradient sums thousands of
// products of mixed signs, so one element's rounding scales with sqrt(n) times the sum of the
// |terms|, which may be far larger than the largest result (seen: 2.8e-5 of it, legitimately).
// The worst-case bound n * u * magnitude would hold always but be too loose to catch a missing
// term in long sums; this one catches any error of the size of one term while n < 10^5.
template <class T>
double rounding_ratio(const tensor<T>& got, const tensor<double>& exact, const tensor<double>& magnitude,
                      std::size_t terms) {
    if (shape_of(got) != shape_of(exact) || shape_of(exact) != shape_of(magnitude))
        return std::numeric_limits<double>::infinity();
    constexpr double lambda = 8;
    const double unit = (std::numeric_limits<T>::epsilon() + std::numeric_limits<double>::epsilon()) / 2;
    const double scale = lambda * std::sqrt(static_cast<double>(std::max<std::size_t>(terms, 1))) * unit;
    double worst = 0;
    for (std::size_t i = 0; i < exact.size(); ++i) {
        const double error = std::abs(static_cast<double>(got.data()[i]) - exact.data()[i]);
        if (std::isnan(error)) return std::numeric_limits<double>::infinity();
        if (error == 0) continue;
        const double bound = scale * magnitude.data()[i];
        worst = std::max(worst, bound > 0 ? error / bound : std::numeric_limits<double>::infinity());
    }
    return worst;
}

}  // namespace distdl::test
