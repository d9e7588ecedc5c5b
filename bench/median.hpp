#pragma once
// The median of a list of numbers (the mean of the middle two for an even count; 0 for none),
// shared by distdl-bench (a benchmark's median iteration) and its report's comparer.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace distdl::bench {

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n == 0 ? 0.0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace distdl::bench
