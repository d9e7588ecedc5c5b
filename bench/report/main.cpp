// distdl-bench-report: turns distdl-bench's Google Benchmark JSON into reports/bench.md,
// bench.json and bench.svg, and compares two bench.json summaries (regression check).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <iostream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/report/compare.hpp"
#include "bench/report/markdown.hpp"
#include "bench/report/results.hpp"
#include "bench/report/svg.hpp"

namespace {

using namespace distdl::bench::report;

const std::string synopsis =
    "usage: distdl-bench-report [--out-dir DIR] [--commit HASH] [--date TEXT] RUN.json...\n"
    "       distdl-bench-report --compare OLD.json NEW.json [--retry RETRY.json]... [--tolerance T]\n"
    "                           [--min-baseline S] [--exclude REGEX] [--list-worse]\n";
const std::string usage = synopsis +
    "\n"
    "First form: reads Google Benchmark JSON files written by distdl-bench (--out) or by the layer\n"
    "benchmarks conv_bench, pool_bench and linear_bench (--report-out) and writes DIR/bench.md,\n"
    "DIR/bench.json (the summary) and DIR/bench.svg (default DIR: reports; created if missing).\n"
    "A benchmark in two files is refused.\n"
    "Second form: compares two summaries (bench.json) workload by workload: a ratio to baseline\n"
    "(ours / baseline time) that grew by more than T (default 0.25 = 25%) is flagged; each\n"
    "--retry (a summary of a re-run of the flagged workloads, oldest first; scripts/bench.sh makes\n"
    "them) adds an attempt, and the best ratio of the attempts counts (noise only slows a run\n"
    "down): a workload worse in every attempt is WORSE, one that was not is noise. An attempt is\n"
    "worse when ours' own time is too, allowing for the machine's speed (the median change of the\n"
    "baselines' times of its transport and worker count, or of its transport where fewer than 3\n"
    "workloads tell; the layer benchmarks' <name>_layer workloads: of their own baselines): a\n"
    "ratio worse while ours' own time is not (its baseline ran faster, or the machine slower) is\n"
    "'ours ok' and passes; a ratio that fell by more than T is 'better'. A workload of OLD without\n"
    "a ratio in NEW is MISSING; one of NEW without a ratio in OLD is new; one whose baseline took\n"
    "less than S seconds per iteration in either run (default 1e-6) is skipped, as its ratio\n"
    "measures the clock. Prints a table (the attempts of each flagged workload with their ratios)\n"
    "and the names of the regressions; exit status 0 when something was compared and nothing is\n"
    "WORSE or MISSING, 1 otherwise (also when nothing was compared), 2 on bad input (also an OLD\n"
    "without any ratio).\n"
    "--exclude REGEX leaves the workloads whose names it matches (ECMAScript, anywhere in the\n"
    "name) out of every run compared: for workloads not run on purpose (scripts/bench.sh passes\n"
    "the layer benchmarks that --layers left out), which would otherwise be MISSING. One that\n"
    "leaves OLD without a ratio (\"\" matches every name) is bad input.\n"
    "Options take their value as the next argument or after '=' (--tolerance=0.5); numbers are\n"
    "plain decimals (0.25, 1e-6).\n"
    "--list-worse prints only the WORSE workloads, one per line (what to re-run), exit status 0.\n"
    "-h, --help prints this text.\n";

// A report file, Google Benchmark's (`benchmark_output`: NaN and inf allowed) or a summary.
nlohmann::json read_json(const std::string& path, bool benchmark_output) {
    if (std::filesystem::is_directory(path)) throw std::runtime_error(path + " is a directory, not a JSON file");
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    std::ostringstream text;
    text << in.rdbuf();
    if (text.str().find_first_not_of(" \t\r\n") == std::string::npos)
        throw std::runtime_error(path + " is empty (a run that wrote nothing, or failed before writing?)");
    // Neither file nests deeper than a few levels; a deeper one would only cost stack.
    constexpr int max_depth = 64;
    const auto shallow = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > max_depth)
            throw std::runtime_error(path + ": nested deeper than " + std::to_string(max_depth) +
                                     " levels: not a benchmark file");
        return true;
    };
    try {
        return nlohmann::json::parse(benchmark_output ? null_for_non_finite(text.str()) : text.str(), shallow);
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + " is not valid JSON: " + e.what());
    }
}

// read(), with `path` (once) and for a JSON type error `what_json` in any error it raises.
template <class F>
auto naming_file(const std::string& path, const std::string& what_json, F&& read) {
    try {
        return read();
    } catch (const nlohmann::json::exception& e) {
        throw std::runtime_error(path + ": " + what_json + e.what());
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        throw std::runtime_error(what.rfind(path, 0) == 0 ? what : path + ": " + what);
    }
}

std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
        }
    return "";
}

std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", std::gmtime(&t));
    return text;
}

void write_file(const std::string& path, const std::string& text) {
    std::error_code ignored;  // a folder that cannot be made shows as the file that cannot be written
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ignored);
    std::ofstream out(path);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + path);
}

double non_negative(const std::string& flag, const std::string& text) {
    // Plain decimals, as scripts/bench.sh takes them (no sign, hex, spaces or inf); strtod, not
    // stod: a value too small for a double (1e-400) is 0 or nearly, not an error.
    static const std::regex decimal(R"(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?)");
    const double v = std::regex_match(text, decimal) ? std::strtod(text.c_str(), nullptr) : -1;
    if (!(v >= 0) || !std::isfinite(v))
        throw std::invalid_argument(flag + " must be a number >= 0, got '" + text + "'");
    return v;
}

