#include "layers/conv_options.hpp"

#include "core/checked_arithmetic.hpp"
#include "core/error.hpp"
#include "core/halo_exchange.hpp"
#include "core/per_dimension.hpp"

namespace distdl {

namespace {

std::vector<std::size_t> expand(const std::string& layer, const std::vector<std::size_t>& values, std::size_t dims,
                                std::size_t fallback, const char* what, bool required) {
    DISTDL_REQUIRE(!(required && values.empty()), layer << ": " << what << " must be given (one entry per spatial "
                                                        << "dimension, or one for all)");
    return per_dimension(values, dims, std::vector<std::size_t>(dims, fallback), layer, what);
}

}  // namespace

shape_t conv_spec::weight_shape() const {
    shape_t shape{out_channels, in_channels};
    shape.insert(shape.end(), kernel_size.begin(), kernel_size.end());
    return shape;
}

std::size_t conv_spec::fan_in() const {
    std::size_t f = in_channels;
    for (auto k : kernel_size) f *= k;
    return f;
}

shape_t conv_spec::output_shape(const shape_t& x) const {
    shape_t y{x[0], out_channels};
    for (std::size_t e = 0; e < spatial_dims; ++e)
        y.push_back(kernel_output_length(x[2 + e], kernel_size[e], stride[e], padding[e], dilation[e]));
    return y;
}

std::string conv_layer_name(const std::string& family, std::size_t spatial_dims) {
    return family + std::to_string(spatial_dims) + "d";
}

conv_spec normalize_conv_options(const std::string& layer, std::size_t spatial_dims, std::size_t in_channels,
                                 std::size_t out_channels, const conv_options& options) {
    DISTDL_REQUIRE(spatial_dims >= 1 && spatial_dims <= 3,
                   layer << ": " << spatial_dims << " spatial dimensions, expected 1, 2 or 3");
    DISTDL_REQUIRE(in_channels >= 1 && out_channels >= 1, layer << ": in_channels " << in_channels
                                                                << " and out_channels " << out_channels
                                                                << " must be at least 1");
    conv_spec s;
    s.spatial_dims = spatial_dims;
    s.in_channels = in_channels;
    s.out_channels = out_channels;
    s.kernel_size = expand(layer, options.kernel_size, spatial_dims, 1, "kernel_size", true);
    s.stride = expand(layer, options.stride, spatial_dims, 1, "stride", false);
    s.padding = expand(layer, options.padding, spatial_dims, 0, "padding", false);
    s.dilation = expand(layer, options.dilation, spatial_dims, 1, "dilation", false);
    for (std::size_t e = 0; e < spatial_dims; ++e)
        DISTDL_REQUIRE(s.kernel_size[e] >= 1 && s.stride[e] >= 1 && s.dilation[e] >= 1,
                       layer << ": kernel_size " << format_list(s.kernel_size) << ", stride " << format_list(s.stride)
                             << " and dilation " << format_list(s.dilation) << " must all be at least 1");
    // The weight tensor and the kernel extents must be countable (a kernel of 2^40 is refused here,
    // naming the layer, not deep inside a tensor or the halo's geometry).
    shape_t weight_shape{out_channels, in_channels};
    weight_shape.insert(weight_shape.end(), s.kernel_size.begin(), s.kernel_size.end());
    checked_volume(weight_shape, layer + ": weight shape");
    for (std::size_t e = 0; e < spatial_dims; ++e) {
        const std::string extent = layer + ": kernel extent dilation*(kernel_size-1)+1 of spatial dimension " +
                                   std::to_string(e);
        checked_signed(checked_add(checked_mul(s.dilation[e], s.kernel_size[e] - 1, extent), 1, extent), extent);
        const std::string padding = layer + ": 2*padding of spatial dimension " + std::to_string(e);
        checked_signed(checked_mul(2, s.padding[e], padding), padding);
    }
    s.bias = options.bias;
    s.seed = options.seed;
    if (options.input_shape) {
        const shape_t& shape = *options.input_shape;
        DISTDL_REQUIRE(shape.size() == spatial_dims + 2 && shape[1] == in_channels,
                       layer << ": input_shape " << format_list(shape) << ", expected [batch, " << in_channels << ", "
                             << spatial_dims << " spatial extent" << (spatial_dims == 1 ? "" : "s") << "]");
        for (std::size_t e = 0; e < spatial_dims; ++e)
            DISTDL_REQUIRE(kernel_output_length(shape[2 + e], s.kernel_size[e], s.stride[e], s.padding[e],
                                                s.dilation[e]) > 0,
                           layer << ": the kernel does not fit input_shape " << format_list(shape)
                                 << " in spatial dimension " << e << ": extent " << shape[2 + e] << " + 2*padding "
                                 << s.padding[e] << " < dilation " << s.dilation[e] << " * (kernel_size "
                                 << s.kernel_size[e] << " - 1) + 1 = " << s.dilation[e] * (s.kernel_size[e] - 1) + 1);
        checked_volume(s.output_shape(shape), layer + ": output shape");
        s.input_shape = shape;
    }
    return s;
}

}  // namespace distdl
