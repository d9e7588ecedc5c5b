#include "kernels/pooling.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace distdl::kernels {

namespace {

std::vector<std::size_t> expand(const std::vector<std::size_t>& v, std::size_t dims,
                                const std::vector<std::size_t>& fallback, const char* what, const char* layer) {
    if (v.empty()) return fallback;
    if (v.size() == 1) return std::vector<std::size_t>(dims, v[0]);
    DISTDL_REQUIRE(v.size() == dims, layer << ": " << what << " " << format_list(v) << " has " << v.size()
                                           << " entries, expected 1 or " << dims);
    return v;
}

pool_geometry normalize(const pool_geometry& g, const char* layer, bool dilation_allowed) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(dims >= 1 && dims <= 3,
                   layer << ": kernel_size " << format_list(g.kernel_size) << " must have 1, 2 or 3 entries");
    pool_geometry out;
    out.kernel_size = g.kernel_size;
    out.stride = expand(g.stride, dims, g.kernel_size, "stride", layer);
    out.padding = expand(g.padding, dims, std::vector<std::size_t>(dims, 0), "padding", layer);
    out.dilation = expand(g.dilation, dims, std::vector<std::size_t>(dims, 1), "dilation", layer);
    for (std::size_t e = 0; e < dims; ++e) {
        DISTDL_REQUIRE(out.kernel_size[e] >= 1 && out.stride[e] >= 1 && out.dilation[e] >= 1,
                       layer << ": kernel_size " << format_list(out.kernel_size) << ", stride "
                             << format_list(out.stride) << ", dilation " << format_list(out.dilation)
                             << " must all be at least 1");
        DISTDL_REQUIRE(dilation_allowed || out.dilation[e] == 1,
                       layer << ": dilation " << format_list(out.dilation) << " given, expected 1");
    }
    return out;
}

shape_t output_shape_of(const pool_geometry& g, const shape_t& x_shape, const char* layer) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(x_shape.size() == dims + 2, layer << ": input shape " << format_list(x_shape) << ", expected N × C × "
                                                     << dims << " spatial extents");
    shape_t out{x_shape[0], x_shape[1]};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t span = g.dilation[e] * (g.kernel_size[e] - 1) + 1;
        const std::size_t padded = x_shape[e + 2] + 2 * g.padding[e];
        DISTDL_REQUIRE(padded >= span, layer << ": kernel " << g.kernel_size[e] << " with dilation " << g.dilation[e]
                                             << " does not fit in spatial dimension " << e << " of input shape "
                                             << format_list(x_shape) << " with padding " << g.padding[e]);
        out.push_back((padded - span) / g.stride[e] + 1);
    }
    return out;
}

// The problem lifted to three spatial dimensions, with the valid kernel offsets [lo, hi) of
// every output index j precomputed per dimension (input index s·j + d·t − p inside [0, L)).
struct pool_plan {
    std::int64_t planes = 0;  // N · C
    std::array<std::int64_t, 3> L{1, 1, 1}, m{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1}, k{1, 1, 1};
    std::array<std::vector<std::int64_t>, 3> lo, hi;

    pool_plan(const pool_geometry& g, const shape_t& x_shape, const shape_t& y_shape) {
        const std::size_t dims = g.kernel_size.size();
        planes = std::int64_t(x_shape[0] * x_shape[1]);
        for (std::size_t e = 0; e < dims; ++e) {
            const std::size_t a = 3 - dims + e;
            L[a] = std::int64_t(x_shape[e + 2]);
            m[a] = std::int64_t(y_shape[e + 2]);
            k[a] = std::int64_t(g.kernel_size[e]);
            s[a] = std::int64_t(g.stride[e]);
            p[a] = std::int64_t(g.padding[e]);
            d[a] = std::int64_t(g.dilation[e]);
        }
        for (int a = 0; a < 3; ++a) {
            lo[a].resize(std::size_t(m[a]));
            hi[a].resize(std::size_t(m[a]));
            for (std::int64_t j = 0; j < m[a]; ++j) {
                const std::int64_t base = s[a] * j - p[a];  // input index of t = 0
                std::int64_t l = base >= 0 ? 0 : (-base + d[a] - 1) / d[a];
                std::int64_t h = L[a] - 1 - base < 0 ? 0 : (L[a] - 1 - base) / d[a] + 1;
                l = std::min(l, k[a]);
                h = std::min(std::max(h, l), k[a]);
                lo[a][std::size_t(j)] = l;
                hi[a][std::size_t(j)] = h;
            }
        }
    }
    std::int64_t in_volume() const { return L[0] * L[1] * L[2]; }
    std::int64_t out_volume() const { return m[0] * m[1] * m[2]; }
    std::int64_t index(int a, std::int64_t j, std::int64_t t) const { return s[a] * j + d[a] * t - p[a]; }
};

