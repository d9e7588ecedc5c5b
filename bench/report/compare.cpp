#include "bench/report/compare.hpp"

#include <algorithm>
#include <iomanip>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <sstream>

#include "bench/median.hpp"
#include "bench/report/format.hpp"

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

bool flagged(const comparison_row& r) {
    return r.verdict == "WORSE" || r.verdict == "noise" || r.verdict == "ours ok";
}

// "sim" or "mpi" (a segment of the workload's name), else "".
std::string transport_of(const std::string& workload) {
    for (const auto& part : segments(workload))
        if (part == "sim" || part == "mpi") return part;
    return "";
}

// A layer benchmark's workload ("conv_layer/..."): its baseline is serial compute kernels in
// one thread, which do not speed up or slow down with the primitives' copies and messages.
bool is_layer_workload(const std::string& workload) {
    const auto s = segments(workload);
    return !s.empty() && s.front().ends_with("_layer");
}

// "sim w16": the transport and the worker count ("w16", a segment of the name) of a workload;
// the transport alone when the name has no worker count; "layers" for the layer benchmarks.
std::string machine_group(const std::string& workload) {
    if (is_layer_workload(workload)) return "layers";
    for (const auto& part : segments(workload))
        if (part.size() > 1 && part[0] == 'w' && part.find_first_not_of("0123456789", 1) == std::string::npos)
            return transport_of(workload) + " " + part;
    return transport_of(workload);
}

// A group's machine factor needs at least this many of its workloads; else its transport's.
constexpr std::size_t min_group_workloads = 3;

// How much slower or faster the machine runs now, for a workload: the median over workloads of
// new baseline time / old baseline time, over those of its transport and worker count (on two
// cores 16 workers contend differently from 4, and their baselines move apart), or of its
// transport where fewer than min_group_workloads tell; 1 where none does. A layer workload's
// only by the layers' own baselines (serial kernels), however few: the primitives' memcpy
// baselines move for other reasons.
struct machine_factor_table {
    std::map<std::string, std::vector<double>> changes;  // by group and by transport
    // The factor and whose baselines gave it.
    std::pair<double, std::string> of(const std::string& workload) const {
        const std::string group = machine_group(workload), transport = transport_of(workload);
        const bool layer = is_layer_workload(workload);
        const auto group_changes = changes.find(group);
        if (group_changes != changes.end() && !group_changes->second.empty() &&
            (layer || group_changes->second.size() >= min_group_workloads))
            return {median(group_changes->second), group};
        if (layer) return {1.0, group};
        const auto transport_changes = changes.find(transport);
        if (transport_changes != changes.end() && !transport_changes->second.empty())
            return {median(transport_changes->second), transport};
        return {1.0, transport};
    }
};

machine_factor_table machine_factors(const results& old_run, const results& new_run, double floor) {
    machine_factor_table table;
    for (const auto& [name, old_w] : old_run.workloads) {
        const auto found = new_run.workloads.find(name);
        if (found == new_run.workloads.end()) continue;
        const double before = baseline_seconds(old_w), after = baseline_seconds(found->second);
        if (before < floor || after < floor || before <= 0 || after <= 0) continue;
        table.changes[machine_group(name)].push_back(after / before);
        if (!is_layer_workload(name) && machine_group(name) != transport_of(name))
            table.changes[transport_of(name)].push_back(after / before);
    }
    return table;
}

// The attempt a regression's message shows: the one with the best ratio.
std::size_t best_attempt(const comparison_row& r) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < r.attempt_ratios().size(); ++k)
        if (r.attempt_ratios()[k] < r.attempt_ratios()[best]) best = k;
    return best;
}

// "3: 1.510, 1.402, 0.920" for a flagged row (every attempt's ratio), "1" for a compared one.
std::string attempts_cell(const comparison_row& r) {
    if (!r.old_ratio || !r.new_ratio) return "-";
    if (!flagged(r)) return "1";
    std::string cell = std::to_string(r.attempts()) + ": " + show(r.new_ratio);
    for (const double q : r.retry_ratios) cell += ", " + show(q);
    return cell;
}

}  // namespace

