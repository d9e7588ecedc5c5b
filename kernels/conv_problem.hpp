#pragma once
// Internal: one convolution call lifted to three spatial dimensions (leading dimensions of
// extent 1 for 1-d and 2-d), with signed padding so a negative padding (cropping) is allowed —
// the stride-1 backward-data pass runs as a forward convolution with padding d(k−1) − p.
#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/conv_geometry.hpp"

namespace distdl::kernels::detail {

struct conv_problem {
    std::int64_t N = 0, C_in = 0, C_out = 0;
    std::array<std::int64_t, 3> L{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1}, m{1, 1, 1};

    std::int64_t in_volume() const { return L[0] * L[1] * L[2]; }
    std::int64_t out_volume() const { return m[0] * m[1] * m[2]; }
    std::int64_t kernel_volume() const { return k[0] * k[1] * k[2]; }
};

inline conv_problem lift(const conv_geometry& g, const shape_t& x_shape, const shape_t& y_shape) {
    conv_problem c;
    const std::size_t dims = g.kernel_size.size();
    c.N = std::int64_t(x_shape[0]);
    c.C_in = std::int64_t(g.in_channels);
    c.C_out = std::int64_t(g.out_channels);
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t a = 3 - dims + e;
        c.L[a] = std::int64_t(x_shape[e + 2]);
        c.m[a] = std::int64_t(y_shape[e + 2]);
        c.k[a] = std::int64_t(g.kernel_size[e]);
        c.s[a] = std::int64_t(g.stride[e]);
        c.p[a] = std::int64_t(g.padding[e]);
        c.d[a] = std::int64_t(g.dilation[e]);
    }
    return c;
}

}  // namespace distdl::kernels::detail
