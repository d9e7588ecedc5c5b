#pragma once
// Options of the distributed pooling layers (MaxPool1d/2d/3d, AvgPool1d/2d/3d; layers/pool_max.hpp,
// layers/pool_avg.hpp), named as the serial layers name them. Each list has one entry per
// spatial dimension, or a single entry used for every spatial dimension.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/per_dimension.hpp"
#include "core/tensor.hpp"

namespace distdl {

struct pool_options {
    per_dimension_list kernel_size = {};  // required
    per_dimension_list stride = {};       // empty: kernel_size
    per_dimension_list padding = {};      // empty: 0
    per_dimension_list dilation = {};     // empty: 1 (max pooling only)
    // The global input shape N × C × L…: given, the layout is agreed and planned at construction
    // and every call checks its piece against it; absent, it is learnt from the pieces at the
    // first forward (one all-gather over P_x) and again whenever a piece changes.
    std::optional<shape_t> input_shape = std::nullopt;
    // 1, 2 or 3 (the "1d/2d/3d" of the layer's name); 0: the global shape decides (its rank - 2).
    std::size_t spatial_dims = 0;
};

}  // namespace distdl
