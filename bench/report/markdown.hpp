#pragma once
// reports/bench.md: machine, commit, date, how it was measured, the ratio picture, then one
// table per primitive (first segment of the workload name) and the simulator-vs-MPI table.
#include <ostream>
#include <string>

#include "bench/report/results.hpp"

namespace distdl::bench::report {

void write_markdown(std::ostream& out, const results& r, const std::string& svg_file);

}  // namespace distdl::bench::report
