#include "layers/conv_partitions.hpp"

#include "core/error.hpp"

namespace distdl {

namespace {

// The form of each partition in each kind, for messages.
const char* form_of(conv_kind kind, const char* name) {
    const std::string n = name;
    switch (kind) {
        case conv_kind::feature: return "1 x 1 x P_1..P_D";
        case conv_kind::channel:
            return n == "P_x" ? "1 x P_ci x 1..1" : n == "P_y" ? "1 x P_co x 1..1" : "P_co x P_ci x 1..1";
        case conv_kind::general:
            return n == "P_x" ? "1 x P_ci x P_1..P_D" : n == "P_y" ? "1 x P_co x P_1..P_D" : "P_co x P_ci x P_1..P_D";
    }
    return "";
}

void require_rank(conv_kind kind, const std::string& layer, std::size_t dims, const cartesian_partition& p,
                  const char* name) {
    DISTDL_REQUIRE_AS(p.dim() == dims + 2, partition_error,
                      layer << ": " << name << " must have " << dims + 2 << " dimensions (" << form_of(kind, name)
                            << " for " << dims << " spatial dimension" << (dims == 1 ? "" : "s") << "), got shape "
                            << format_list(p.shape()));
}

void require_extent_one(conv_kind kind, const std::string& layer, const cartesian_partition& p, const char* name,
                        std::size_t d, const char* why) {
    DISTDL_REQUIRE_AS(p.shape()[d] == 1, partition_error,
                      layer << ": " << name << " shape " << format_list(p.shape()) << " must be " << form_of(kind, name)
                            << " (dimension " << d << " is " << p.shape()[d] << ", expected 1: " << why << ")");
}

// a's dimension da must equal b's dimension db.
void require_match(const std::string& layer, const cartesian_partition& a, const char* a_name, std::size_t da,
                   const cartesian_partition& b, const char* b_name, std::size_t db, const std::string& what) {
    DISTDL_REQUIRE_AS(a.shape()[da] == b.shape()[db], partition_error,
                      layer << ": " << a_name << " shape " << format_list(a.shape()) << " does not match " << b_name
                            << " shape " << format_list(b.shape()) << " in " << what << " (" << a_name
                            << " dimension " << da << ": " << a.shape()[da] << " vs " << b_name << " dimension " << db
                            << ": " << b.shape()[db] << ")");
}

}  // namespace

const char* conv_family(conv_kind kind) {
    switch (kind) {
        case conv_kind::feature: return "FeatureConv";
        case conv_kind::channel: return "ChannelConv";
        case conv_kind::general: return "GeneralConv";
    }
    return "";
}

void require_conv_partitions(conv_kind kind, const std::string& layer, std::size_t dims, const cartesian_partition& P_x,
                             const cartesian_partition& P_y, const cartesian_partition& P_w) {
    const char* batch = "the batch is not split";
    require_rank(kind, layer, dims, P_x, "P_x");
    if (kind == conv_kind::feature) {
        require_extent_one(kind, layer, P_x, "P_x", 0, batch);
        require_extent_one(kind, layer, P_x, "P_x", 1, "a feature-distributed convolution does not split channels");
        return;
    }
    require_rank(kind, layer, dims, P_y, "P_y");
    require_rank(kind, layer, dims, P_w, "P_w");
    require_extent_one(kind, layer, P_x, "P_x", 0, batch);
    require_extent_one(kind, layer, P_y, "P_y", 0, batch);
    if (kind == conv_kind::channel) {
        const char* why = "a channel-distributed convolution does not split spatial dimensions";
        for (std::size_t d = 2; d < dims + 2; ++d) {
            require_extent_one(kind, layer, P_x, "P_x", d, why);
            require_extent_one(kind, layer, P_y, "P_y", d, why);
            require_extent_one(kind, layer, P_w, "P_w", d, why);
        }
    }
    require_match(layer, P_w, "P_w", 1, P_x, "P_x", 1, "the input channels");
    require_match(layer, P_w, "P_w", 0, P_y, "P_y", 1, "the output channels");
    for (std::size_t d = 2; d < dims + 2; ++d) {
        const std::string what = "spatial dimension " + std::to_string(d - 2);
        require_match(layer, P_y, "P_y", d, P_x, "P_x", d, what);
        require_match(layer, P_w, "P_w", d, P_x, "P_x", d, what);
    }
}

conv_kind select_conv_kind(const std::string& layer, std::size_t dims, const cartesian_partition& P_x,
                           const cartesian_partition* P_y, const cartesian_partition* P_w) {
    const char* needs = "a channel or general convolution needs P_x, P_y and P_w; a feature convolution only P_x";
    DISTDL_REQUIRE_AS(!(P_y && !P_w), partition_error, layer << ": P_y is given but P_w is missing (" << needs << ")");
    DISTDL_REQUIRE_AS(!(P_w && !P_y), partition_error, layer << ": P_w is given but P_y is missing (" << needs << ")");
    if (!P_y) {
        require_conv_partitions(conv_kind::feature, layer, dims, P_x, P_x, P_x);
        return conv_kind::feature;
    }
    require_rank(conv_kind::general, layer, dims, P_x, "P_x");
    require_rank(conv_kind::general, layer, dims, *P_y, "P_y");
    require_rank(conv_kind::general, layer, dims, *P_w, "P_w");
    bool spatial_split = false;
    for (std::size_t d = 2; d < dims + 2; ++d)
        spatial_split = spatial_split || P_x.shape()[d] > 1 || P_y->shape()[d] > 1 || P_w->shape()[d] > 1;
    const conv_kind kind = spatial_split ? conv_kind::general : conv_kind::channel;
    require_conv_partitions(kind, layer, dims, P_x, *P_y, *P_w);
    return kind;
}

}  // namespace distdl