std::vector<double> comparison_row::attempt_ratios() const {
    std::vector<double> all;
    if (new_ratio) all.push_back(*new_ratio);
    all.insert(all.end(), retry_ratios.begin(), retry_ratios.end());
    return all;
}

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
    const auto factors = machine_factors(old_run, new_run, min_baseline_seconds);
    for (const auto& [name, old_w] : old_run.workloads) {
        const auto old_ratio = old_w.ratio();
        if (!old_ratio) continue;  // no old ratio: listed below as new when the new run has one
        comparison_row row;
        row.workload = name;
        row.old_ratio = old_ratio;
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
            std::tie(row.machine_factor, row.machine_group) = factors.of(name);
            row.attempt_ours.push_back(seconds_of(found->second, "ours"));
            row.attempt_baselines.push_back(baseline_seconds(found->second));
            for (const results& retry : retries) {
                const auto again = retry.workloads.find(name);
                if (again == retry.workloads.end()) continue;
                const auto q = again->second.ratio();
                if (!q) continue;
                row.retry_ratios.push_back(*q);
                row.attempt_ours.push_back(seconds_of(again->second, "ours"));
                row.attempt_baselines.push_back(baseline_seconds(again->second));
            }
            const double ours_limit = row.old_ours * row.machine_factor * (1 + tolerance);
            const auto ratios = row.attempt_ratios();
            bool every_ratio_worse = true, every_attempt_worse = true;
            for (std::size_t k = 0; k < ratios.size(); ++k) {
                every_ratio_worse = every_ratio_worse && ratios[k] > limit;
                every_attempt_worse = every_attempt_worse && ratios[k] > limit && row.attempt_ours[k] > ours_limit;
            }
            if (every_attempt_worse) {
                row.verdict = "WORSE";
                ++c.worse;
            } else {
                row.verdict = every_ratio_worse ? "ours ok" : "noise";
            }
        } else {
            row.verdict = *row.new_ratio < *old_ratio / (1 + tolerance) ? "better" : "ok";
        }
        c.compared += row.verdict != "MISSING" && row.verdict != "skipped";
        c.rows.push_back(row);
    }
    for (const auto& [name, new_w] : new_run.workloads) {
        const auto old = old_run.workloads.find(name);
        if ((old == old_run.workloads.end() || !old->second.ratio()) && new_w.ratio()) {
            comparison_row row;
            row.workload = name;
            row.new_ratio = new_w.ratio();
            row.verdict = "new";
            c.rows.push_back(row);
        }
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
           "tolerance in a re-run; ours ok: the ratio worse in every attempt but not ours' own time, "
           "allowing for the machine's speed (the median change of the baselines' times of the same transport "
           "and worker count, or of the transport where fewer than 3 workloads tell; of a layer benchmark: the "
           "layers' own baselines); better: the ratio fell by more than the tolerance (the old report may "
           "be due for an update); skipped: a baseline "
           "faster than the floor (timer noise), not compared; new: no old ratio to compare with\n";
    for (const auto& r : c.rows) {
        if (r.verdict == "MISSING")
            out << "missing: benchmark " << r.workload
                << " is in the old results but has no ratio in the new run (not run, or its ours/baseline "
                   "half is absent)\n";
        if (r.verdict == "WORSE") {
            const std::size_t k = best_attempt(r);
            out << "regression: benchmark " << r.workload << " ratio " << show(r.old_ratio) << " -> "
                << show(r.best_ratio()) << " (" << change(*r.old_ratio, *r.best_ratio()) << "), worse in "
                << (r.attempts() == 1 ? "its only attempt" : "all " + std::to_string(r.attempts()) + " attempts")
                << "; best attempt against old: " << times("ours", r.old_ours, r.attempt_ours[k]) << ", "
                << times("baseline", r.old_baseline, r.attempt_baselines[k]) << "\n";
        }
        if (r.verdict == "ours ok") {
            const std::size_t k = static_cast<std::size_t>(
                std::min_element(r.attempt_ours.begin(), r.attempt_ours.end()) - r.attempt_ours.begin());
            out << "ours ok: benchmark " << r.workload << " ratio " << show(r.old_ratio) << " -> "
                << show(r.best_ratio()) << ", worse in every attempt, but not ours' own time: "
                << times("ours", r.old_ours, r.attempt_ours[k]) << ", "
                << times("baseline", r.old_baseline, r.attempt_baselines[k]) << ", while the "
                << (r.machine_group.empty() ? "" : r.machine_group + " ") << "baselines' times changed x"
                << format_fixed(r.machine_factor, 2) << " (median)\n";
        }
    }
    int noise = 0, ours_ok = 0;
    for (const auto& r : c.rows) {
        noise += r.verdict == "noise";
        ours_ok += r.verdict == "ours ok";
    }
    if (c.passed()) {
        out << "PASS: no benchmark got worse";
        if (noise > 0 || ours_ok > 0) {
            out << " (";
            if (noise > 0) out << noise << " worse at first, within tolerance on a re-run";
            if (noise > 0 && ours_ok > 0) out << "; ";
            if (ours_ok > 0) out << ours_ok << " with ours' own time within tolerance";
            out << ")";
        }
        out << "\n";
        return 0;
    }
    if (c.worse == 0 && c.missing == 0) {
        out << "FAIL: nothing was compared (" << c.rows.size()
            << " workloads, each new or skipped): the old results share no workload with the new run, or "
               "every baseline is below the floor\n";
        return 1;
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
