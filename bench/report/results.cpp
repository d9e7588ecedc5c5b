#include "bench/report/results.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace distdl::bench::report {

namespace {

bool is_suffix(const std::string& s) {
    return s.find(':') != std::string::npos || s == "manual_time" || s == "real_time" || s == "process_time";
}

double seconds_per(const std::string& unit) {
    if (unit == "ns") return 1e-9;
    if (unit == "us") return 1e-6;
    if (unit == "ms") return 1e-3;
    if (unit == "s") return 1.0;
    throw std::runtime_error("unknown time_unit '" + unit + "' in benchmark JSON");
}

std::optional<double> optional_number(const nlohmann::json& j, const char* key) {
    if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
    return std::nullopt;
}

// "string \"1.5\"", "number -2", "array": a value for a message (containers by type alone).
std::string describe(const nlohmann::json& value) {
    if (value.is_null()) return "null";
    return std::string(value.type_name()) + (value.is_primitive() ? " " + value.dump() : "");
}

// "//", or "/" at an end: a name whose segments are not all named.
bool has_empty_segment(const std::string& name) {
    return name.empty() || name.front() == '/' || name.back() == '/' || name.find("//") != std::string::npos;
}

// run[key] of a Google Benchmark run, which it always writes (`where` names the run).
const nlohmann::json& required(const nlohmann::json& run, const char* key, const std::string& where) {
    if (!run.contains(key)) throw std::runtime_error(where + ": " + key + ": missing");
    return run[key];
}

// A time in seconds that a ratio can rest on: a positive, finite number (`where` names it).
double positive_time(const nlohmann::json& value, double unit, const std::string& where) {
    const double seconds = value.is_number() ? value.get<double>() * unit : 0;
    if (!(seconds > 0) || !std::isfinite(seconds))
        throw std::runtime_error(where + ": expected a positive time, got " + describe(value));
    return seconds;
}

role_result read_run(const nlohmann::json& run, const std::string& where) {
    role_result r;
    const nlohmann::json& unit = required(run, "time_unit", where);
    if (!unit.is_string()) throw std::runtime_error(where + ": time_unit: expected a string, got " + describe(unit));
    r.seconds = positive_time(required(run, "real_time", where), seconds_per(unit.get<std::string>()),
                              where + ": real_time");
    r.bytes_per_second = optional_number(run, "bytes_per_second").value_or(0.0);
    r.messages_per_iteration = optional_number(run, "msgs_per_iter");
    r.faults_per_iteration = optional_number(run, "faults_per_iter");
    // A run that gives its median iteration (distdl-bench does for few iterations) is timed by
    // it: one slow iteration of a busy machine then moves neither the time nor the ratio.
    if (const auto median = optional_number(run, "median_seconds"); median && *median > 0) {
        if (r.seconds > 0) r.bytes_per_second *= r.seconds / *median;
        r.seconds = *median;
    }
    return r;
}

}  // namespace

bool workload_order::operator()(const std::string& a, const std::string& b) const {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = std::isdigit(static_cast<unsigned char>(a[i])), db = std::isdigit(static_cast<unsigned char>(b[j]));
        if (da && db) {
            std::size_t ei = i, ej = j;
            while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
            while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
            const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
            if (na.size() != nb.size()) return na.size() < nb.size();  // no leading zeros in our names
            if (na != nb) return na < nb;
            i = ei;
            j = ej;
        } else {
            if (a[i] != b[j]) return a[i] < b[j];
            ++i;
            ++j;
        }
    }
    return a.size() - i < b.size() - j;
}

std::optional<double> workload_result::ratio(const std::string& role) const {
    const auto ours = roles.find("ours"), other = roles.find(role);
    if (ours == roles.end() || other == roles.end() || other->second.seconds <= 0) return std::nullopt;
    return ours->second.seconds / other->second.seconds;
}

std::vector<std::string> segments(const std::string& workload) {
    std::vector<std::string> out;
    std::stringstream in(workload);
    for (std::string s; std::getline(in, s, '/');) out.push_back(s);
    return out;
}

std::pair<std::string, std::string> split_name(const std::string& benchmark_name) {
    if (has_empty_segment(benchmark_name))
        throw std::runtime_error("benchmark name '" + benchmark_name + "' has an empty segment (\"//\", or \"/\" at "
                                 "an end)");
    auto parts = segments(benchmark_name);
    while (!parts.empty() && is_suffix(parts.back())) parts.pop_back();
    // The report groups workloads by their first segment: a workload needs one after it.
    if (parts.size() < 3)
        throw std::runtime_error("benchmark name '" + benchmark_name +
                                 "' is not <role>/<workload> with a workload <group>/<...> (the report reads the "
                                 "layer and primitive benchmarks' JSON, not that of kernels_bench)");
    std::string workload = parts[1];
    for (std::size_t i = 2; i < parts.size(); ++i) workload += "/" + parts[i];
    return {parts[0], workload};
}

