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

}  // namespace distdl::verify
