#pragma once
// Options of the distributed pooling layers (MaxPool1d/2d/3d, AvgPool1d/2d/3d; layers/pool_max.hpp,
// layers/pool_avg.hpp), named as the serial layers name them. Each list has one entry per
// spatial dimension, or a single entry used for every spatial dimension.
#include <cstddef>
#include <vector>

namespace distdl {

struct pool_options {
    std::vector<std::size_t> kernel_size = {};  // required
    std::vector<std::size_t> stride = {};       // empty: kernel_size
    std::vector<std::size_t> padding = {};      // empty: 0
    std::vector<std::size_t> dilation = {};     // empty: 1 (max pooling only)
    // 1, 2 or 3 (the "1d/2d/3d" of the layer's name); 0: the global shape decides (its rank - 2).
    std::size_t spatial_dims = 0;
};

}  // namespace distdl
