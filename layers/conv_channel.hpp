#pragma once
// ChannelConv1d/2d/3d (spec 004): the convolution with only the channels split,
//   x on P_x = 1 x P_ci x 1..1, y on P_y = 1 x P_co x 1..1, w on P_w = P_co x P_ci x 1..1
//   (bias on the P_w workers whose input-channel index is 0); x is broadcast along P_co, each
//   P_w worker convolves its channel blocks (padding by the local kernel: no halo), the
//   contributions are sum-reduced along P_ci into P_y. Uneven splits and fewer channels than
//   workers give empty blocks.
// It is general_conv with unpartitioned spatial dimensions (layers/conv_general.hpp has the
// algorithm, the outputs, the parameters and the errors); so it computes exactly what
// GeneralConvNd does on the same partitions.
#include "layers/conv_general.hpp"

namespace distdl {

template <class T>
class channel_conv : public general_conv<T> {
  public:
    // Collective over the world of the partitions.
    channel_conv(std::size_t spatial_dims, const cartesian_partition& P_x, const cartesian_partition& P_y,
                 const cartesian_partition& P_w, std::size_t in_channels, std::size_t out_channels,
                 conv_options options);
};

}  // namespace distdl
