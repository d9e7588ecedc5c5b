#include "bench/report/compare.hpp"

#include "bench/report/format.hpp"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace distdl::bench::report {

namespace {

std::string show(const std::optional<double>& ratio) {
    if (!ratio) return "-";
    std::ostringstream s;
    s << std::fixed << std::setprecision(3) << *ratio;
    return s.str();
}

std::string change(double old_ratio, double new_ratio) {
    std::ostringstream s;
    s << std::showpos << std::fixed << std::setprecision(1) << (new_ratio / old_ratio - 1) * 100 << "%";
    return s.str();
}

double seconds_of(const workload_result& w, const std::string& role) {
    const auto it = w.roles.find(role);
    return it == w.roles.end() ? 0.0 : it->second.seconds;
}

double baseline_seconds(const workload_result& w) { return seconds_of(w, "baseline"); }

// "ours 86.1 ms -> 85.6 ms (-0.6%)".
std::string times(const std::string& role, double old_seconds, double new_seconds) {
    std::string text = role + " " + format_time(old_seconds) + " -> " + format_time(new_seconds);
    if (old_seconds > 0) text += " (" + change(old_seconds, new_seconds) + ")";
    return text;
}

bool flagged(const comparison_row& r) { return r.verdict == "WORSE" || r.verdict == "noise"; }

// "3: 1.510, 1.402, 0.920" for a flagged row (every attempt's ratio), "1" for a compared one.
std::string attempts_cell(const comparison_row& r) {
    if (!r.old_ratio || !r.new_ratio) return "-";
    if (!flagged(r)) return "1";
    std::string cell = std::to_string(r.attempts()) + ": " + show(r.new_ratio);
    for (const double q : r.retry_ratios) cell += ", " + show(q);
    return cell;
}

}  // namespace

std::optional<double> comparison_row::best_ratio() const {
    if (!new_ratio) return std::nullopt;
    double best = *new_ratio;
    for (const double q : retry_ratios) best = std::min(best, q);
    return best;
}

std::vector<std::string> comparison::worse_workloads() const {
    std::vector<std::string> names;
    for (const auto& r : rows)
        if (r.verdict == "WORSE") names.push_back(r.workload);
    return names;
}

comparison compare(const results& old_run, const results& new_run, double tolerance, double min_baseline_seconds,
                   const std::vector<results>& retries) {
    comparison c;
    for (const auto& [name, old_w] : old_run.workloads) {
        const auto old_ratio = old_w.ratio();
        if (!old_ratio) continue;  // no old ratio: listed below as new when the new run has one
        comparison_row row{name, old_ratio, std::nullopt, {}, ""};
        const auto found = new_run.workloads.find(name);
        if (found != new_run.workloads.end()) row.new_ratio = found->second.ratio();
        const double limit = *old_ratio * (1 + tolerance);
        if (!row.new_ratio) {
            row.verdict = "MISSING";
            ++c.missing;
        } else if (baseline_seconds(old_w) < min_baseline_seconds ||
                   baseline_seconds(found->second) < min_baseline_seconds) {
            row.verdict = "skipped";
        } else if (*row.new_ratio > limit) {
            row.old_ours = seconds_of(old_w, "ours");
            row.old_baseline = baseline_seconds(old_w);
            row.best_ours = seconds_of(found->second, "ours");
            row.best_baseline = baseline_seconds(found->second);
            for (const results& retry : retries) {
                const auto again = retry.workloads.find(name);
                if (again == retry.workloads.end()) continue;
                const auto q = again->second.ratio();
                if (!q) continue;
                if (*q < *row.best_ratio()) {
                    row.best_ours = seconds_of(again->second, "ours");
                    row.best_baseline = baseline_seconds(again->second);
                }
                row.retry_ratios.push_back(*q);
            }
            if (*row.best_ratio() > limit) {
                row.verdict = "WORSE";
                ++c.worse;
            } else {
                row.verdict = "noise";
            }
        } else {
            row.verdict = *row.new_ratio < *old_ratio / (1 + tolerance) ? "better" : "ok";
        }
        c.rows.push_back(row);
    }
    for (const auto& [name, new_w] : new_run.workloads) {
        const auto old = old_run.workloads.find(name);
        if ((old == old_run.workloads.end() || !old->second.ratio()) && new_w.ratio())
            c.rows.push_back({name, std::nullopt, new_w.ratio(), {}, "new"});
    }
    return c;
}

int print_comparison(std::ostream& out, const comparison& c, double tolerance) {
    out << "| benchmark | old ratio | new ratio | change | attempts: ratios | verdict |\n"
           "| --- | ---: | ---: | ---: | --- | --- |\n";
    for (const auto& r : c.rows) {
        const auto best = r.best_ratio();
        out << "| " << r.workload << " | " << show(r.old_ratio) << " | " << show(best) << " | "
            << (r.old_ratio && best ? change(*r.old_ratio, *best) : "-") << " | " << attempts_cell(r) << " | "
            << r.verdict << " |\n";
    }
    out << "new ratio: the best of the attempts (noise only slows a run down); a ratio may grow by "
        << tolerance * 100 << "% before it counts as worse, and a worse row is re-run before it fails "
        << "(attempts: how many runs it took, with the ratio of each); noise: worse at first, within "
           "tolerance in a re-run; skipped: a baseline faster than the floor (timer noise), not compared; "
           "new: no old ratio to compare with\n";
    for (const auto& r : c.rows) {
        if (r.verdict == "MISSING")
            out << "missing: benchmark " << r.workload
                << " is in the old results but has no ratio in the new run (not run, or its ours/baseline "
                   "half is absent)\n";
        if (r.verdict == "WORSE")
            out << "regression: benchmark " << r.workload << " ratio " << show(r.old_ratio) << " -> "
                << show(r.best_ratio()) << " (" << change(*r.old_ratio, *r.best_ratio()) << "), worse in "
                << (r.attempts() == 1 ? "its only attempt" : "all " + std::to_string(r.attempts()) + " attempts")
                << "; best attempt against old: " << times("ours", r.old_ours, r.best_ours) << ", "
                << times("baseline", r.old_baseline, r.best_baseline) << "\n";
    }
    int noise = 0;
    for (const auto& r : c.rows) noise += r.verdict == "noise";
    if (c.passed()) {
        out << "PASS: no benchmark got worse";
        if (noise > 0) out << " (" << noise << " worse at first, within tolerance on a re-run)";
        out << "\n";
        return 0;
    }
    out << "FAIL: " << c.worse << (c.worse == 1 ? " regression" : " regressions");
    if (c.worse > 0) {
        out << " (";
        const auto names = c.worse_workloads();
        for (std::size_t i = 0; i < names.size(); ++i) out << (i ? ", " : "") << names[i];
        out << ")";
    }
    out << ", " << c.missing << " missing\n";
    return 1;
}

}  // namespace distdl::bench::report