// Row-wise walk of one plane: for every output row (j0, j1) — begin(q_row) first, end(q_row)
// last — and every valid kernel offset (t0, t1, t2) of that row in row-major order, calls
// tap(q_row, base, j_lo, j_hi): output entries q_row + j2 for j2 in [j_lo, j_hi) read the input
// at offset base + s2·j2. Per output entry, the taps come in row-major window order.
template <class Begin, class Tap, class End>
void for_each_row_tap(const pool_plan& c, Begin&& begin, Tap&& tap, End&& end) {
    // Valid j2 range of every t2: 0 <= s2·j2 + d2·t2 − p2 < L2.
    std::vector<std::int64_t> j_lo(std::size_t(c.k[2])), j_hi(std::size_t(c.k[2]));
    for (std::int64_t t2 = 0; t2 < c.k[2]; ++t2) {
        const std::int64_t off = c.d[2] * t2 - c.p[2];
        std::int64_t lo = off >= 0 ? 0 : (-off + c.s[2] - 1) / c.s[2];
        std::int64_t hi = c.L[2] - 1 - off < 0 ? 0 : (c.L[2] - 1 - off) / c.s[2] + 1;
        lo = std::min(lo, c.m[2]);
        j_lo[std::size_t(t2)] = lo;
        j_hi[std::size_t(t2)] = std::min(std::max(hi, lo), c.m[2]);
    }
    for (std::int64_t j0 = 0; j0 < c.m[0]; ++j0)
        for (std::int64_t j1 = 0; j1 < c.m[1]; ++j1) {
            const std::int64_t q_row = (j0 * c.m[1] + j1) * c.m[2];
            begin(q_row);
            for (std::int64_t t0 = c.lo[0][j0]; t0 < c.hi[0][j0]; ++t0)
                for (std::int64_t t1 = c.lo[1][j1]; t1 < c.hi[1][j1]; ++t1) {
                    const std::int64_t row = (c.index(0, j0, t0) * c.L[1] + c.index(1, j1, t1)) * c.L[2];
                    for (std::int64_t t2 = 0; t2 < c.k[2]; ++t2)
                        tap(q_row, row + c.d[2] * t2 - c.p[2], j_lo[std::size_t(t2)], j_hi[std::size_t(t2)]);
                }
            end(q_row);
        }
}

}  // namespace

template <class T>
max_pool<T>::max_pool(const pool_geometry& geometry) : g_(normalize(geometry, "kernels::max_pool", true)) {}

template <class T>
shape_t max_pool<T>::output_shape(const shape_t& x_shape) const {
    return output_shape_of(g_, x_shape, "kernels::max_pool");
}

template <class T>
void max_pool<T>::forward(const tensor<T>& x, tensor<T>& y) const {
    const shape_t x_shape = shape_of(x), y_shape = output_shape(x_shape);
    if (shape_of(y) != y_shape) y.resize(y_shape);
    const pool_plan c(g_, x_shape, y_shape);
    const std::int64_t V = c.in_volume(), M = c.out_volume();
    for (std::int64_t plane = 0; plane < c.planes; ++plane) {
        const T* in = x.data() + plane * V;
        T* out = y.data() + plane * M;
        const std::int64_t stride = c.s[2];
        // Padding is −∞; ties do not matter for the value.
        for_each_row_tap(
            c, [&](std::int64_t q_row) { std::fill_n(out + q_row, c.m[2], -std::numeric_limits<T>::infinity()); },
            [&](std::int64_t q_row, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                T* o = out + q_row;
                const T* src = in + base;
                for (std::int64_t j = lo; j < hi; ++j) o[j] = src[stride * j] > o[j] ? src[stride * j] : o[j];
            },
            [](std::int64_t) {});
    }
}

