#include "bench/report/compare.hpp"

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

double baseline_seconds(const workload_result& w) {
    const auto it = w.roles.find("baseline");
    return it == w.roles.end() ? 0.0 : it->second.seconds;
}

}  // namespace

comparison compare(const results& old_run, const results& new_run, double tolerance, double min_baseline_seconds) {
    comparison c;
    for (const auto& [name, old_w] : old_run.workloads) {
        const auto old_ratio = old_w.ratio();
        if (!old_ratio) continue;  // nothing to compare against (no baseline in the old run)
        comparison_row row{name, old_ratio, std::nullopt, ""};
        const auto found = new_run.workloads.find(name);
        if (found != new_run.workloads.end()) row.new_ratio = found->second.ratio();
        if (!row.new_ratio) {
            row.verdict = "MISSING";
            ++c.missing;
        } else if (baseline_seconds(old_w) < min_baseline_seconds ||
                   baseline_seconds(found->second) < min_baseline_seconds) {
            row.verdict = "skipped";
        } else if (*row.new_ratio > *old_ratio * (1 + tolerance)) {
            row.verdict = "WORSE";
            ++c.worse;
        } else {
            row.verdict = *row.new_ratio < *old_ratio / (1 + tolerance) ? "better" : "ok";
        }
        c.rows.push_back(row);
    }
    for (const auto& [name, new_w] : new_run.workloads)
        if (!old_run.workloads.count(name) && new_w.ratio())
            c.rows.push_back({name, std::nullopt, new_w.ratio(), "new"});
    return c;
}

int print_comparison(std::ostream& out, const comparison& c, double tolerance) {
    out << "| benchmark | old ratio | new ratio | change | verdict |\n| --- | ---: | ---: | ---: | --- |\n";
    for (const auto& r : c.rows) {
        std::string change = "-";
        if (r.old_ratio && r.new_ratio) {
            std::ostringstream s;
            s << std::showpos << std::fixed << std::setprecision(1) << (*r.new_ratio / *r.old_ratio - 1) * 100 << "%";
            change = s.str();
        }
        out << "| " << r.workload << " | " << show(r.old_ratio) << " | " << show(r.new_ratio) << " | " << change
            << " | " << r.verdict << " |\n";
    }
    for (const auto& r : c.rows)
        if (r.verdict == "MISSING")
            out << "missing: benchmark " << r.workload
                << " is in the old results but has no ratio in the new run (not run, or its ours/baseline "
                   "half is absent)\n";
    out << "tolerance: a ratio may grow by " << tolerance * 100 << "% before it counts as worse; "
        << "skipped: a baseline faster than the floor (timer noise), not compared\n";
    if (c.passed()) {
        out << "PASS: no benchmark got worse\n";
        return 0;
    }
    out << "FAIL: " << c.worse << " worse, " << c.missing << " missing\n";
    return 1;
}

}  // namespace distdl::bench::report
