#pragma once
// The overhead goals of the layer benchmarks (conv_bench, pool_bench, linear_bench): each
// layer's CPU time over its baseline's, measured in the same run. The machines these run on
// are shared and noisy (15-40% between runs of the same code), so by default every benchmark
// runs several repetitions in random interleaving (a slow spell hits layers and baselines
// alike), and the ratio is given two ways: from each benchmark's fastest repetition
// (interference only ever adds time, so the minimum is the estimate of the code's own cost) and
// from the medians.
//
//   measure_steps(state, step)       a baseline's loop, warmed up as the layers' are
//   register: BENCHMARK(f)->Apply(measured)
//   main: return run_layer_benchmarks(argc, argv, about, compare, filters, floor_of);
// compare gives each layer its baseline, goal and workload name; filters, each workload's
// benchmarks (layer, baseline, kernels alone) as a --benchmark_filter regex; floor_of (optional)
// names each layer's local kernels alone on its workers without data movement, and a second
// table then splits the layer's overhead into theirs and the movement's. --report-out FILE also
// writes the pairs for distdl-bench-report (bench/README.md), so that scripts/bench.sh reports
// them and checks them for regressions with the primitives; --workloads runs only some of them
// (scripts/bench.sh's re-runs of the worse ones).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

namespace distdl::bench {

// A serial baseline's loop: one step before measuring, as run_stepped_world gives the layers
// (outputs and scratch reach their steady state: no first-use page faults in the measured time).
template <class Step>
void measure_steps(benchmark::State& state, Step&& step) {
    step();
    for (auto _ : state) step();
}

inline double fastest(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

// How every layer benchmark is registered, BENCHMARK(f)->Apply(measured): CPU time of the whole
// process (summed over the simulated workers), in milliseconds, with the "min" statistic the
// closing table reads.
inline void measured(benchmark::internal::Benchmark* b) {
    b->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime()->ComputeStatistics("min", fastest);
}

// argv with 5 repetitions of at least 0.5 s each (quick: 2 of at least 0.05 s), randomly
// interleaved, shown as aggregates.
inline std::vector<char*> with_repeated_runs(int argc, char** argv, bool quick) {
    // Kept in step with detail::print_help().
    static char repetitions[] = "--benchmark_repetitions=5", quick_repetitions[] = "--benchmark_repetitions=2";
    static char interleave[] = "--benchmark_enable_random_interleaving=true";
    static char min_time[] = "--benchmark_min_time=0.5", quick_min_time[] = "--benchmark_min_time=0.05";
    static char aggregates[] = "--benchmark_display_aggregates_only=true";
    std::vector<char*> args{argv[0], quick ? quick_repetitions : repetitions, interleave,
                            quick ? quick_min_time : min_time, aggregates};
    args.insert(args.end(), argv + 1, argv + argc);
    args.push_back(nullptr);
    return args;
}

// What a benchmark is measured against: its baseline's name (empty: nothing), the goal for its
// CPU time over the baseline's, and the pair's workload name in distdl-bench-report's summary
// ("conv_layer/sim/w4/feature": group, transport, workers, what).
struct comparison {
    std::string baseline;
    double goal = 0;
    std::string workload;
};

// Prints as the console reporter does, and keeps the "min" and "median" CPU time of every
// benchmark for print().
class goal_summary : public benchmark::ConsoleReporter {
  public:
    // The comparison of a benchmark by its name (function/args): {"conv_serial/0", 1.2}, or
    // {} for a benchmark that is not measured against a goal.
    using comparison_of = std::function<comparison(const std::string&)>;
    // A related benchmark's name (empty: none): a layer's local kernels alone on its workers
    // ("channel_kernels_2x2").
    using benchmark_of = std::function<std::string(const std::string&)>;
    // Each workload's benchmarks as a --benchmark_filter regex (its keys: the valid --workloads):
    // "conv_layer/sim/w4/channel" -> "^(channel_conv_2x2|channel_kernels_2x2|conv_serial/0)(/|$)"
    using workload_filters = std::map<std::string, std::string>;

    explicit goal_summary(comparison_of compare, benchmark_of floor = {}, OutputOptions options = OO_Defaults)
        : ConsoleReporter(options), compare_(std::move(compare)), floor_(std::move(floor)) {}

    void ReportRuns(const std::vector<Run>& runs) override {
        for (const Run& run : runs) {
            if (run.run_type != Run::RT_Aggregate || run.error_occurred) continue;
            const std::string name = key(run);
            // In seconds: benchmarks of one comparison may report in different units.
            const double seconds = run.GetAdjustedCPUTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
            if (run.aggregate_name == "min") fastest_[name] = seconds;
            if (run.aggregate_name == "median") median_[name] = seconds;
        }
        ConsoleReporter::ReportRuns(runs);
    }

    // The table (printed only: on these machines a miss is not a failure of the run).
    void print() const {
        std::printf("\nOverhead: CPU time (summed over the workers) / the baseline's, against each goal\n"
                    "(fastest: each benchmark's fastest repetition; median: the medians)\n");
        int layer_width = 5, base_width = 8;
        for (const auto& entry : fastest_) {
            const std::string base = compare_(entry.first).baseline;
            if (base.empty()) continue;
            layer_width = std::max(layer_width, static_cast<int>(entry.first.size()));
            base_width = std::max(base_width, static_cast<int>(base.size()));
        }
        std::printf("  %-*s  %-*s  %7s  %7s  %s\n", layer_width, "layer", base_width, "baseline", "fastest", "median",
                    "goal");
        if (fastest_.empty()) std::printf("  (no aggregates: run with --benchmark_repetitions of 2 or more)\n");
        for (const auto& entry : fastest_) {
            const std::string& name = entry.first;
            const comparison c = compare_(name);
            if (c.baseline.empty()) continue;
            double by_fastest = 0, by_median = 0;
            if (!ratios(name, c.baseline, by_fastest, by_median)) {
                std::printf("  %-*s  %-*s  (baseline not run: no ratio)\n", layer_width, name.c_str(), base_width,
                            c.baseline.c_str());
                continue;
            }
            const char* verdict = by_fastest > c.goal  ? "missed"
                                  : by_median > c.goal ? "met by the fastest only"
                                                       : "met";
            std::printf("  %-*s  %-*s  %7.2f  %7.2f  <= %.2f %s\n", layer_width, name.c_str(), base_width,
                        c.baseline.c_str(), by_fastest, by_median, c.goal, verdict);
        }
        if (floor_) print_floors();
    }

    // The compared pairs as Google Benchmark JSON for distdl-bench-report: per pair, runs
    // "ours/<workload>" (the layer), "baseline/<workload>" and, where floor_of names them,
    // "kernels/<workload>" (its local kernels alone), each timed by its fastest repetition's CPU
    // time, with the goal as "target_ratio". `quick`: fewer, shorter repetitions.
    nlohmann::json report_json(bool quick) const {
        nlohmann::json runs = nlohmann::json::array();
        for (const auto& entry : fastest_) {
            const std::string& layer = entry.first;
            const comparison c = compare_(layer);
            if (c.baseline.empty() || c.workload.empty() || !fastest_.count(c.baseline)) continue;
            const std::string label = layer + " over " + c.baseline + ": CPU time, fastest repetition";
            const auto add = [&](const std::string& role, const std::string& benchmark) {
                const auto it = fastest_.find(benchmark);
                if (it == fastest_.end()) return;
                const std::string name = role + "/" + c.workload;
                runs.push_back({{"name", name}, {"run_name", name}, {"run_type", "iteration"},
                                {"real_time", it->second}, {"time_unit", "s"}, {"target_ratio", c.goal},
                                {"label", label}});
            };
            add("ours", layer);
            add("baseline", c.baseline);
            if (floor_) add("kernels", floor_(layer));
        }
        return {{"context", {{"quick", quick ? "true" : "false"}}}, {"benchmarks", runs}};
    }

  private:
    // fastest / median of a over b, or false when either was not run.
    bool ratios(const std::string& a, const std::string& b, double& by_fastest, double& by_median) const {
        const auto af = fastest_.find(a), bf = fastest_.find(b), am = median_.find(a), bm = median_.find(b);
        if (af == fastest_.end() || bf == fastest_.end() || am == median_.end() || bm == median_.end()) return false;
        by_fastest = af->second / bf->second;
        by_median = am->second / bm->second;
        return true;
    }

    // Each layer's overhead split in two: its local kernels alone on the same workers (the split
    // and the machine: concurrency, smaller problems) over the baseline, and the layer over
    // them (the data movement).
    void print_floors() const {
        std::vector<std::pair<std::string, std::array<double, 4>>> rows;  // layer: floor/base, layer/floor
        int width = 5;
        for (const auto& entry : fastest_) {
            const std::string& name = entry.first;
            const std::string base = compare_(name).baseline, floor = base.empty() ? std::string() : floor_(name);
            std::array<double, 4> r{};
            if (floor.empty() || !ratios(floor, base, r[0], r[1]) || !ratios(name, floor, r[2], r[3])) continue;
            rows.emplace_back(name, r);
            width = std::max(width, static_cast<int>(name.size()));
        }
        if (rows.empty()) return;
        std::printf("\nWhere it goes: the layer's local kernels alone on the same workers, without data movement\n"
                    "(fastest / median)\n  %-*s  %-22s  %s\n",
                    width, "layer", "kernels alone/baseline", "layer/kernels alone");
        for (const auto& [name, r] : rows)
            std::printf("  %-*s  %11.2f / %-8.2f  %8.2f / %.2f\n", width, name.c_str(), r[0], r[1], r[2], r[3]);
    }

    static std::string key(const Run& run) {
        return run.run_name.args.empty() ? run.run_name.function_name
                                         : run.run_name.function_name + "/" + run.run_name.args;
    }

    comparison_of compare_;
    benchmark_of floor_;
    std::map<std::string, double> fastest_, median_;  // CPU seconds per iteration, by benchmark
};

namespace detail {
inline const char* about_layer_benchmark = "";  // run_layer_benchmarks' `about`, for print_help

// Whether the console shows colours: as Google Benchmark's own reporter would
// (--benchmark_color=true|false|auto, auto: when stdout is a terminal), which a reporter of our
// own does not get by itself.
inline bool colored(const std::vector<char*>& args) {
    std::string value = "auto";
    for (const char* a : args)
        if (std::strncmp(a, "--benchmark_color=", 18) == 0) value = a + 18;
    if (value == "auto") return isatty(fileno(stdout)) != 0;
    return value == "true" || value == "yes" || value == "1";
}

inline void print_help() {
    std::printf(
        "%s\n\n"
        "By default every benchmark runs 5 repetitions of at least 0.5 s each, in random\n"
        "interleaving, and the console shows their aggregates (mean, median, stddev, cv, min):\n"
        "  --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true\n"
        "  --benchmark_min_time=0.5 --benchmark_display_aggregates_only=true\n"
        "(flags given on the command line win). The closing table gives each layer's CPU time over\n"
        "its baseline's from the fastest repetitions and from the medians, against the goal; it\n"
        "needs 2 or more repetitions and the baseline in the same run.\n\n"
        "  --quick            2 repetitions of at least 0.05 s (direction only)\n"
        "  --report-out FILE  also write each layer, its baseline and its kernels alone (fastest\n"
        "                     repetitions) as Google Benchmark JSON for distdl-bench-report, under\n"
        "                     the workload names <name>_layer/sim/w4/<layer> (the report's; the\n"
        "                     closing table names this program's), with the goals as targets\n"
        "                     (scripts/bench.sh runs it so); exit status 1 when there is nothing to\n"
        "                     write (a single repetition, or a layer without its baseline)\n"
        "  --workloads LIST   run only the benchmarks of these workloads (comma-separated, names as\n"
        "                     in the report: the layer, its baseline, its kernels alone); scripts/\n"
        "                     bench.sh re-runs the worse ones so\n"
        "  (--report-out=FILE and --workloads=LIST work too; -h is --help; a usage error exits 2,\n"
        "  and so does a filter that matches no benchmark)\n\n",
        about_layer_benchmark);
    benchmark::PrintDefaultHelp();
}
}  // namespace detail

// The main of a layer benchmark: `about` (what it measures, and its goals) heads --help and the
// run; the registered benchmarks run with the default flags of with_repeated_runs, then the
// closing table of each benchmark that `compare` gives a baseline and a goal, and where
// floor_of names a layer's kernels-alone benchmark, the table of where its overhead goes;
// --workloads runs the benchmarks `filters` gives for them; -h is --help. Exit status 2 on a
// usage error (an unknown flag or workload, a flag without its value), 1 on a --report-out file
// that cannot be written.
inline int run_layer_benchmarks(int argc, char** argv, const char* about, goal_summary::comparison_of compare,
                                const goal_summary::workload_filters& filters,
                                goal_summary::benchmark_of floor_of = {}) {
    detail::about_layer_benchmark = about;
    // Our flags first, out of argv: Google Benchmark refuses flags it does not know.
    constexpr int usage_error = 2;
    static char help[] = "--help";  // Google Benchmark knows only --help
    bool quick = false;
    std::string report_out, workloads;
    std::vector<char*> rest{argv[0]};
    // --name VALUE or --name=VALUE; false (and a message) when the value is missing (another
    // option in its place: --report-out --quick).
    const auto value_of = [&](int& i, const std::string& name, std::string& value) {
        const std::string a = argv[i];
        const bool next_is_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
        value = a == name ? (next_is_value ? argv[++i] : "") : a.substr(name.size() + 1);
        if (value.empty()) std::fprintf(stderr, "%s: %s needs a value\n", argv[0], name.c_str());
        return !value.empty();
    };
    const auto is = [](const std::string& a, const std::string& name) {
        return a == name || a.rfind(name + "=", 0) == 0;
    };
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quick") {
            quick = true;
        } else if (a == "-h") {
            rest.push_back(help);
        } else if (is(a, "--report-out")) {
            if (!value_of(i, "--report-out", report_out)) return usage_error;
        } else if (is(a, "--workloads")) {
            if (!value_of(i, "--workloads", workloads)) return usage_error;
        } else {
            rest.push_back(argv[i]);
        }
    }
    auto args = with_repeated_runs(static_cast<int>(rest.size()), rest.data(), quick);
    int count = static_cast<int>(args.size()) - 1;
    benchmark::Initialize(&count, args.data(), detail::print_help);
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return usage_error;
    if (!workloads.empty()) {  // replaces any --benchmark_filter
        std::string filter;
        for (std::size_t at = 0; at <= workloads.size();) {
            const std::size_t end = std::min(workloads.find(',', at), workloads.size());
            const std::string workload = workloads.substr(at, end - at);
            const auto known = filters.find(workload);
            if (known == filters.end()) {
                std::string names;
                for (const auto& entry : filters) names += (names.empty() ? "" : ", ") + entry.first;
                std::fprintf(stderr, "%s: --workloads: '%s' is not a workload of this benchmark (its workloads: %s)\n",
                             argv[0], workload.c_str(), names.c_str());
                return usage_error;
            }
            filter += (filter.empty() ? "" : "|") + known->second;
            at = end + 1;
        }
        benchmark::SetBenchmarkFilter(filter);
    }
    std::ofstream report;  // opened before the run, which a bad path should not cost
    if (!report_out.empty()) {
        report.open(report_out);
        if (!report) {
            std::fprintf(stderr, "%s: cannot write --report-out %s\n", argv[0], report_out.c_str());
            return 1;
        }
    }
    std::printf("%s\n", about);
    goal_summary summary(std::move(compare), std::move(floor_of),
                         detail::colored(rest) ? goal_summary::OO_ColorTabular : goal_summary::OO_Tabular);
    const std::size_t ran = benchmark::RunSpecifiedBenchmarks(&summary);
    summary.print();
    benchmark::Shutdown();
    // A run of nothing, or a report of nothing, would pass for a run that measured something.
    if (ran == 0) {
        std::fprintf(stderr, "%s: no benchmark matches the filter given: nothing was run\n", argv[0]);
        if (!report_out.empty()) std::remove(report_out.c_str());
        return usage_error;
    }
    if (!report_out.empty()) {
        const nlohmann::json pairs = summary.report_json(quick);
        if (pairs["benchmarks"].empty()) {
            report.close();
            std::remove(report_out.c_str());
            std::fprintf(stderr,
                         "%s: nothing to write to --report-out %s: it needs a layer and its baseline in the run, "
                         "with 2 or more repetitions\n",
                         argv[0], report_out.c_str());
            return 1;
        }
        report << pairs.dump(1) << "\n";
        report.close();
        if (!report) {
            std::fprintf(stderr, "%s: cannot write --report-out %s\n", argv[0], report_out.c_str());
            return 1;
        }
    }
    return 0;
}

}  // namespace distdl::bench
