#pragma once
// The partition rules of the distributed convolutions (spec 004, DESIGN §3), for D spatial
// dimensions (tensors N x C x L_1..L_D, so partitions of D + 2 dimensions):
//   feature:  P_x 1 x 1 x P_1..P_D                (P_y and P_w are P_x itself)
//   channel:  P_x 1 x P_ci x 1..1, P_y 1 x P_co x 1..1, P_w P_co x P_ci x 1..1
//   general:  P_x 1 x P_ci x P_1..P_D, P_y 1 x P_co x P_1..P_D, P_w P_co x P_ci x P_1..P_D
// and the selector's choice among them. Every refusal is a distdl::partition_error whose message
// names the layer, the partitions, their shapes and the dimension that does not fit.
#include <cstddef>
#include <string>

#include "core/partition.hpp"

namespace distdl {

enum class conv_kind { feature, channel, general };

// "FeatureConv", "ChannelConv", "GeneralConv".
const char* conv_family(conv_kind kind);

// Throws when the partitions break the rules of `kind`; `layer` prefixes the message.
void require_conv_partitions(conv_kind kind, const std::string& layer, std::size_t spatial_dims,
                             const cartesian_partition& P_x, const cartesian_partition& P_y,
                             const cartesian_partition& P_w);

// The selector (ConvNd): only P_x -> feature; P_x, P_y and P_w with every spatial dimension
// unpartitioned -> channel; otherwise general. P_y without P_w (or P_w without P_y) is refused
// naming the missing partition; the chosen kind's rules are then checked (messages prefixed
// with `layer`, e.g. "Conv2d").
conv_kind select_conv_kind(const std::string& layer, std::size_t spatial_dims, const cartesian_partition& P_x,
                           const cartesian_partition* P_y, const cartesian_partition* P_w);

}  // namespace distdl
