#pragma once
// Random Sequential cases (distdl-verify --random): chains of 2-4 convolutions and poolings
// (some ending in Flatten and Linear layers), or of 2-4 Linear layers.
#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/random_draws.hpp"

namespace distdl::verify {

// Fills `c` with a Sequential case of batch `batch` in a world of at most max_world workers. One
// chain in 4, as `spoiler` draws it, is 2-4 Linear layers, each on its own random partitions and
// workers, or taking its input on the partition the layer before left its output on; the others
// have `dims` spatial dimensions and 2-4 stages of FeatureConv, ChannelConv, GeneralConv, the
// Conv selector, MaxPool and AvgPool, each kernel fitting the extents the chain gives it (max
// pooling without windows of padding only, whose -inf a later convolution would make NaN), each
// stage on its own random partitions and workers, or on the partition the stage before left its
// output on where its layout allows. Repartitions join the others (never splitting an extent of
// 1). One chain of convolutions and poolings in 6, as `spoiler` draws it, is spoilt so that one
// of them refuses the input shape the chain gives it (one input channel more, or a kernel that
// does not fit): returns the refusal's text, else nothing. One chain of convolutions and
// poolings in 3 (spoilt or not) then gets a classifier's head: a Repartition to a partition that
// splits the batch only, Flatten, and 1 or 2 Linear layers (half the time a ReLU between the
// two); one head of an unspoilt chain in 4
// lacks the Repartition where the last partition splits the image or the channels, and Flatten
// must refuse it (the refusal's text is returned). Half the convolutions of those chains are
// followed by a ReLU. Spoiler's draws leave d's as they were.
std::optional<std::string> add_sequential(nlohmann::json& c, draws& d, draws& spoiler, std::size_t max_world,
                                          std::size_t batch, std::size_t dims);

}  // namespace distdl::verify
