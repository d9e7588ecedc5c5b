#pragma once
// Regression check: each workload's ratio to its baseline (ours' time / baseline's time) in a
// new run against an old one. Ratios, not times, so that a slower or busier machine does not
// count as a regression. A workload regresses when new > old * (1 + tolerance). A workload
// whose baseline ran faster than `min_baseline_seconds` per iteration (in either run) is
// skipped: its ratio measures the clock, not the code (memcpy of 1 KiB takes ~0.1 us).
#include <ostream>
#include <string>
#include <vector>

#include "bench/report/results.hpp"

namespace distdl::bench::report {

struct comparison_row {
    std::string workload;
    std::optional<double> old_ratio, new_ratio;
    std::string verdict;  // "ok", "better", "WORSE", "MISSING" (in old, not in new), "new", "skipped"
};

struct comparison {
    std::vector<comparison_row> rows;
    int worse = 0;
    int missing = 0;
    bool passed() const { return worse == 0 && missing == 0; }
};

constexpr double default_tolerance = 0.25;
constexpr double default_min_baseline_seconds = 1e-6;

comparison compare(const results& old_run, const results& new_run, double tolerance = default_tolerance,
                   double min_baseline_seconds = default_min_baseline_seconds);

// A Markdown table of the rows and a closing line saying what failed; returns the exit
// status: 0 when nothing regressed or went missing, 1 otherwise.
int print_comparison(std::ostream& out, const comparison& c, double tolerance);

}  // namespace distdl::bench::report
