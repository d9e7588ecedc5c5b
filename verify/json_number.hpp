#pragma once
// JSON has no infinity or NaN; errors can be either (a shape mismatch is an infinite error),
// so they travel as the strings "inf", "-inf" and "nan".
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

namespace distdl::verify {

inline nlohmann::json number_to_json(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

inline double number_from_json(const nlohmann::json& v) {
    if (v.is_number()) return v.get<double>();
    const auto text = v.get<std::string>();
    if (text == "inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace distdl::verify
