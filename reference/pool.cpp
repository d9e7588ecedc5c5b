#include "reference/pool.hpp"

#include <array>
#include <limits>

#include "core/error.hpp"
#include "reference/halo_exchange.hpp"  // kernel_output_length

namespace distdl::ref {

namespace {

// Everything the loop nests need, lifted to three spatial dimensions.
struct pool_problem {
    std::size_t N, C;
    std::array<std::size_t, 3> L, k, s, p, d, m;
    std::size_t dims;
};

pool_problem resolve(const shape_t& x_shape, const pool_geometry& g, const char* layer, bool dilation_allowed) {
    DISTDL_REQUIRE(x_shape.size() >= 3 && x_shape.size() <= 5,
                   layer << ": input shape " << format_list(x_shape) << " must be N × C × 1 to 3 spatial extents");
    const std::size_t dims = x_shape.size() - 2;
    DISTDL_REQUIRE(!g.kernel_size.empty(), layer << ": kernel_size is required");
    const per_dim k = expand_per_dim(g.kernel_size, dims, {}, "kernel_size", layer);
    const per_dim s = expand_per_dim(g.stride, dims, k, "stride", layer);
    const per_dim p = expand_per_dim(g.padding, dims, per_dim(dims, 0), "padding", layer);
    const per_dim d = expand_per_dim(g.dilation, dims, per_dim(dims, 1), "dilation", layer);
    if (!dilation_allowed)
        for (auto v : d) DISTDL_REQUIRE(v == 1, layer << ": dilation " << format_list(d) << " given, expected 1");
    const per_dim spatial(x_shape.begin() + 2, x_shape.end());
    per_dim m(dims);
    for (std::size_t e = 0; e < dims; ++e) {
        m[e] = kernel_output_length(spatial[e], k[e], s[e], p[e], d[e]);
        DISTDL_REQUIRE(m[e] > 0, layer << ": kernel " << k[e] << " (dilation " << d[e] << ") does not fit in "
                                       << "spatial dimension " << e << " of length " << spatial[e]
                                       << " with padding " << p[e]);
    }
    return {x_shape[0], x_shape[1], lift3(spatial, 1), lift3(k, 1), lift3(s, 1), lift3(p, 0), lift3(d, 1),
            lift3(m, 1), dims};
}

shape_t output_shape(const pool_problem& c) {
    shape_t out{c.N, c.C};
    for (std::size_t e = 3 - c.dims; e < 3; ++e) out.push_back(c.m[e]);
    return out;
}

// Flat position in x (lifted) of the first maximum of window (n, c, j); false if the window
// holds only padding. Window entries are scanned in row-major order of (t0, t1, t2).
template <class T>
bool first_max(const tensor<T>& x, const pool_problem& c, std::size_t n, std::size_t ch, std::size_t j0,
               std::size_t j1, std::size_t j2, std::array<std::size_t, 3>& at) {
    bool found = false;
    T best = -std::numeric_limits<T>::infinity();
    for (std::size_t t0 = 0; t0 < c.k[0]; ++t0)
        for (std::size_t t1 = 0; t1 < c.k[1]; ++t1)
            for (std::size_t t2 = 0; t2 < c.k[2]; ++t2) {
                std::size_t i0, i1, i2;
                if (unpadded_index(c.s[0] * j0 + c.d[0] * t0, c.p[0], c.L[0], i0) &&
                    unpadded_index(c.s[1] * j1 + c.d[1] * t1, c.p[1], c.L[1], i1) &&
                    unpadded_index(c.s[2] * j2 + c.d[2] * t2, c.p[2], c.L[2], i2)) {
                    const T v = x(n, ch, i0, i1, i2);
                    if (!found || v > best) {  // strictly greater: ties keep the first
                        best = v;
                        at = {i0, i1, i2};
                        found = true;
                    }
                }
            }
    return found;
}

}  // namespace

shape_t pool_output_shape(const shape_t& x_shape, const pool_geometry& g) {
    return output_shape(resolve(x_shape, g, "ref::pool", true));
}

template <class T>
tensor<T> max_pool(const tensor<T>& x_in, const pool_geometry& g) {
    const auto c = resolve(shape_of(x_in), g, "ref::max_pool", true);
    const tensor<T> x = lifted(x_in);
    tensor<T> y(shape_t{c.N, c.C, c.m[0], c.m[1], c.m[2]});
    for (std::size_t n = 0; n < c.N; ++n)
        for (std::size_t ch = 0; ch < c.C; ++ch)
            for (std::size_t j0 = 0; j0 < c.m[0]; ++j0)
                for (std::size_t j1 = 0; j1 < c.m[1]; ++j1)
                    for (std::size_t j2 = 0; j2 < c.m[2]; ++j2) {
                        std::array<std::size_t, 3> i{};
                        y(n, ch, j0, j1, j2) = first_max(x, c, n, ch, j0, j1, j2, i)
                                                   ? x(n, ch, i[0], i[1], i[2])
                                                   : -std::numeric_limits<T>::infinity();
                    }
    y.reshape(output_shape(c));
    return y;
}

template <class T>
tensor<T> max_pool_adjoint(const tensor<T>& x_in, const tensor<T>& dy_in, const pool_geometry& g) {
    const auto c = resolve(shape_of(x_in), g, "ref::max_pool", true);
    DISTDL_REQUIRE(shape_of(dy_in) == output_shape(c), "ref::max_pool adjoint: output gradient shape "
                                                           << format_list(dy_in.shape()) << ", expected "
                                                           << format_list(output_shape(c)));
    const tensor<T> x = lifted(x_in), dy = lifted(dy_in);
    tensor<T> dx = xt::zeros<T>(shape_of(x));
    for (std::size_t n = 0; n < c.N; ++n)
        for (std::size_t ch = 0; ch < c.C; ++ch)
            for (std::size_t j0 = 0; j0 < c.m[0]; ++j0)
                for (std::size_t j1 = 0; j1 < c.m[1]; ++j1)
                    for (std::size_t j2 = 0; j2 < c.m[2]; ++j2) {
                        std::array<std::size_t, 3> i{};
                        if (first_max(x, c, n, ch, j0, j1, j2, i)) dx(n, ch, i[0], i[1], i[2]) += dy(n, ch, j0, j1, j2);
                    }
    dx.reshape(shape_of(x_in));
    return dx;
}

template <class T>
tensor<T> avg_pool(const tensor<T>& x_in, const pool_geometry& g) {
    const auto c = resolve(shape_of(x_in), g, "ref::avg_pool", false);
    const tensor<T> x = lifted(x_in);
    const double divisor = double(c.k[0] * c.k[1] * c.k[2]);  // padding counts (count_include_pad)
    tensor<T> y(shape_t{c.N, c.C, c.m[0], c.m[1], c.m[2]});
    for (std::size_t n = 0; n < c.N; ++n)
        for (std::size_t ch = 0; ch < c.C; ++ch)
            for (std::size_t j0 = 0; j0 < c.m[0]; ++j0)
                for (std::size_t j1 = 0; j1 < c.m[1]; ++j1)
                    for (std::size_t j2 = 0; j2 < c.m[2]; ++j2) {
                        double sum = 0;
                        for (std::size_t t0 = 0; t0 < c.k[0]; ++t0)
                            for (std::size_t t1 = 0; t1 < c.k[1]; ++t1)
                                for (std::size_t t2 = 0; t2 < c.k[2]; ++t2) {
                                    std::size_t i0, i1, i2;
                                    if (unpadded_index(c.s[0] * j0 + t0, c.p[0], c.L[0], i0) &&
                                        unpadded_index(c.s[1] * j1 + t1, c.p[1], c.L[1], i1) &&
                                        unpadded_index(c.s[2] * j2 + t2, c.p[2], c.L[2], i2))
                                        sum += double(x(n, ch, i0, i1, i2));
                                }
                        y(n, ch, j0, j1, j2) = T(sum / divisor);
                    }
    y.reshape(output_shape(c));
    return y;
}

template <class T>
tensor<T> avg_pool_adjoint(const tensor<T>& dy_in, const shape_t& x_shape, const pool_geometry& g) {
    const auto c = resolve(x_shape, g, "ref::avg_pool", false);
    DISTDL_REQUIRE(shape_of(dy_in) == output_shape(c), "ref::avg_pool adjoint: output gradient shape "
                                                           << format_list(dy_in.shape()) << ", expected "
                                                           << format_list(output_shape(c)));
    const tensor<T> dy = lifted(dy_in);
    const double divisor = double(c.k[0] * c.k[1] * c.k[2]);
    tensor<double> dx = xt::zeros<double>(lift_shape5(x_shape));
    for (std::size_t n = 0; n < c.N; ++n)
        for (std::size_t ch = 0; ch < c.C; ++ch)
            for (std::size_t j0 = 0; j0 < c.m[0]; ++j0)
                for (std::size_t j1 = 0; j1 < c.m[1]; ++j1)
                    for (std::size_t j2 = 0; j2 < c.m[2]; ++j2)
                        for (std::size_t t0 = 0; t0 < c.k[0]; ++t0)
                            for (std::size_t t1 = 0; t1 < c.k[1]; ++t1)
                                for (std::size_t t2 = 0; t2 < c.k[2]; ++t2) {
                                    std::size_t i0, i1, i2;
                                    if (unpadded_index(c.s[0] * j0 + t0, c.p[0], c.L[0], i0) &&
                                        unpadded_index(c.s[1] * j1 + t1, c.p[1], c.L[1], i1) &&
                                        unpadded_index(c.s[2] * j2 + t2, c.p[2], c.L[2], i2))
                                        dx(n, ch, i0, i1, i2) += double(dy(n, ch, j0, j1, j2)) / divisor;
                                }
    tensor<T> out = xt::cast<T>(dx);
    out.reshape(x_shape);
    return out;
}

#define DISTDL_INSTANTIATE(T)                                                                          \
    template tensor<T> max_pool(const tensor<T>&, const pool_geometry&);                               \
    template tensor<T> max_pool_adjoint(const tensor<T>&, const tensor<T>&, const pool_geometry&);     \
    template tensor<T> avg_pool(const tensor<T>&, const pool_geometry&);                               \
    template tensor<T> avg_pool_adjoint(const tensor<T>&, const shape_t&, const pool_geometry&);
DISTDL_INSTANTIATE(float)
DISTDL_INSTANTIATE(double)
#undef DISTDL_INSTANTIATE

}  // namespace distdl::ref
