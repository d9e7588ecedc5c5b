#pragma once
// Random Sequential cases (distdl-verify --random): chains of 2-4 convolutions and poolings.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/random_draws.hpp"

namespace distdl::verify {

// Fills `c` with a Sequential case of `dims` spatial dimensions and batch `batch` in a world of at
// most max_world workers: 2-4 stages of FeatureConv, ChannelConv, GeneralConv, the Conv selector,
// MaxPool and AvgPool, each kernel fitting the extents the chain gives it (max pooling without
// windows of padding only, whose -inf a later convolution would make NaN), each stage on its own
// random partitions and workers, or on the partition the stage before left its output on where
// its layout allows; Repartitions between the others (never splitting an extent of 1). One chain
// in 6, as `spoiler` draws it, is spoilt so that one convolution or pooling refuses the input
// shape the chain gives it (one input channel more, or a kernel that does not fit): returns the
// refusal's text, else nothing. Spoiler's draws leave d's, and so the chains, as they were.
std::optional<std::string> add_sequential(nlohmann::json& c, draws& d, draws& spoiler, std::size_t max_world,
                                          std::size_t batch, std::size_t dims);

}  // namespace distdl::verify
