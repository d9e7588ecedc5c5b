#include "reference/conv.hpp"

#include <algorithm>
#include <array>

#include "core/error.hpp"
#include "reference/halo_exchange.hpp"  // kernel_output_length

namespace distdl::ref {

namespace {

// Everything the loop nests need, lifted to three spatial dimensions.
struct conv_problem {
    std::size_t N, C_in, C_out;
    std::array<std::size_t, 3> L, k, s, p, d, m;
};

conv_problem resolve(const shape_t& x_shape, const shape_t& w_shape, const conv_geometry& g) {
    DISTDL_REQUIRE(x_shape.size() >= 3 && x_shape.size() <= 5,
                   "ref::conv: input shape " << format_list(x_shape)
                                             << " must be N × C_in × 1 to 3 spatial extents");
    const std::size_t dims = x_shape.size() - 2;
    DISTDL_REQUIRE(w_shape.size() == x_shape.size(),
                   "ref::conv: weight shape " << format_list(w_shape) << " must be C_out × C_in × " << dims
                                              << " kernel extents for input shape " << format_list(x_shape));
    DISTDL_REQUIRE(w_shape[1] == x_shape[1], "ref::conv: weight shape " << format_list(w_shape) << " has C_in "
                                                                        << w_shape[1] << ", input shape "
                                                                        << format_list(x_shape) << " has "
                                                                        << x_shape[1]);
    const per_dim kernel(w_shape.begin() + 2, w_shape.end());
    const per_dim spatial(x_shape.begin() + 2, x_shape.end());
    const per_dim s = expand_per_dim(g.stride, dims, per_dim(dims, 1), "stride", "ref::conv");
    const per_dim p = expand_per_dim(g.padding, dims, per_dim(dims, 0), "padding", "ref::conv");
    const per_dim d = expand_per_dim(g.dilation, dims, per_dim(dims, 1), "dilation", "ref::conv");
    per_dim m(dims);
    for (std::size_t e = 0; e < dims; ++e) {
        m[e] = kernel_output_length(spatial[e], kernel[e], s[e], p[e], d[e]);
        DISTDL_REQUIRE(m[e] > 0, "ref::conv: kernel " << kernel[e] << " (dilation " << d[e] << ") does not fit in "
                                                      << "spatial dimension " << e << " of length " << spatial[e]
                                                      << " with padding " << p[e]);
    }
    return {x_shape[0], x_shape[1], w_shape[0], lift3(spatial, 1), lift3(kernel, 1), lift3(s, 1),
            lift3(p, 0),  lift3(d, 1),  lift3(m, 1)};
}

shape_t output_shape(const shape_t& x_shape, const conv_problem& c) {
    shape_t out{c.N, c.C_out};
    for (std::size_t e = 3 - (x_shape.size() - 2); e < 3; ++e) out.push_back(c.m[e]);
    return out;
}

}  // namespace

shape_t conv_output_shape(const shape_t& x_shape, const shape_t& w_shape, const conv_geometry& g) {
    return output_shape(x_shape, resolve(x_shape, w_shape, g));
}

// Every term of the convolution sum, in one fixed order:
//   (n, co, j0, j1, j2, ci, t0, t1, t2) with padded input index i_e = s_e·j_e + d_e·t_e,
// skipping terms whose input index falls into the zero padding. `term(n, co, ci, j, t, i)`
// sees the output index j, the kernel tap t and the unpadded input index i. Forward and both
// adjoints are this one enumeration with a different body, so they cannot disagree on a term.
template <class Term>
void for_each_term(const conv_problem& c, Term&& term) {
    using index3 = std::array<std::size_t, 3>;
    for (std::size_t n = 0; n < c.N; ++n)
        for (std::size_t co = 0; co < c.C_out; ++co)
            for (std::size_t j0 = 0; j0 < c.m[0]; ++j0)
                for (std::size_t j1 = 0; j1 < c.m[1]; ++j1)
                    for (std::size_t j2 = 0; j2 < c.m[2]; ++j2)
                        for (std::size_t ci = 0; ci < c.C_in; ++ci)
                            for (std::size_t t0 = 0; t0 < c.k[0]; ++t0)
                                for (std::size_t t1 = 0; t1 < c.k[1]; ++t1)
                                    for (std::size_t t2 = 0; t2 < c.k[2]; ++t2) {
                                        index3 i;
                                        if (unpadded_index(c.s[0] * j0 + c.d[0] * t0, c.p[0], c.L[0], i[0]) &&
                                            unpadded_index(c.s[1] * j1 + c.d[1] * t1, c.p[1], c.L[1], i[1]) &&
                                            unpadded_index(c.s[2] * j2 + c.d[2] * t2, c.p[2], c.L[2], i[2]))
                                            term(n, co, ci, index3{j0, j1, j2}, index3{t0, t1, t2}, i);
                                    }
}

template <class T>
tensor<T> conv_forward(const tensor<T>& x_in, const tensor<T>& w_in, const std::type_identity_t<tensor<T>>* b,
                       const conv_geometry& g) {
    const auto c = resolve(shape_of(x_in), shape_of(w_in), g);
    if (b) DISTDL_REQUIRE(b->dimension() == 1 && b->size() == c.C_out,
                          "ref::conv: bias shape " << format_list(b->shape()) << ", expected [" << c.C_out << "]");
    const tensor<T> x = lifted(x_in), w = lifted(w_in);
    // Each output starts at its bias and adds its terms in order, in double.
    tensor<double> y = xt::zeros<double>(shape_t{c.N, c.C_out, c.m[0], c.m[1], c.m[2]});
    const std::size_t plane = c.m[0] * c.m[1] * c.m[2];
    if (b)
        for (std::size_t n = 0; n < c.N; ++n)
            for (std::size_t co = 0; co < c.C_out; ++co)
                std::fill_n(y.data() + (n * c.C_out + co) * plane, plane, double((*b)(co)));
    for_each_term(c, [&](std::size_t n, std::size_t co, std::size_t ci, const auto& j, const auto& t, const auto& i) {
        y(n, co, j[0], j[1], j[2]) += double(w(co, ci, t[0], t[1], t[2])) * double(x(n, ci, i[0], i[1], i[2]));
    });
    tensor<T> out = xt::cast<T>(y);
    out.reshape(output_shape(shape_of(x_in), c));
    return out;
}

template <class T>
tensor<T> conv_adjoint_input(const tensor<T>& dy_in, const tensor<T>& w_in, const shape_t& x_shape,
                             const conv_geometry& g) {
    const auto c = resolve(x_shape, shape_of(w_in), g);
    DISTDL_REQUIRE(shape_of(dy_in) == output_shape(x_shape, c),
                   "ref::conv adjoint: output gradient shape " << format_list(dy_in.shape()) << ", expected "
                                                               << format_list(output_shape(x_shape, c)));
    const tensor<T> dy = lifted(dy_in), w = lifted(w_in);
    tensor<double> dx = xt::zeros<double>(lift_shape5(x_shape));
    for_each_term(c, [&](std::size_t n, std::size_t co, std::size_t ci, const auto& j, const auto& t, const auto& i) {
        dx(n, ci, i[0], i[1], i[2]) += double(w(co, ci, t[0], t[1], t[2])) * double(dy(n, co, j[0], j[1], j[2]));
    });
    tensor<T> out = xt::cast<T>(dx);
    out.reshape(x_shape);
    return out;
}

template <class T>
tensor<T> conv_adjoint_weight(const tensor<T>& x_in, const tensor<T>& dy_in, const shape_t& w_shape,
                              const conv_geometry& g) {
    const auto c = resolve(shape_of(x_in), w_shape, g);
    DISTDL_REQUIRE(shape_of(dy_in) == output_shape(shape_of(x_in), c),
                   "ref::conv adjoint: output gradient shape " << format_list(dy_in.shape()) << ", expected "
                                                               << format_list(output_shape(shape_of(x_in), c)));
    const tensor<T> dy = lifted(dy_in), x = lifted(x_in);
    tensor<double> dw = xt::zeros<double>(lift_shape5(w_shape));
    for_each_term(c, [&](std::size_t n, std::size_t co, std::size_t ci, const auto& j, const auto& t, const auto& i) {
        dw(co, ci, t[0], t[1], t[2]) += double(x(n, ci, i[0], i[1], i[2])) * double(dy(n, co, j[0], j[1], j[2]));
    });
    tensor<T> out = xt::cast<T>(dw);
    out.reshape(w_shape);
    return out;
}

template <class T>
tensor<T> conv_adjoint_bias(const tensor<T>& dy_in) {
    DISTDL_REQUIRE(dy_in.dimension() >= 3 && dy_in.dimension() <= 5,
                   "ref::conv adjoint: output gradient shape " << format_list(dy_in.shape())
                                                               << " must be N × C_out × 1 to 3 spatial extents");
    const tensor<T> dy = lifted(dy_in);
    tensor<double> db = xt::zeros<double>(shape_t{dy.shape()[1]});
    for (std::size_t n = 0; n < dy.shape()[0]; ++n)
        for (std::size_t co = 0; co < dy.shape()[1]; ++co)
            for (std::size_t j0 = 0; j0 < dy.shape()[2]; ++j0)
                for (std::size_t j1 = 0; j1 < dy.shape()[3]; ++j1)
                    for (std::size_t j2 = 0; j2 < dy.shape()[4]; ++j2) db(co) += double(dy(n, co, j0, j1, j2));
    return xt::cast<T>(db);
}

#define DISTDL_INSTANTIATE(T)                                                                                 \
    template tensor<T> conv_forward(const tensor<T>&, const tensor<T>&, const tensor<T>*, const conv_geometry&);  \
    template tensor<T> conv_adjoint_input(const tensor<T>&, const tensor<T>&, const shape_t&,                 \
                                          const conv_geometry&);                                              \
    template tensor<T> conv_adjoint_weight(const tensor<T>&, const tensor<T>&, const shape_t&,                \
                                           const conv_geometry&);                                             \
    template tensor<T> conv_adjoint_bias(const tensor<T>&);
DISTDL_INSTANTIATE(float)
DISTDL_INSTANTIATE(double)
#undef DISTDL_INSTANTIATE

}  // namespace distdl::ref
