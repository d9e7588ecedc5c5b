#include "layers/conv_select.hpp"

#include "core/detail/argument_agreement.hpp"
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"

namespace distdl {

template <class T>
std::unique_ptr<general_conv<T>> make_conv(std::size_t spatial_dims, const cartesian_partition& P_x,
                                           const cartesian_partition* P_y, const cartesian_partition* P_w,
                                           std::size_t in_channels, std::size_t out_channels, conv_options options) {
    const std::string layer = conv_layer_name("Conv", spatial_dims);
    // The choice depends on which partitions are given and their shapes: agreed first, so
    // every worker makes the same choice (or refuses with the same message).
    detail::argument_agreement(layer)
        .element_type(dtype_of<T>())
        .number("spatial dimensions", spatial_dims)
        .flag("P_y given", P_y != nullptr)
        .flag("P_w given", P_w != nullptr)
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y ? P_y->shape() : shape_t{})
        .list("P_w shape", P_w ? P_w->shape() : shape_t{})
        .require(*P_x.world_comm());
    switch (select_conv_kind(layer, spatial_dims, P_x, P_y, P_w)) {
        case conv_kind::feature:
            return std::make_unique<feature_conv<T>>(spatial_dims, P_x, in_channels, out_channels, std::move(options));
        case conv_kind::channel:
            return std::make_unique<channel_conv<T>>(spatial_dims, P_x, *P_y, *P_w, in_channels, out_channels,
                                                     std::move(options));
        case conv_kind::general:
            break;
    }
    return std::make_unique<general_conv<T>>(spatial_dims, P_x, *P_y, *P_w, in_channels, out_channels,
                                             std::move(options));
}

template std::unique_ptr<general_conv<float>> make_conv<float>(std::size_t, const cartesian_partition&,
                                                               const cartesian_partition*, const cartesian_partition*,
                                                               std::size_t, std::size_t, conv_options);
template std::unique_ptr<general_conv<double>> make_conv<double>(std::size_t, const cartesian_partition&,
                                                                 const cartesian_partition*,
                                                                 const cartesian_partition*, std::size_t, std::size_t,
                                                                 conv_options);

}  // namespace distdl
