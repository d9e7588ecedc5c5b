#include "layers/conv_feature.hpp"

namespace distdl {

template <class T>
feature_conv<T>::feature_conv(std::size_t spatial_dims, const cartesian_partition& P_x, std::size_t in_channels,
                              std::size_t out_channels, conv_options options)
    : general_conv<T>(conv_kind::feature, spatial_dims, P_x, P_x, P_x, in_channels, out_channels, std::move(options)) {}

template class feature_conv<float>;
template class feature_conv<double>;

}  // namespace distdl
