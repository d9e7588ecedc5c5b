#pragma once
// Refusal cases of distdl-verify --random: a valid random case document spoilt in one way its
// layer must refuse on every worker, and the text the refusal must contain, worded as the layer
// words it (computed here from the case: which dimension, which worker, which shapes). See
// random_cases.hpp for the spoilings drawn.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "verify/random_draws.hpp"

namespace distdl::verify {

// Spoils `c` (a case that passes) and returns the expected refusal text; nothing (and `c`
// unchanged) for a layer and case without a spoiling here. A case that learns its input shape
// keeps doing so only when no world rank is idle (a first-forward refusal reaches the layer's
// workers only).
std::optional<std::string> spoil(nlohmann::json& c, draws& d);

// How a layer refuses a kernel that does not fit spatial dimension e of the input (length before
// padding): the poolings, HaloExchange and the convolutions word it differently.
std::string kernel_fit_refusal(const std::string& layer, std::size_t e, std::size_t length, std::size_t k,
                               std::size_t p, std::size_t dil);

// How a convolution refuses a given input shape of other channels than in_channels.
std::string channels_refusal(const random_draws::sizes& x_shape, std::size_t in_channels);

}  // namespace distdl::verify
