#pragma once
// reports/bench.svg: one horizontal bar per workload, ours / baseline time on a log scale,
// green where the target is met, red where missed, grey where the workload has no target.
#include <ostream>

#include "bench/report/results.hpp"

namespace distdl::bench::report {

void write_svg(std::ostream& out, const results& r);

}  // namespace distdl::bench::report
