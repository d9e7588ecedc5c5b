#include "kernels/conv_geometry.hpp"

#include <string>

#include "core/per_dimension.hpp"

namespace distdl::kernels {

conv_geometry normalized(const conv_geometry& g) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(dims >= 1 && dims <= 3, "kernels::convolution: kernel_size " << format_list(g.kernel_size)
                                                                                << " must have 1, 2 or 3 entries");
    conv_geometry out = g;
    const std::string owner = "kernels::convolution";
    out.stride = per_dimension(g.stride, dims, std::vector<std::size_t>(dims, 1), owner, "stride");
    out.padding = per_dimension(g.padding, dims, std::vector<std::size_t>(dims, 0), owner, "padding");
    out.dilation = per_dimension(g.dilation, dims, std::vector<std::size_t>(dims, 1), owner, "dilation");
    for (std::size_t e = 0; e < dims; ++e)
        DISTDL_REQUIRE(out.kernel_size[e] >= 1 && out.stride[e] >= 1 && out.dilation[e] >= 1,
                       "kernels::convolution: kernel_size " << format_list(out.kernel_size) << ", stride "
                           << format_list(out.stride) << ", dilation " << format_list(out.dilation)
                           << " must all be at least 1");
    return out;
}

shape_t conv_output_shape(const conv_geometry& g, const shape_t& x_shape) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(x_shape.size() == dims + 2 && x_shape[1] == g.in_channels,
                   "kernels::convolution: input shape " << format_list(x_shape) << ", expected N × "
                                                        << g.in_channels << " × " << dims << " spatial extents");
    shape_t out{x_shape[0], g.out_channels};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t span = g.dilation[e] * (g.kernel_size[e] - 1) + 1;
        const std::size_t padded = x_shape[e + 2] + 2 * g.padding[e];
        DISTDL_REQUIRE(padded >= span, "kernels::convolution: kernel " << g.kernel_size[e] << " with dilation "
                                           << g.dilation[e] << " does not fit in spatial dimension " << e
                                           << " of input shape " << format_list(x_shape) << " with padding "
                                           << g.padding[e]);
        out.push_back((padded - span) / g.stride[e] + 1);
    }
    return out;
}

}  // namespace distdl::kernels
