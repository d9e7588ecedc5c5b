#pragma once
// Number formatting shared by the Markdown and SVG writers.
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>

namespace distdl::bench::report {

// "12.3 us", "4.56 ms", "1.20 s".
inline std::string format_time(double seconds) {
    std::ostringstream s;
    s << std::setprecision(3);
    if (seconds < 1e-3) s << seconds * 1e6 << " us";
    else if (seconds < 1) s << seconds * 1e3 << " ms";
    else s << seconds << " s";
    return s.str();
}

inline std::string format_fixed(double v, int digits) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(digits) << v;
    return s.str();
}

inline std::string format_optional(const std::optional<double>& v, int digits) {
    return v ? format_fixed(*v, digits) : "-";
}

// Bytes per second as GB/s (10^9).
inline std::string format_rate(double bytes_per_second) { return format_fixed(bytes_per_second / 1e9, 2); }

}  // namespace distdl::bench::report
