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
// when every attempt is worse. An attempt is worse when its ratio is, and ours' own time is too:
// more than the tolerance above the old one times the machine's speed change (the median, over
// the workloads of the same transport and worker count, or of the layer benchmarks however few
// they are, of new baseline time / old baseline time). A ratio that
// grew only because this workload's baseline ran faster than before (the simulator's memcpy
// varies 2-3x between runs on a busy 2-core machine) is no regression of ours.
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
    // within tolerance in a re-run), "ours ok" (the ratio worse in every attempt, ours' own
    // time not, allowing for the machine's speed: its baseline ran faster, or the machine
    // slower), "MISSING" (in old with a ratio, none in new), "new" (no old ratio to compare
    // with), "skipped" (baseline below the floor)
    std::string verdict;
    // Of a flagged workload: seconds per iteration of ours and baseline, old and in each attempt
    // (the first run, then the re-runs), and the machine's speed change its baselines showed.
    double old_ours = 0, old_baseline = 0;
    std::vector<double> attempt_ours, attempt_baselines;
    double machine_factor = 1;
    std::string machine_group;  // whose baselines gave machine_factor ("sim w16", "mpi", "layers")

    int attempts() const { return 1 + static_cast<int>(retry_ratios.size()); }
    // The ratio of each attempt: the first run's, then the re-runs'.
    std::vector<double> attempt_ratios() const;
    // The ratio the verdict rests on: the smallest of all attempts.
    std::optional<double> best_ratio() const;
};

struct comparison {
    std::vector<comparison_row> rows;
    int worse = 0;
    int missing = 0;
    int compared = 0;  // rows whose old and new ratios were set against each other (not new, skipped, missing)
    // A comparison of nothing (every workload new or skipped) proves nothing: it does not pass.
    bool passed() const { return worse == 0 && missing == 0 && compared > 0; }
    // The workloads whose verdict is WORSE so far (what a further re-run should repeat).
    std::vector<std::string> worse_workloads() const;
};

constexpr double default_tolerance = 0.25;
constexpr double default_min_baseline_seconds = 1e-6;

comparison compare(const results& old_run, const results& new_run, double tolerance = default_tolerance,
                   double min_baseline_seconds = default_min_baseline_seconds,
                   const std::vector<results>& retries = {});

// A Markdown table of the rows (with the attempts of every flagged row and the ratio of each)
// and closing lines naming what failed; returns the exit status: 0 when something was compared
// and nothing regressed or went missing, 1 otherwise.
int print_comparison(std::ostream& out, const comparison& c, double tolerance);

}  // namespace distdl::bench::report
