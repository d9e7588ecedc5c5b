#include "layers/conv_channel.hpp"

namespace distdl {

template <class T>
channel_conv<T>::channel_conv(std::size_t spatial_dims, const cartesian_partition& P_x, const cartesian_partition& P_y,
                              const cartesian_partition& P_w, std::size_t in_channels, std::size_t out_channels,
                              conv_options options)
    : general_conv<T>(conv_kind::channel, spatial_dims, P_x, P_y, P_w, in_channels, out_channels, std::move(options)) {}

template class channel_conv<float>;
template class channel_conv<double>;

}  // namespace distdl
