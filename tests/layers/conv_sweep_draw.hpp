#pragma once
// The randomized convolution sweeps' draw of one spatial dimension (conv_sweep_test.cpp,
// conv_general_sweep_test.cpp): extent, kernel size, stride, padding and dilation, drawn again
// until the kernel fits the padded extent.
#include <cstddef>

namespace distdl::testing {

struct conv_dimension {
    std::size_t extent, kernel, stride, padding, dilation;
};

// pick(lo, hi): a uniform integer in [lo, hi]. `most`: the largest value of each draw (the
// smallest is 1, and 0 for the padding).
template <class Pick>
conv_dimension draw_conv_dimension(Pick&& pick, const conv_dimension& most) {
    while (true) {
        const std::size_t n = pick(1, most.extent), k = pick(1, most.kernel);
        const std::size_t s = pick(1, most.stride), p = pick(0, most.padding), d = pick(1, most.dilation);
        if (n + 2 * p >= d * (k - 1) + 1) return {n, k, s, p, d};
    }
}

}  // namespace distdl::testing
