#pragma once
// The benchmark results the report is made of. A Google Benchmark name is
// "<role>/<workload>" (see bench/README.md): each workload gathers the runs of its roles
// ("ours", "baseline", others), and its ratio is ours' time over baseline's.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace distdl::bench::report {

struct role_result {
    double seconds = 0;  // per iteration: the mean, or the run's median_seconds when it gives one
    double bytes_per_second = 0;
    std::optional<double> messages_per_iteration, faults_per_iteration;
};

struct workload_result {
    std::string label;                        // shapes and partitions, as the benchmark says
    std::map<std::string, role_result> roles;  // by role name
    std::optional<double> target;             // the goal the benchmark gives (its runs' "target_ratio")

    // ours' time over `role`'s (none when either is missing or the role took no time).
    std::optional<double> ratio(const std::string& role = "baseline") const;
};

// Workload names in a readable order: segment by segment, numbers inside a segment compared
// as numbers ("w4" before "w16").
struct workload_order {
    bool operator()(const std::string& a, const std::string& b) const;
};

struct results {
    std::string cpu;
    unsigned cores = 0;
    std::string commit;
    std::string date;
    bool quick = false;
    std::map<std::string, workload_result, workload_order> workloads;  // by workload name
};

// "<role>/<workload>" with Google Benchmark's suffixes ("/iterations:10", "/manual_time", ...)
// removed; throws when the name has no role.
std::pair<std::string, std::string> split_name(const std::string& benchmark_name);

// Google Benchmark writes a non-finite statistic (the cv of a counter that is always 0, with
// repetitions) as a bare NaN or inf, which JSON has not: the text with every such word outside
// strings (any case, signed) made null, for the parser.
std::string null_for_non_finite(const std::string& text);

// Adds the runs of one Google Benchmark JSON document (--benchmark_format=json). A run's time
// is its median_seconds counter when it has one, else its mean (real_time). With repetitions,
// the median aggregate is used when present (also alone: --benchmark_report_aggregates_only),
// else the mean of the runs. A time that is not a positive number is refused, naming the run.
void add_benchmark_json(results& into, const nlohmann::json& document);

// The summary written as bench.json, and read back by the comparer, which refuses a field of
// the wrong type or a time that is not positive, naming the workload and the field.
nlohmann::json to_json(const results& r);
results from_json(const nlohmann::json& document);

// Segments of a workload name ("broadcast/mpi/w4/large" -> {"broadcast", "mpi", "w4", "large"}).
std::vector<std::string> segments(const std::string& workload);
// The largest acceptable ratio to baseline (issue 7's targets), when the workload has one:
// Open MPI 1.1 (large) and 1.3 (small sizes); simulator 2.0 at the large size (>= 0.5x memcpy
// bandwidth).
std::optional<double> target_ratio(const std::string& workload);
// A workload's target: the one its benchmark gives (the layer benchmarks' goals), else by name.
std::optional<double> target_of(const std::string& workload, const workload_result& w);

}  // namespace distdl::bench::report