std::string null_for_non_finite(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            out += c;
            if (c == '\\' && i + 1 < text.size()) out += text[++i];
            else if (c == '"') in_string = false;
            continue;
        }
        if (!std::isalpha(static_cast<unsigned char>(c))) {
            in_string = c == '"';
            out += c;
            continue;
        }
        std::size_t end = i;
        while (end < text.size() && std::isalpha(static_cast<unsigned char>(text[end]))) ++end;
        std::string word = text.substr(i, end - i);
        std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return std::tolower(ch); });
        if (word == "nan" || word == "inf" || word == "infinity") {
            if (!out.empty() && out.back() == '-') out.pop_back();
            out += "null";
        } else {
            out += text.substr(i, end - i);
        }
        i = end - 1;
    }
    return out;
}

void add_benchmark_json(results& into, const nlohmann::json& document) {
    if (document.is_object() && document.contains("schema") && !document.contains("context"))
        throw std::runtime_error("a summary (bench.json), not Google Benchmark output: summaries go to --compare");
    if (!document.is_object() || !document.contains("context") || !document.contains("benchmarks"))
        throw std::runtime_error("expected Google Benchmark output (an object with \"context\" and \"benchmarks\")");
    const auto& context = document.at("context");
    if (context.value("quick", "false") == "true") into.quick = true;
    // Medians of repeated runs replace the runs; otherwise runs of one name are averaged.
    std::map<std::pair<std::string, std::string>, std::vector<role_result>> runs, medians;
    std::map<std::string, std::string> labels;
    std::map<std::string, double> targets;
    for (const auto& run : document.at("benchmarks")) {
        if (run.contains("error_occurred") && run["error_occurred"].get<bool>())
            throw std::runtime_error("benchmark " + run.value("name", "?") + " reported an error: " +
                                     run.value("error_message", ""));
        const std::string where = "benchmark " + run.value("name", "?");
        const auto key = split_name(required(run, "run_name", where).get<std::string>());
        const std::string type = run.value("run_type", "iteration");
        if (type == "aggregate" && run.value("aggregate_name", "") != "median") continue;
        (type == "aggregate" ? medians : runs)[key].push_back(read_run(run, where));
        runs[key];  // a name with only aggregates (--benchmark_report_aggregates_only) is a run too
        if (run.contains("label")) labels[key.second] = run["label"].get<std::string>();
        if (const auto target = optional_number(run, "target_ratio")) targets[key.second] = *target;
    }
    for (auto& [key, list] : runs) {
        role_result r;
        if (medians.count(key)) {
            r = medians[key].front();
        } else {
            r = list.front();
            r.seconds = 0;
            r.bytes_per_second = 0;
            for (const auto& one : list) {
                r.seconds += one.seconds / static_cast<double>(list.size());
                r.bytes_per_second += one.bytes_per_second / static_cast<double>(list.size());
            }
        }
        auto& w = into.workloads[key.second];
        // Two files of one benchmark (a run given twice, or two runs mixed): which one counts?
        if (w.roles.count(key.first))
            throw std::runtime_error("benchmark " + key.first + "/" + key.second +
                                     " is also in a file before this one: give each run once");
        if (labels.count(key.second)) w.label = labels[key.second];
        if (targets.count(key.second)) w.target = targets[key.second];
        w.roles[key.first] = r;
    }
}

nlohmann::json to_json(const results& r) {
    nlohmann::json out;
    out["schema"] = 1;
    out["machine"] = {{"cpu", r.cpu}, {"cores", r.cores}};
    out["commit"] = r.commit;
    out["date"] = r.date;
    out["quick"] = r.quick;
    nlohmann::json all = nlohmann::json::object();
    for (const auto& [name, w] : r.workloads) {
        nlohmann::json j;
        j["label"] = w.label;
        if (auto q = w.ratio()) j["ratio"] = *q;
        if (auto t = target_of(name, w)) j["target"] = *t;
        for (const auto& [role, rr] : w.roles) {
            nlohmann::json x{{"seconds", rr.seconds}, {"bytes_per_second", rr.bytes_per_second}};
            if (rr.messages_per_iteration) x["msgs_per_iter"] = *rr.messages_per_iteration;
            if (rr.faults_per_iteration) x["faults_per_iter"] = *rr.faults_per_iteration;
            j["roles"][role] = x;
        }
        all[name] = j;
    }
    out["benchmarks"] = all;
    return out;
}

