#pragma once
// Regression check: each workload's ratio to its baseline (ours' time / baseline's time) in a
// new run against an old one. Ratios, not times, so that a slower or busier machine does not
// count as a regression. A workload is flagged when new > old * (1 + tolerance). A workload
// whose baseline ran faster than `min_baseline_seconds` per iteration (in either run) is
// skipped: its ratio measures the clock, not the code (memcpy of 1 KiB takes ~0.1 us).
//
// A flagged workload is confirmed by re-runs (`retries`: summaries of later runs of the flagged
// workloads, oldest first; scripts/bench.sh makes them). Noise on a shared machine only ever
// slows a run down, so the best ratio of all attempts counts: the workload is a regression only
// when every attempt is worse.
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "bench/report/results.hpp"

namespace distdl::bench::report {

struct comparison_row {
    std::string workload;
    std::optional<double> old_ratio, new_ratio;  // new_ratio: the first attempt's
    std::vector<double> retry_ratios;            // the re-runs of a flagged workload, in order
    // "ok", "better", "WORSE" (every attempt worse: a regression), "noise" (worse at first,
    // within tolerance in a re-run), "MISSING" (in old with a ratio, none in new), "new" (no
    // old ratio to compare with), "skipped" (baseline below the floor)
    std::string verdict;
    // Seconds per iteration of ours and baseline, old and in the best attempt (to tell a slower
    // ours from a faster baseline); 0 when absent.
    double old_ours = 0, old_baseline = 0, best_ours = 0, best_baseline = 0;

    int attempts() const { return 1 + static_cast<int>(retry_ratios.size()); }
    // The ratio the verdict rests on: the smallest of all attempts.
    std::optional<double> best_ratio() const;
};

struct comparison {
    std::vector<comparison_row> rows;
    int worse = 0;
    int missing = 0;
    bool passed() const { return worse == 0 && missing == 0; }
    // The workloads whose verdict is WORSE so far (what a further re-run should repeat).
    std::vector<std::string> worse_workloads() const;
};

constexpr double default_tolerance = 0.25;
constexpr double default_min_baseline_seconds = 1e-6;

comparison compare(const results& old_run, const results& new_run, double tolerance = default_tolerance,
                   double min_baseline_seconds = default_min_baseline_seconds,
                   const std::vector<results>& retries = {});

// A Markdown table of the rows (with the attempts of every flagged row and the ratio of each)
// and closing lines naming what failed; returns the exit status: 0 when nothing regressed or
// went missing, 1 otherwise.
int print_comparison(std::ostream& out, const comparison& c, double tolerance);

}  // namespace distdl::bench::report