int run(const std::vector<std::string>& args) {
    std::string out_dir = "reports", commit, date = utc_now(), compare_old, compare_new;
    double tolerance = default_tolerance;
    double min_baseline = default_min_baseline_seconds;
    bool comparing = false, list_worse = false;
    std::vector<std::string> inputs, retries, report_options, compare_options;
    std::optional<std::regex> exclude;
    for (std::size_t i = 0; i < args.size(); ++i) {
        // "--name=value" is "--name value".
        const std::size_t equals = args[i].rfind("--", 0) == 0 ? args[i].find('=') : std::string::npos;
        const std::string a = args[i].substr(0, equals);
        std::optional<std::string> attached;
        if (equals != std::string::npos) attached = args[i].substr(equals + 1);
        // An option's value; another option in its place means the value is missing.
        auto value = [&](const char* what = "a value") -> std::string {
            if (attached) return *std::exchange(attached, std::nullopt);
            if (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)
                throw std::invalid_argument(a + " needs " + what);
            return args[++i];
        };
        if (a == "--out-dir" || a == "--commit" || a == "--date") report_options.push_back(a);
        if (a == "--tolerance" || a == "--min-baseline" || a == "--retry" || a == "--exclude" || a == "--list-worse")
            compare_options.push_back(a);
        if (a == "--help" || a == "-h") {
            std::cout << usage;
            return 0;
        } else if (a == "--out-dir") {
            out_dir = value();
        } else if (a == "--commit") {
            commit = value();
        } else if (a == "--date") {
            date = value();
        } else if (a == "--tolerance") {
            tolerance = non_negative(a, value());
        } else if (a == "--min-baseline") {
            min_baseline = non_negative(a, value());
        } else if (a == "--compare") {
            comparing = true;
            compare_old = value("two files, OLD.json NEW.json");
            compare_new = value("two files, OLD.json NEW.json");
        } else if (a == "--retry") {
            retries.push_back(value());
        } else if (a == "--list-worse") {
            list_worse = true;
        } else if (a == "--exclude") {
            const std::string pattern = value();
            try {
                exclude.emplace(pattern);
            } catch (const std::regex_error& e) {
                throw std::invalid_argument("--exclude '" + pattern + "' is not a regular expression: " + e.what());
            }
        } else if (a.size() > 1 && a[0] == '-') {
            throw std::invalid_argument("unknown option '" + a + "'");
        } else {
            inputs.push_back(a);
        }
        if (attached) throw std::invalid_argument(a + " takes no value, got '" + args[i] + "'");
    }
    // An option of the other form would be ignored: say so instead.
    if (comparing && !report_options.empty())
        throw std::invalid_argument(report_options.front() + " is for writing a report, not for --compare");
    if (!comparing && !compare_options.empty())
        throw std::invalid_argument(compare_options.front() + " needs --compare");
    if (comparing) {
        if (!inputs.empty())
            throw std::invalid_argument("--compare takes exactly OLD.json NEW.json, got a third file '" +
                                        inputs.front() + "'");
        // A summary without the excluded workloads (how many, in *left_out).
        const auto load = [&](const std::string& path, std::size_t* left_out = nullptr) {
            results r = naming_file(path, "", [&] { return from_json(read_json(path, false)); });
            const auto excluded = [&](const auto& w) { return exclude && std::regex_search(w.first, *exclude); };
            const std::size_t erased = std::erase_if(r.workloads, excluded);
            if (left_out != nullptr) *left_out = erased;
            return r;
        };
        std::size_t excluded_old = 0;
        const results old_run = load(compare_old, &excluded_old);
        const results new_run = load(compare_new);
        if (std::none_of(old_run.workloads.begin(), old_run.workloads.end(), [](const auto& w) {
                return w.second.ratio().has_value();
            }))
            throw std::runtime_error(compare_old + ": no workload with a ratio to compare with" +
                                     (exclude ? " (after --exclude, which left out " +
                                                    std::to_string(excluded_old) + " of OLD's workloads)"
                                              : ""));
        std::vector<results> retry_runs;
        for (const auto& path : retries) retry_runs.push_back(load(path));
        const comparison c = compare(old_run, new_run, tolerance, min_baseline, retry_runs);
        if (list_worse) {
            for (const auto& name : c.worse_workloads()) std::cout << name << "\n";
            return 0;
        }
        return print_comparison(std::cout, c, tolerance);
    }
    if (inputs.empty()) throw std::invalid_argument("no benchmark JSON files given");
    results r;
    r.cpu = cpu_model();
    r.cores = std::thread::hardware_concurrency();
    r.commit = commit;
    r.date = date;
    for (const auto& path : inputs)
        naming_file(path, "not Google Benchmark JSON output: ", [&] { add_benchmark_json(r, read_json(path, true)); });
    // An empty report would pass for a run of nothing (aggregates are read; runs were there).
    if (r.workloads.empty()) throw std::runtime_error("no benchmark runs in the files given");
    std::ostringstream md, svg;
    write_markdown(md, r, "bench.svg");
    write_svg(svg, r);
    write_file(out_dir + "/bench.md", md.str());
    write_file(out_dir + "/bench.json", to_json(r).dump(2) + "\n");
    write_file(out_dir + "/bench.svg", svg.str());
    std::cout << "distdl-bench-report: wrote " << out_dir << "/bench.md, bench.json, bench.svg (" << r.workloads.size()
              << " workloads)\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::invalid_argument& e) {
        // The synopsis only: the whole help would bury the one line that says what was wrong.
        std::cerr << "distdl-bench-report: " << e.what() << "\n" << synopsis << "(--help for more)\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "distdl-bench-report: " << e.what() << "\n";
        return 2;
    }
}