results from_json(const nlohmann::json& document) {
    if (!document.is_object() || document.value("schema", 0) != 1 || !document.contains("benchmarks"))
        throw std::runtime_error("not a distdl benchmark summary (expected an object with \"schema\": 1 and "
                                 "\"benchmarks\"; Google Benchmark output goes through distdl-bench-report first)");
    // Every field of the type it must have: a wrong one is named, not skipped.
    const auto check = [](const nlohmann::json& value, bool ok, const std::string& where, const char* what) {
        if (!ok) throw std::runtime_error(where + ": expected " + what + ", got " + describe(value));
    };
    static const nlohmann::json no_machine = nlohmann::json::object();
    const nlohmann::json& machine = document.contains("machine") ? document["machine"] : no_machine;
    check(machine, machine.is_object(), "machine", "an object");
    if (machine.contains("cpu")) check(machine["cpu"], machine["cpu"].is_string(), "machine.cpu", "a string");
    if (machine.contains("cores"))
        check(machine["cores"], machine["cores"].is_number_unsigned(), "machine.cores", "a count");
    for (const char* key : {"commit", "date"})
        if (document.contains(key)) check(document[key], document[key].is_string(), key, "a string");
    if (document.contains("quick")) check(document["quick"], document["quick"].is_boolean(), "quick", "true or false");
    results r;
    r.cpu = machine.value("cpu", "");
    r.cores = machine.value("cores", 0u);
    r.commit = document.value("commit", "");
    r.date = document.value("date", "");
    r.quick = document.value("quick", false);
    if (!document.at("benchmarks").is_object())
        throw std::runtime_error("\"benchmarks\": expected an object of workloads, got " +
                                 std::string(document.at("benchmarks").type_name()));
    for (const auto& [name, j] : document.at("benchmarks").items()) {
        const std::string where = "benchmark '" + name + "'";
        if (has_empty_segment(name) || segments(name).size() < 2)
            throw std::runtime_error(where + " in the summary is not a workload <group>/<...> (no empty segment)");
        const auto expect = [&](const nlohmann::json& value, bool ok, const std::string& field, const char* what) {
            check(value, ok, where + ": " + field, what);
        };
        expect(j, j.is_object(), "value", "an object");
        if (j.contains("label")) expect(j["label"], j["label"].is_string(), "label", "a string");
        // The ratio is written for readers; the comparison computes it again from the roles' seconds.
        for (const char* key : {"target", "ratio"})
            if (j.contains(key)) expect(j[key], j[key].is_number(), key, "a number");
        if (j.contains("roles")) expect(j["roles"], j["roles"].is_object(), "roles", "an object");
        workload_result w;
        w.label = j.value("label", "");
        w.target = optional_number(j, "target");
        static const nlohmann::json no_roles = nlohmann::json::object();
        for (const auto& [role, x] : (j.contains("roles") ? j["roles"] : no_roles).items()) {
            const std::string field = "roles." + role;
            expect(x, x.is_object() && x.contains("seconds"), field, "an object with \"seconds\"");
            for (const char* key : {"bytes_per_second", "msgs_per_iter", "faults_per_iter"})
                if (x.contains(key)) expect(x[key], x[key].is_number(), field + "." + key, "a number");
            role_result rr;
            rr.seconds = positive_time(x["seconds"], 1.0, where + ": " + field + ".seconds");
            rr.bytes_per_second = x.value("bytes_per_second", 0.0);
            rr.messages_per_iteration = optional_number(x, "msgs_per_iter");
            rr.faults_per_iteration = optional_number(x, "faults_per_iter");
            w.roles[role] = rr;
        }
        r.workloads[name] = w;
    }
    return r;
}

std::optional<double> target_ratio(const std::string& workload) {
    const auto s = segments(workload);
    if (s.size() < 2) return std::nullopt;
    const std::string& size = s.back();
    for (const auto& part : s) {
        if (part == "mpi") return size == "large" ? 1.1 : 1.3;
        if (part == "sim" && size == "large") return 2.0;
    }
    return std::nullopt;
}

std::optional<double> target_of(const std::string& workload, const workload_result& w) {
    return w.target ? w.target : target_ratio(workload);
}

}  // namespace distdl::bench::report
