#pragma once
// Options of the distributed convolutions (FeatureConvNd, ChannelConvNd, GeneralConvNd, ConvNd),
// named as in the spec and PyTorch, and their normalized form: every per-dimension list spelled
// out to one entry per spatial dimension, checked once.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/per_dimension.hpp"
#include "core/tensor.hpp"

namespace distdl {

struct conv_options {
    per_dimension_list kernel_size = {};  // required: one entry per spatial dimension, or one for all
    per_dimension_list stride = {};       // empty: 1
    per_dimension_list padding = {};      // empty: 0 (zeros on both sides)
    per_dimension_list dilation = {};     // empty: 1
    bool bias = true;
    std::uint64_t seed = 0;  // initial weight and bias (layers/conv_initial.hpp)
    // The global input shape N x C_in x L_1..L_D, when known in advance: the layer agrees on it
    // at construction and plans for it there (no shape gathering at the first forward; a piece
    // that is not this shape's balanced piece is refused). Absent: learnt from the pieces at the
    // first forward, and again whenever a piece changes shape.
    std::optional<shape_t> input_shape = {};
};

// The options with every list holding one entry per spatial dimension.
struct conv_spec {
    std::size_t spatial_dims = 0;
    std::size_t in_channels = 0, out_channels = 0;
    std::vector<std::size_t> kernel_size, stride, padding, dilation;
    bool bias = true;
    std::uint64_t seed = 0;
    std::optional<shape_t> input_shape;  // checked: rank D + 2, C_in channels, the kernel fits

    // Global weight shape: out_channels x in_channels x kernel_size...
    shape_t weight_shape() const;
    // in_channels * prod(kernel_size): the fan-in that bounds the initial values.
    std::size_t fan_in() const;
    // Global output shape for the global input shape `x` (N x C_in x L..., the kernel fitting):
    // N x C_out x m..., m = floor((L + 2p - d(k-1) - 1)/s) + 1.
    shape_t output_shape(const shape_t& x) const;
};

// Throws distdl::invalid_argument, prefixed with `layer` (e.g. "GeneralConv2d"), for 1 > D > 3
// spatial dimensions, zero channels, a list of another length than 1 or D (kernel_size must be
// given), a kernel size, stride or dilation of 0, or an input_shape of another rank than D + 2,
// other channels than in_channels, or in which the kernel does not fit.
conv_spec normalize_conv_options(const std::string& layer, std::size_t spatial_dims, std::size_t in_channels,
                                 std::size_t out_channels, const conv_options& options);

// "FeatureConv2d" from "FeatureConv" and 2.
std::string conv_layer_name(const std::string& family, std::size_t spatial_dims);

}  // namespace distdl
