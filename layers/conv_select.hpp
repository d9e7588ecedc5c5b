#pragma once
// Conv1d/2d/3d (spec 004's DistributedConvNd): picks the implementation by the partitions given
// (layers/conv_partitions.hpp, select_conv_kind): only P_x -> FeatureConvNd; P_x, P_y and P_w
// with every spatial dimension unpartitioned -> ChannelConvNd; otherwise GeneralConvNd. P_y
// without P_w (or P_w without P_y) is refused naming the missing partition, and shapes that do
// not fit together are refused naming the partitions and the dimension ("Conv2d: ..."), on
// every worker before any other communication.
#include <memory>

#include "layers/conv_general.hpp"

namespace distdl {

// Collective over the world of P_x. P_y and P_w: null when not given.
template <class T>
std::unique_ptr<general_conv<T>> make_conv(std::size_t spatial_dims, const cartesian_partition& P_x,
                                           const cartesian_partition* P_y, const cartesian_partition* P_w,
                                           std::size_t in_channels, std::size_t out_channels, conv_options options);

}  // namespace distdl
