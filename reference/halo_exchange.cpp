#include "reference/halo_exchange.hpp"

#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/error.hpp"
#include "reference/repartition.hpp"

namespace distdl::ref {

std::size_t kernel_output_length(std::size_t n, std::size_t k, std::size_t s, std::size_t p, std::size_t d) {
    DISTDL_REQUIRE(k >= 1 && s >= 1 && d >= 1,
                   "ref::kernel_output_length: kernel " << k << ", stride " << s << ", dilation " << d);
    const std::size_t span = checked_add(checked_mul(d, k - 1, "ref: dilation*(kernel-1)"), 1, "ref: kernel extent");
    const std::size_t padded = checked_add(n, checked_mul(2, p, "ref: 2*padding"), "ref: padded length");
    // The oracle counts positions one by one, so it takes lengths a test can count.
    DISTDL_REQUIRE(padded <= max_padded_length, "ref::kernel_output_length: padded length " << padded
                                                                                            << " exceeds the oracle's limit "
                                                                                            << max_padded_length);
    // Count the output positions j with s*j + d*(k-1) <= n + 2p - 1 directly.
    std::size_t m = 0;
    while (checked_add(checked_mul(s, m, "ref: stride*position"), span, "ref: window end") <= padded) ++m;
    return m;
}

halo_window halo_window_of(std::size_t n, std::size_t parts, std::size_t i, std::size_t k, std::size_t s,
                           std::size_t p, std::size_t d) {
    const std::size_t m = kernel_output_length(n, k, s, p, d);
    const auto sizes = split_sizes(m, parts, split_kind::balanced);
    std::size_t a = 0;
    for (std::size_t j = 0; j < i; ++j) a += sizes[j];
    const std::size_t b = a + sizes[i];
    const std::size_t first = checked_mul(s, a, "ref: window start");
    if (b == a) return {first, first};
    return {first, checked_add(checked_add(checked_mul(s, b - 1, "ref: window end"), checked_mul(d, k - 1, "ref: window end"),
                                           "ref: window end"),
                               1, "ref: window end")};
}

namespace {

void check_geometry(const shape_t& global_shape, const shape_t& parts, const std::vector<std::size_t>& k,
                    const std::vector<std::size_t>& s, const std::vector<std::size_t>& p,
                    const std::vector<std::size_t>& d) {
    const std::size_t dim = global_shape.size();
    DISTDL_REQUIRE(parts.size() == dim && k.size() == dim && s.size() == dim && p.size() == dim && d.size() == dim,
                   "ref::halo_exchange: global shape " << format_list(global_shape) << ", partition shape "
                                                       << format_list(parts) << " and geometry lengths differ");
    for (std::size_t e = 0; e < dim; ++e)
        DISTDL_REQUIRE(kernel_output_length(global_shape[e], k[e], s[e], p[e], d[e]) > 0,
                       "ref::halo_exchange: kernel does not fit in dimension " << e << " of global shape "
                                                                               << format_list(global_shape));
}

// Slices of worker r's window in the zero-padded global tensor.
xt::xstrided_slice_vector window_slices(const shape_t& global_shape, const shape_t& parts, std::size_t r,
                                        const std::vector<std::size_t>& k, const std::vector<std::size_t>& s,
                                        const std::vector<std::size_t>& p, const std::vector<std::size_t>& d) {
    const shape_t c = unravel_index(r, parts);
    xt::xstrided_slice_vector slices;
    for (std::size_t e = 0; e < global_shape.size(); ++e) {
        const halo_window w = halo_window_of(global_shape[e], parts[e], c[e], k[e], s[e], p[e], d[e]);
        slices.push_back(xt::range(w.first, w.last));
    }
    return slices;
}

xt::xstrided_slice_vector interior_slices(const shape_t& global_shape, const std::vector<std::size_t>& p) {
    xt::xstrided_slice_vector slices;
    for (std::size_t e = 0; e < global_shape.size(); ++e)
        slices.push_back(xt::range(p[e], checked_add(p[e], global_shape[e], "ref: interior end")));
    return slices;
}

shape_t padded_shape(const shape_t& global_shape, const std::vector<std::size_t>& p) {
    shape_t padded = global_shape;
    for (std::size_t e = 0; e < padded.size(); ++e)
        padded[e] = checked_add(padded[e], checked_mul(2, p[e], "ref: 2*padding"), "ref: padded length");
    checked_volume(padded, "ref: padded volume");
    return padded;
}

}  // namespace

template <class T>
std::vector<tensor<T>> halo_exchange(const tensor<T>& global, const shape_t& P_x_shape,
                                     const std::vector<std::size_t>& kernel_size,
                                     const std::vector<std::size_t>& stride,
                                     const std::vector<std::size_t>& padding,
                                     const std::vector<std::size_t>& dilation) {
    const shape_t global_shape = shape_of(global);
    check_geometry(global_shape, P_x_shape, kernel_size, stride, padding, dilation);
    tensor<T> padded = xt::zeros<T>(padded_shape(global_shape, padding));
    xt::noalias(xt::strided_view(padded, interior_slices(global_shape, padding))) = global;
    std::vector<tensor<T>> windows;
    for (std::size_t r = 0; r < volume(P_x_shape); ++r)
        windows.emplace_back(xt::strided_view(
            padded, window_slices(global_shape, P_x_shape, r, kernel_size, stride, padding, dilation)));
    return windows;
}

template <class T>
std::vector<tensor<T>> halo_exchange_adjoint(const std::vector<tensor<T>>& windows, const shape_t& global_shape,
                                             const shape_t& P_x_shape,
                                             const std::vector<std::size_t>& kernel_size,
                                             const std::vector<std::size_t>& stride,
                                             const std::vector<std::size_t>& padding,
                                             const std::vector<std::size_t>& dilation) {
    check_geometry(global_shape, P_x_shape, kernel_size, stride, padding, dilation);
    DISTDL_REQUIRE(windows.size() == volume(P_x_shape),
                   "ref::halo_exchange_adjoint: " << windows.size() << " windows for partition shape "
                                                  << format_list(P_x_shape));
    tensor<T> padded = xt::zeros<T>(padded_shape(global_shape, padding));
    for (std::size_t r = 0; r < windows.size(); ++r) {
        auto view = xt::strided_view(padded,
                                     window_slices(global_shape, P_x_shape, r, kernel_size, stride, padding, dilation));
        DISTDL_REQUIRE(shape_t(view.shape().begin(), view.shape().end()) == shape_of(windows[r]),
                       "ref::halo_exchange_adjoint: window " << r << " has shape " << format_list(shape_of(windows[r]))
                                                             << ", expected "
                                                             << format_list(shape_t(view.shape().begin(),
                                                                                    view.shape().end())));
        xt::noalias(view) += windows[r];
    }
    tensor<T> global = xt::strided_view(padded, interior_slices(global_shape, padding));
    return split(global, P_x_shape, split_kind::balanced);
}

template std::vector<tensor<float>> halo_exchange(const tensor<float>&, const shape_t&, const std::vector<std::size_t>&,
                                                  const std::vector<std::size_t>&, const std::vector<std::size_t>&,
                                                  const std::vector<std::size_t>&);
template std::vector<tensor<double>> halo_exchange(const tensor<double>&, const shape_t&,
                                                   const std::vector<std::size_t>&, const std::vector<std::size_t>&,
                                                   const std::vector<std::size_t>&, const std::vector<std::size_t>&);
template std::vector<tensor<float>> halo_exchange_adjoint(const std::vector<tensor<float>>&, const shape_t&,
                                                          const shape_t&, const std::vector<std::size_t>&,
                                                          const std::vector<std::size_t>&,
                                                          const std::vector<std::size_t>&,
                                                          const std::vector<std::size_t>&);
template std::vector<tensor<double>> halo_exchange_adjoint(const std::vector<tensor<double>>&, const shape_t&,
                                                           const shape_t&, const std::vector<std::size_t>&,
                                                           const std::vector<std::size_t>&,
                                                           const std::vector<std::size_t>&,
                                                           const std::vector<std::size_t>&);

}  // namespace distdl::ref
