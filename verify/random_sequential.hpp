#pragma once
// Random Sequential cases (distdl-verify --random): chains of 2-4 convolutions and poolings.
#include <cstddef>

#include <nlohmann/json.hpp>

#include "verify/random_draws.hpp"

namespace distdl::verify {

// Fills `c` with a Sequential case of `dims` spatial dimensions and batch `batch` in a world of at
// most max_world workers: 2-4 stages of FeatureConv, ChannelConv, GeneralConv, the Conv selector,
// MaxPool and AvgPool, each kernel fitting the extents the chain gives it (max pooling without
// windows of padding only, whose -inf a later convolution would make NaN), each stage on its own
// random partitions and workers, or on the partition the stage before left its output on where
// its layout allows; Repartitions between the others (never splitting an extent of 1).
void add_sequential(nlohmann::json& c, draws& d, std::size_t max_world, std::size_t batch, std::size_t dims);

}  // namespace distdl::verify
