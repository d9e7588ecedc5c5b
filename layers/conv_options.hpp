#pragma once
// Options of the distributed convolutions (FeatureConvNd, ChannelConvNd, GeneralConvNd, ConvNd),
// named as in the spec and PyTorch, and their normalized form: every per-dimension list spelled
// out to one entry per spatial dimension, checked once.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace distdl {

struct conv_options {
    std::vector<std::size_t> kernel_size = {};  // required: one entry per spatial dimension, or one for all
    std::vector<std::size_t> stride = {};       // empty: 1
    std::vector<std::size_t> padding = {};      // empty: 0 (zeros on both sides)
    std::vector<std::size_t> dilation = {};     // empty: 1
    bool bias = true;
    std::uint64_t seed = 0;  // initial weight and bias (layers/conv_initial.hpp)
};

// The options with every list holding one entry per spatial dimension.
struct conv_spec {
    std::size_t spatial_dims = 0;
    std::size_t in_channels = 0, out_channels = 0;
    std::vector<std::size_t> kernel_size, stride, padding, dilation;
    bool bias = true;
    std::uint64_t seed = 0;

    // Global weight shape: out_channels x in_channels x kernel_size...
    shape_t weight_shape() const;
    // in_channels * prod(kernel_size): the fan-in that bounds the initial values.
    std::size_t fan_in() const;
};

// Throws distdl::invalid_argument, prefixed with `layer` (e.g. "GeneralConv2d"), for 1 > D > 3
// spatial dimensions, zero channels, a list of another length than 1 or D (kernel_size must be
// given), or a kernel size, stride or dilation of 0.
conv_spec normalize_conv_options(const std::string& layer, std::size_t spatial_dims, std::size_t in_channels,
                                 std::size_t out_channels, const conv_options& options);

// "FeatureConv2d" from "FeatureConv" and 2.
std::string conv_layer_name(const std::string& family, std::size_t spatial_dims);

}  // namespace distdl