template <class T>
void max_pool<T>::backward(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dx) const {
    const shape_t x_shape = shape_of(x), y_shape = output_shape(x_shape);
    DISTDL_REQUIRE(shape_of(dy) == y_shape, "kernels::max_pool::backward: output gradient shape "
                                                << format_list(dy.shape()) << ", expected " << format_list(y_shape));
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    std::fill(dx.begin(), dx.end(), T(0));
    const pool_plan c(g_, x_shape, y_shape);
    const std::int64_t V = c.in_volume(), M = c.out_volume();
    std::vector<std::int64_t> at(std::size_t(c.m[2]));
    for (std::int64_t plane = 0; plane < c.planes; ++plane) {
        const T* in = x.data() + plane * V;
        const T* grad = dy.data() + plane * M;
        T* out = dx.data() + plane * V;
        const std::int64_t stride = c.s[2];
        // Per output entry of the row: the first maximum so far (strictly greater replaces it).
        for_each_row_tap(
            c, [&](std::int64_t) { std::fill(at.begin(), at.end(), std::int64_t(-1)); },
            [&](std::int64_t, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                for (std::int64_t j = lo; j < hi; ++j) {
                    const std::int64_t i = base + stride * j;
                    if (at[std::size_t(j)] < 0 || in[i] > in[at[std::size_t(j)]]) at[std::size_t(j)] = i;
                }
            },
            [&](std::int64_t q_row) {
                for (std::int64_t j = 0; j < c.m[2]; ++j)
                    if (at[std::size_t(j)] >= 0) out[at[std::size_t(j)]] += grad[q_row + j];
            });
    }
}

template <class T>
avg_pool<T>::avg_pool(const pool_geometry& geometry) : g_(normalize(geometry, "kernels::avg_pool", false)) {}

template <class T>
shape_t avg_pool<T>::output_shape(const shape_t& x_shape) const {
    return output_shape_of(g_, x_shape, "kernels::avg_pool");
}

template <class T>
void avg_pool<T>::forward(const tensor<T>& x, tensor<T>& y) const {
    const shape_t x_shape = shape_of(x), y_shape = output_shape(x_shape);
    if (shape_of(y) != y_shape) y.resize(y_shape);
    const pool_plan c(g_, x_shape, y_shape);
    const std::int64_t V = c.in_volume(), M = c.out_volume();
    const T scale = T(1) / T(c.k[0] * c.k[1] * c.k[2]);  // padding counts (count_include_pad)
    for (std::int64_t plane = 0; plane < c.planes; ++plane) {
        const T* in = x.data() + plane * V;
        T* out = y.data() + plane * M;
        const std::int64_t stride = c.s[2];
        for_each_row_tap(
            c, [&](std::int64_t q_row) { std::fill_n(out + q_row, c.m[2], T(0)); },
            [&](std::int64_t q_row, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                T* o = out + q_row;
                const T* src = in + base;
                for (std::int64_t j = lo; j < hi; ++j) o[j] += src[stride * j];
            },
            [&](std::int64_t q_row) {
                for (std::int64_t j = 0; j < c.m[2]; ++j) out[q_row + j] *= scale;
            });
    }
}

template <class T>
void avg_pool<T>::backward(const tensor<T>& dy, const shape_t& x_shape, tensor<T>& dx) const {
    const shape_t y_shape = output_shape(x_shape);
    DISTDL_REQUIRE(shape_of(dy) == y_shape, "kernels::avg_pool::backward: output gradient shape "
                                                << format_list(dy.shape()) << ", expected " << format_list(y_shape));
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    std::fill(dx.begin(), dx.end(), T(0));
    const pool_plan c(g_, x_shape, y_shape);
    const std::int64_t V = c.in_volume(), M = c.out_volume();
    const T scale = T(1) / T(c.k[0] * c.k[1] * c.k[2]);
    for (std::int64_t plane = 0; plane < c.planes; ++plane) {
        const T* grad = dy.data() + plane * M;
        T* out = dx.data() + plane * V;
        const std::int64_t stride = c.s[2];
        for_each_row_tap(
            c, [](std::int64_t) {},
            [&](std::int64_t q_row, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                const T* g = grad + q_row;
                T* dst = out + base;
                for (std::int64_t j = lo; j < hi; ++j) dst[stride * j] += g[j] * scale;
            },
            [](std::int64_t) {});
    }
}

template class max_pool<float>;
template class max_pool<double>;
template class avg_pool<float>;
template class avg_pool<double>;

}  // namespace distdl::kernels
