#pragma once
// FeatureConv1d/2d/3d (spec 004): the convolution with only the spatial dimensions split,
//   x: N x C_in x L_1..L_D on P_x = 1 x 1 x P_1..P_D, y on the same partition (balanced blocks
//   of the output), weight and bias on worker 0 of P_x (broadcast each forward, gradients
//   sum-reduced back).
// It is general_conv with P_y = P_w = P_x (layers/conv_general.hpp has the algorithm, the
// outputs, the parameters and the errors); so it computes exactly what GeneralConvNd does.
#include "layers/conv_general.hpp"

namespace distdl {

template <class T>
class feature_conv : public general_conv<T> {
  public:
    // Collective over the world of P_x.
    feature_conv(std::size_t spatial_dims, const cartesian_partition& P_x, std::size_t in_channels,
                 std::size_t out_channels, conv_options options);
};

}  // namespace distdl
