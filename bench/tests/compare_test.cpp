// The regression comparer of distdl-bench-report on small hand-written summaries: ratios
// within tolerance pass, a ratio that grew beyond it fails only when every re-run confirms it
// (and is then named), a missing workload fails with a message naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "bench/report/compare.hpp"
#include "bench/report/markdown.hpp"
#include "bench/report/results.hpp"
#include "bench/report/svg.hpp"

namespace distdl::bench::report {
namespace {

results load(const std::string& name) {
    std::ifstream in(std::string(BENCH_TEST_DATA) + "/" + name);
    EXPECT_TRUE(in.good()) << name;
    return from_json(nlohmann::json::parse(in));
}

struct timing {
    std::string workload;
    double ours, baseline;  // seconds per iteration
};

// A summary (bench.json) holding the given workloads.
results summary(const std::vector<timing>& timings) {
    nlohmann::json doc{{"schema", 1}, {"benchmarks", nlohmann::json::object()}};
    for (const auto& t : timings)
        doc["benchmarks"][t.workload] = {
            {"label", "synthetic"},
            {"roles", {{"ours", {{"seconds", t.ours}}}, {"baseline", {{"seconds", t.baseline}}}}}};
    return from_json(doc);
}

const comparison_row& row_of(const comparison& c, const std::string& workload) {
    const auto row = std::find_if(c.rows.begin(), c.rows.end(),
                                  [&](const comparison_row& r) { return r.workload == workload; });
    if (row == c.rows.end()) throw std::runtime_error("no row " + workload);
    return *row;
}

std::string printed(const comparison& c, int expected_status) {
    std::ostringstream out;
    EXPECT_EQ(print_comparison(out, c, default_tolerance), expected_status) << out.str();
    return out.str();
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(compare, ratios_within_tolerance_pass) {
    // old ratios 1.0, 2.0, 1.5; new 1.1 (+10%), 2.0, 1.5.
    const comparison c = compare(load("old.json"), load("within.json"));
    EXPECT_TRUE(c.passed());
    ASSERT_EQ(c.rows.size(), 3u);
    std::ostringstream out;
    EXPECT_EQ(print_comparison(out, c, default_tolerance), 0);
    EXPECT_NE(out.str().find("PASS"), std::string::npos) << out.str();
}

TEST(compare, a_worse_ratio_without_re_runs_fails_and_is_named) {
    // broadcast 1.0 -> 1.5: +50% > 25%.
    const comparison c = compare(load("old.json"), load("worse.json"));
    EXPECT_EQ(c.worse, 1);
    EXPECT_FALSE(c.passed());
    EXPECT_EQ(c.worse_workloads(), std::vector<std::string>{"broadcast/mpi/w4/large"});
    const std::string out = printed(c, 1);
    EXPECT_TRUE(contains(out, "| broadcast/mpi/w4/large | 1.000 | 1.500 | +50.0% | 1: 1.500 | WORSE |")) << out;
    EXPECT_TRUE(contains(out, "regression: benchmark broadcast/mpi/w4/large ratio 1.000 -> 1.500 (+50.0%), worse in "
                              "its only attempt"))
        << out;
    EXPECT_TRUE(contains(out, "FAIL: 1 regression (broadcast/mpi/w4/large), 0 missing")) << out;
}

TEST(compare, a_row_worse_once_then_fine_passes_as_noise) {
    const results old_run = summary({{"halo_exchange/mpi/w4/large", 1.0, 1.0}, {"broadcast/mpi/w4/large", 2.0, 2.0}});
    const results first = summary({{"halo_exchange/mpi/w4/large", 1.51, 1.0}, {"broadcast/mpi/w4/large", 2.0, 2.0}});
    // Before the re-run the row is WORSE and is what a re-run must repeat.
    EXPECT_EQ(compare(old_run, first).worse_workloads(), std::vector<std::string>{"halo_exchange/mpi/w4/large"});
    // The re-run holds only the flagged workload; its ratio 0.92 is within tolerance.
    const comparison c = compare(old_run, first, default_tolerance, default_min_baseline_seconds,
                                 {summary({{"halo_exchange/mpi/w4/large", 0.92, 1.0}})});
    EXPECT_TRUE(c.passed());
    EXPECT_TRUE(c.worse_workloads().empty());
    const auto& row = row_of(c, "halo_exchange/mpi/w4/large");
    EXPECT_EQ(row.verdict, "noise");
    EXPECT_EQ(row.attempts(), 2);
    EXPECT_DOUBLE_EQ(*row.best_ratio(), 0.92);
    EXPECT_EQ(row_of(c, "broadcast/mpi/w4/large").verdict, "ok");
    const std::string out = printed(c, 0);
    EXPECT_TRUE(contains(out, "| halo_exchange/mpi/w4/large | 1.000 | 0.920 | -8.0% | 2: 1.510, 0.920 | noise |")) << out;
    EXPECT_TRUE(contains(out, "| broadcast/mpi/w4/large | 1.000 | 1.000 | +0.0% | 1 | ok |")) << out;
    EXPECT_TRUE(contains(out, "PASS: no benchmark got worse (1 worse at first, within tolerance on a re-run)")) << out;
}

TEST(compare, a_row_worse_in_every_attempt_fails_with_the_best_ratio_and_is_named) {
    const results old_run = summary({{"halo_exchange/mpi/w4/large", 1.0, 1.0}, {"repartition/sim/w16/large", 3.0, 1.0}});
    const results first = summary({{"halo_exchange/mpi/w4/large", 1.6, 1.0}, {"repartition/sim/w16/large", 3.0, 1.0}});
    const comparison c = compare(old_run, first, default_tolerance, default_min_baseline_seconds,
                                 {summary({{"halo_exchange/mpi/w4/large", 1.4, 1.0}}),
                                  summary({{"halo_exchange/mpi/w4/large", 1.5, 1.0}})});
    EXPECT_FALSE(c.passed());
    EXPECT_EQ(c.worse, 1);
    EXPECT_EQ(c.worse_workloads(), std::vector<std::string>{"halo_exchange/mpi/w4/large"});
    const auto& row = row_of(c, "halo_exchange/mpi/w4/large");
    EXPECT_EQ(row.verdict, "WORSE");
    EXPECT_EQ(row.retry_ratios, (std::vector<double>{1.4, 1.5}));
    const std::string out = printed(c, 1);
    EXPECT_TRUE(contains(out, "| halo_exchange/mpi/w4/large | 1.000 | 1.400 | +40.0% | 3: 1.600, 1.400, 1.500 | WORSE |"))
        << out;
    EXPECT_TRUE(contains(out, "regression: benchmark halo_exchange/mpi/w4/large ratio 1.000 -> 1.400 (+40.0%), worse "
                              "in all 3 attempts; best attempt against old: ours 1 s -> 1.4 s (+40.0%), baseline 1 s -> "
                              "1 s (+0.0%)\n"))
        << out;
    EXPECT_TRUE(contains(out, "FAIL: 1 regression (halo_exchange/mpi/w4/large), 0 missing")) << out;
}

TEST(compare, a_ratio_worse_only_because_the_baseline_ran_faster_is_no_regression) {
    // The other simulator baselines kept their times (machine x1.00); this one ran 22 -> 17.5 ms
    // while ours stayed at 86 ms: the ratio 3.909 -> 4.914 is worse, ours is not.
    const results old_run = summary({{"repartition/sim/w16/large", 0.086, 0.022},
                                     {"broadcast/sim/w16/large", 0.015, 0.013},
                                     {"halo_exchange/sim/w16/large", 0.033, 0.020}});
    const results first = summary({{"repartition/sim/w16/large", 0.090, 0.018},
                                   {"broadcast/sim/w16/large", 0.015, 0.013},
                                   {"halo_exchange/sim/w16/large", 0.033, 0.020}});
    const comparison c = compare(old_run, first, default_tolerance, default_min_baseline_seconds,
                                 {summary({{"repartition/sim/w16/large", 0.086, 0.0175}})});
    EXPECT_TRUE(c.passed());
    EXPECT_TRUE(c.worse_workloads().empty());
    const auto& row = row_of(c, "repartition/sim/w16/large");
    EXPECT_EQ(row.verdict, "ours ok");
    EXPECT_DOUBLE_EQ(row.machine_factor, 1.0);
    const std::string out = printed(c, 0);
    EXPECT_TRUE(contains(out, "| repartition/sim/w16/large | 3.909 | 4.914 | +25.7% | 2: 5.000, 4.914 | ours ok |"))
        << out;
    EXPECT_TRUE(contains(out, "ours ok: benchmark repartition/sim/w16/large ratio 3.909 -> 4.914, worse in every "
                              "attempt, but not ours' own time: ours 86 ms -> 86 ms (+0.0%), baseline 22 ms -> 17.5 ms "
                              "(-20.5%), while the sim w16 baselines' times changed x1.00 (median)\n"))
        << out;
    EXPECT_TRUE(contains(out, "PASS: no benchmark got worse (1 with ours' own time within tolerance)")) << out;
}

TEST(compare, a_regression_says_how_ours_and_its_baseline_changed) {
    const results old_run = summary({{"repartition/sim/w16/large", 0.086, 0.022},
                                     {"broadcast/sim/w16/large", 0.015, 0.013}});
    const comparison c = compare(old_run, summary({{"repartition/sim/w16/large", 0.120, 0.022},
                                                   {"broadcast/sim/w16/large", 0.015, 0.013}}));
    EXPECT_EQ(row_of(c, "repartition/sim/w16/large").verdict, "WORSE");
    EXPECT_TRUE(contains(printed(c, 1), "regression: benchmark repartition/sim/w16/large ratio 3.909 -> 5.455 (+39.5%), "
                                        "worse in its only attempt; best attempt against old: ours 86 ms -> 120 ms "
                                        "(+39.5%), baseline 22 ms -> 22 ms (+0.0%)\n"));
}

TEST(compare, ours_time_is_judged_at_the_machine_speed_its_transport_shows) {
    // Every Open MPI baseline takes 2x as long (a busier machine), the simulator's the same.
    const results old_run = summary({{"a/mpi/w4/large", 1.0, 1.0}, {"b/mpi/w4/large", 1.0, 1.0},
                                     {"c/mpi/w4/large", 1.0, 1.0}, {"d/sim/w4/large", 1.0, 1.0}});
    const results new_run = summary({{"a/mpi/w4/large", 2.6, 2.0},    // ours +160% > 2 x 1.25: WORSE
                                     {"b/mpi/w4/large", 2.4, 1.6},    // ours +140% < 2 x 1.25: ours ok
                                     {"c/mpi/w4/large", 2.0, 2.0},    // ok
                                     {"d/sim/w4/large", 1.3, 1.0}});  // ratio and ours +30% at x1.0: WORSE
    const comparison c = compare(old_run, new_run);
    EXPECT_DOUBLE_EQ(row_of(c, "a/mpi/w4/large").machine_factor, 2.0);
    EXPECT_EQ(row_of(c, "a/mpi/w4/large").verdict, "WORSE");
    EXPECT_EQ(row_of(c, "b/mpi/w4/large").verdict, "ours ok");
    EXPECT_EQ(row_of(c, "c/mpi/w4/large").verdict, "ok");
    EXPECT_DOUBLE_EQ(row_of(c, "d/sim/w4/large").machine_factor, 1.0);
    EXPECT_EQ(row_of(c, "d/sim/w4/large").verdict, "WORSE");
    EXPECT_EQ(c.worse_workloads(), (std::vector<std::string>{"a/mpi/w4/large", "d/sim/w4/large"}));
}

TEST(compare, the_machine_speed_is_taken_from_the_same_transport_and_worker_count) {
    // The 16-worker simulator baselines take 2x as long (16 threads on 2 cores contend more), the
    // 4-worker ones the same; one Open MPI workload alone is judged by its transport's median.
    const results old_run = summary({{"a/sim/w16/large", 1.0, 1.0}, {"b/sim/w16/large", 1.0, 1.0},
                                     {"c/sim/w16/large", 1.0, 1.0}, {"d/sim/w4/large", 1.0, 1.0},
                                     {"e/sim/w4/large", 1.0, 1.0}, {"f/sim/w4/large", 1.0, 1.0},
                                     {"g/mpi/w4/large", 1.0, 1.0}});
    const results new_run = summary({{"a/sim/w16/large", 2.4, 1.6},   // ours +140% < 2 x 1.25: ours ok
                                     {"b/sim/w16/large", 2.0, 2.0}, {"c/sim/w16/large", 2.0, 2.0},
                                     {"d/sim/w4/large", 1.4, 1.0},    // ours +40% at x1.0: WORSE
                                     {"e/sim/w4/large", 1.0, 1.0}, {"f/sim/w4/large", 1.0, 1.0},
                                     {"g/mpi/w4/large", 1.4, 0.8}});  // ours +40% at x0.8: WORSE
    const comparison c = compare(old_run, new_run);
    EXPECT_DOUBLE_EQ(row_of(c, "a/sim/w16/large").machine_factor, 2.0);
    EXPECT_EQ(row_of(c, "a/sim/w16/large").machine_group, "sim w16");
    EXPECT_EQ(row_of(c, "a/sim/w16/large").verdict, "ours ok");
    EXPECT_DOUBLE_EQ(row_of(c, "d/sim/w4/large").machine_factor, 1.0);
    EXPECT_EQ(row_of(c, "d/sim/w4/large").verdict, "WORSE");
    EXPECT_DOUBLE_EQ(row_of(c, "g/mpi/w4/large").machine_factor, 0.8);
    EXPECT_EQ(row_of(c, "g/mpi/w4/large").machine_group, "mpi");
    EXPECT_EQ(row_of(c, "g/mpi/w4/large").verdict, "WORSE");
}

TEST(compare, the_layer_benchmarks_take_the_machine_speed_from_their_own_baselines) {
    // The simulator's copies take 2x as long, the layers' serial kernels the same: a layer whose
    // own time grew 40% is WORSE, judged by the layers' baselines, not by the copies'.
    const results old_run = summary({{"a/sim/w4/large", 1.0, 1.0}, {"b/sim/w4/large", 1.0, 1.0},
                                     {"c/sim/w4/large", 1.0, 1.0}, {"conv_layer/sim/w4/feature", 1.2, 1.0},
                                     {"conv_layer/sim/w4/channel", 1.3, 1.0}, {"pool_layer/sim/w4/max", 1.2, 1.0}});
    const results new_run = summary({{"a/sim/w4/large", 2.0, 2.0}, {"b/sim/w4/large", 2.0, 2.0},
                                     {"c/sim/w4/large", 2.0, 2.0}, {"conv_layer/sim/w4/feature", 1.68, 1.0},
                                     {"conv_layer/sim/w4/channel", 1.3, 1.0}, {"pool_layer/sim/w4/max", 1.2, 1.0}});
    const comparison c = compare(old_run, new_run);
    EXPECT_EQ(row_of(c, "conv_layer/sim/w4/feature").machine_group, "layers");
    EXPECT_DOUBLE_EQ(row_of(c, "conv_layer/sim/w4/feature").machine_factor, 1.0);
    EXPECT_EQ(row_of(c, "conv_layer/sim/w4/feature").verdict, "WORSE");
    EXPECT_EQ(row_of(c, "a/sim/w4/large").verdict, "ok");
    EXPECT_EQ(row_of(c, "conv_layer/sim/w4/channel").verdict, "ok");
}

TEST(compare, a_layer_benchmark_alone_is_judged_by_its_own_baseline_not_the_primitives) {
    // scripts/bench.sh --layers linear: one layer workload; the simulator's copies took 2x as
    // long, the layer 1.6x against an unchanged baseline: WORSE, not "ours ok" by the copies.
    const results old_run = summary({{"a/sim/w4/large", 1.0, 1.0}, {"b/sim/w4/large", 1.0, 1.0},
                                     {"c/sim/w4/large", 1.0, 1.0}, {"linear_layer/sim/w4/linear", 1.0, 1.0}});
    const results new_run = summary({{"a/sim/w4/large", 2.0, 2.0}, {"b/sim/w4/large", 2.0, 2.0},
                                     {"c/sim/w4/large", 2.0, 2.0}, {"linear_layer/sim/w4/linear", 1.6, 1.0}});
    const comparison c = compare(old_run, new_run);
    const auto& row = row_of(c, "linear_layer/sim/w4/linear");
    EXPECT_EQ(row.machine_group, "layers");
    EXPECT_DOUBLE_EQ(row.machine_factor, 1.0);
    EXPECT_EQ(row.verdict, "WORSE");
    EXPECT_EQ(c.worse, 1);
}

TEST(compare, re_runs_of_unflagged_rows_change_nothing) {
    // A better row stays better even if a re-run (of something else) holds a worse ratio for it.
    const results old_run = summary({{"broadcast/mpi/w4/large", 2.0, 1.0}});
    const results first = summary({{"broadcast/mpi/w4/large", 1.0, 1.0}});
    const comparison c = compare(old_run, first, default_tolerance, default_min_baseline_seconds,
                                 {summary({{"broadcast/mpi/w4/large", 5.0, 1.0}})});
    EXPECT_TRUE(c.passed());
    EXPECT_EQ(row_of(c, "broadcast/mpi/w4/large").verdict, "better");
    EXPECT_TRUE(contains(printed(c, 0), "| broadcast/mpi/w4/large | 2.000 | 1.000 | -50.0% | 1 | better |"));
}

TEST(compare, rows_missing_from_either_side_are_reported_as_such) {
    // In old only: MISSING (fails). In new only, or without an old ratio: new (passes). A
    // workload with no ratio on either side is not a row.
    results old_run = summary({{"a/mpi/w4/large", 1.0, 1.0}, {"b/mpi/w4/large", 1.0, 1.0}});
    old_run.workloads["c/mpi/w4/large"].roles["ours"].seconds = 1.0;  // no baseline: no old ratio
    old_run.workloads["d/mpi/w4/large"].roles["ours"].seconds = 1.0;
    results new_run = summary({{"a/mpi/w4/large", 1.0, 1.0}, {"c/mpi/w4/large", 1.0, 2.0}, {"e/mpi/w4/large", 1.0, 4.0}});
    new_run.workloads["d/mpi/w4/large"].roles["ours"].seconds = 1.0;
    const comparison c = compare(old_run, new_run);
    EXPECT_EQ(c.missing, 1);
    EXPECT_EQ(c.worse, 0);
    ASSERT_EQ(c.rows.size(), 4u);
    EXPECT_EQ(row_of(c, "a/mpi/w4/large").verdict, "ok");
    EXPECT_EQ(row_of(c, "b/mpi/w4/large").verdict, "MISSING");
    EXPECT_EQ(row_of(c, "c/mpi/w4/large").verdict, "new");
    EXPECT_EQ(row_of(c, "e/mpi/w4/large").verdict, "new");
    const std::string out = printed(c, 1);
    EXPECT_TRUE(contains(out, "| b/mpi/w4/large | 1.000 | - | - | - | MISSING |")) << out;
    EXPECT_TRUE(contains(out, "| e/mpi/w4/large | - | 0.250 | - | - | new |")) << out;
    EXPECT_TRUE(contains(out, "missing: benchmark b/mpi/w4/large is in the old results")) << out;
    EXPECT_TRUE(contains(out, "FAIL: 0 regressions, 1 missing")) << out;
}

TEST(compare, a_larger_tolerance_accepts_the_same_change) {
    EXPECT_TRUE(compare(load("old.json"), load("worse.json"), 0.6).passed());
    EXPECT_FALSE(compare(load("old.json"), load("worse.json"), 0.4).passed());
}

TEST(compare, a_missing_benchmark_fails_with_a_clear_message) {
    const comparison c = compare(load("old.json"), load("missing.json"));
    EXPECT_EQ(c.missing, 1);
    EXPECT_EQ(c.worse, 0);
    std::ostringstream out;
    EXPECT_EQ(print_comparison(out, c, default_tolerance), 1);
    EXPECT_NE(out.str().find("missing: benchmark halo_exchange/sim/w16/large is in the old results"), std::string::npos)
        << out.str();
}

TEST(compare, a_new_benchmark_is_listed_but_does_not_fail) {
    const comparison c = compare(load("missing.json"), load("old.json"));
    EXPECT_TRUE(c.passed());
    ASSERT_EQ(c.rows.size(), 3u);
    EXPECT_EQ(c.rows.back().verdict, "new");
}

TEST(compare, a_baseline_below_the_floor_is_skipped_not_failed) {
    // repartition/mpi/w4/small: baseline 20 us in both runs, below a 1 ms floor.
    const comparison c = compare(load("old.json"), load("worse.json"), default_tolerance, 1e-3);
    EXPECT_EQ(c.worse, 1);  // broadcast (baseline 10 ms) is still compared
    const auto row = std::find_if(c.rows.begin(), c.rows.end(),
                                  [](const comparison_row& r) { return r.workload == "repartition/mpi/w4/small"; });
    ASSERT_NE(row, c.rows.end());
    EXPECT_EQ(row->verdict, "skipped");
}

// A comparison in which no workload had an old and a new ratio to set against each other proves
// nothing, and does not pass.
TEST(compare, a_comparison_of_nothing_fails) {
    const comparison skipped = compare(load("old.json"), load("old.json"), default_tolerance, 1e9);
    EXPECT_EQ(skipped.compared, 0);
    EXPECT_FALSE(skipped.passed());
    EXPECT_TRUE(contains(printed(skipped, 1), "FAIL: nothing was compared (3 workloads, each new or skipped)"));
    const comparison disjoint = compare(summary({{"a/sim/w4/large", 1, 1}}), summary({{"b/sim/w4/large", 1, 1}}));
    EXPECT_EQ(disjoint.missing, 1);
    EXPECT_FALSE(disjoint.passed());
    const comparison same = compare(load("old.json"), load("old.json"));
    EXPECT_EQ(same.compared, 3);
    EXPECT_TRUE(same.passed());
}

TEST(results, google_benchmark_output_is_refused_as_a_summary) {
    const auto raw = nlohmann::json::parse(R"({"context": {}, "benchmarks": []})");
    try {
        from_json(raw);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("not a distdl benchmark summary"), std::string::npos) << e.what();
    }
}

// from_json's error for `doc`'s "benchmarks" holding `workload` as {"x/mpi/w4/large": workload}.
std::string summary_error(const nlohmann::json& workload) {
    const nlohmann::json doc{{"schema", 1}, {"benchmarks", {{"x/mpi/w4/large", workload}}}};
    try {
        from_json(doc);
    } catch (const std::runtime_error& e) {
        return e.what();
    }
    return "no error";
}

TEST(results, a_summary_field_of_the_wrong_type_or_a_time_not_positive_is_refused_naming_it) {
    const auto with_ours = [](const nlohmann::json& seconds) {
        return nlohmann::json{{"roles", {{"ours", {{"seconds", seconds}}}, {"baseline", {{"seconds", 1.0}}}}}};
    };
    const std::string where = "benchmark 'x/mpi/w4/large': ";
    EXPECT_EQ(summary_error(with_ours(-0.01)),
              where + "roles.ours.seconds: expected a positive time, got number -0.01");
    EXPECT_EQ(summary_error(with_ours(0)), where + "roles.ours.seconds: expected a positive time, got number 0");
    EXPECT_EQ(summary_error(with_ours("0.01")),
              where + "roles.ours.seconds: expected a positive time, got string \"0.01\"");
    EXPECT_EQ(summary_error(5), where + "value: expected an object, got number 5");
    EXPECT_EQ(summary_error({{"roles", {{"ours", {{"time", 1.0}}}}}}),
              where + "roles.ours: expected an object with \"seconds\", got object");
    EXPECT_EQ(summary_error({{"target", "1.1"}}), where + "target: expected a number, got string \"1.1\"");
    EXPECT_EQ(summary_error({{"ratio", "x"}}), where + "ratio: expected a number, got string \"x\"");
    EXPECT_EQ(summary_error(with_ours(nullptr)), where + "roles.ours.seconds: expected a positive time, got null");
    EXPECT_EQ(summary_error(with_ours(1.0)), "no error");
}

TEST(results, google_benchmark_aggregates_alone_and_non_finite_statistics_are_read) {
    // --benchmark_repetitions=2 --benchmark_report_aggregates_only: medians only, and a cv of a
    // counter that is always 0 written as a bare NaN (not JSON); a NaN in a string stays.
    const std::string text = R"({"context": {}, "benchmarks": [
        {"name": "ours/x/sim/w4/large_median", "run_name": "ours/x/sim/w4/large", "run_type": "aggregate",
         "aggregate_name": "median", "real_time": 4.0, "time_unit": "ms", "label": "NaN inf"},
        {"name": "ours/x/sim/w4/large_cv", "run_name": "ours/x/sim/w4/large", "run_type": "aggregate",
         "aggregate_name": "cv", "real_time": 0.1, "time_unit": "ms", "msgs_per_iter": NaN, "x": -inf},
        {"name": "baseline/x/sim/w4/large_median", "run_name": "baseline/x/sim/w4/large", "run_type": "aggregate",
         "aggregate_name": "median", "real_time": 2.0, "time_unit": "ms", "bytes_per_second": Infinity}
      ]})";
    EXPECT_FALSE(nlohmann::json::accept(text));
    results r;
    add_benchmark_json(r, nlohmann::json::parse(null_for_non_finite(text)));
    ASSERT_EQ(r.workloads.count("x/sim/w4/large"), 1u);
    const auto& w = r.workloads.at("x/sim/w4/large");
    EXPECT_DOUBLE_EQ(*w.ratio(), 2.0);
    EXPECT_EQ(w.label, "NaN inf");
    EXPECT_DOUBLE_EQ(w.roles.at("baseline").bytes_per_second, 0.0);
}

TEST(results, report_text_escapes_what_names_and_labels_hold) {
    results r = summary({{"grp<b>&x/sim/w4/large", 2.0, 1.0}});
    std::ostringstream md, svg;
    write_markdown(md, r, "bench.svg");
    write_svg(svg, r);
    EXPECT_TRUE(contains(md.str(), "## grp&lt;b>&amp;x\n")) << md.str();
    EXPECT_TRUE(contains(svg.str(), ">grp&lt;b&gt;&amp;x/sim/w4/large</text>")) << svg.str();
    EXPECT_FALSE(contains(svg.str(), "<b>")) << svg.str();
}

TEST(results, benchmark_names_split_into_role_and_workload) {
    EXPECT_EQ(split_name("ours/broadcast/mpi/w4/large/iterations:10/manual_time"),
              (std::pair<std::string, std::string>{"ours", "broadcast/mpi/w4/large"}));
    EXPECT_EQ(split_name("baseline/gemm/f64/512"), (std::pair<std::string, std::string>{"baseline", "gemm/f64/512"}));
    EXPECT_THROW(split_name("lonely/iterations:3"), std::runtime_error);
    EXPECT_THROW(split_name("ours/a//manual_time"), std::runtime_error);  // an empty segment: workload "a/"
    EXPECT_THROW(split_name("ours/x/mpi/w4/large/"), std::runtime_error);   // "/" at the end
    EXPECT_THROW(split_name("/ours/x/mpi/w4/large"), std::runtime_error);   // and at the start
    // A workload without a group (kernels_bench's names) is refused, not cut short.
    try {
        split_name("gemm/sgemm_64x2048x2048");
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("'gemm/sgemm_64x2048x2048' is not <role>/<workload> with a workload "
                                             "<group>/<...>"),
                  std::string::npos)
            << e.what();
    }
}

// The summary's own fields, by name; and a workload name with an empty segment.
TEST(results, a_summary_header_field_of_the_wrong_type_is_refused_naming_it) {
    const auto error = [](const char* key, const nlohmann::json& value) {
        nlohmann::json doc{{"schema", 1}, {"benchmarks", nlohmann::json::object()}};
        doc[key] = value;
        try {
            from_json(doc);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(error("machine", "x"), "machine: expected an object, got string \"x\"");
    EXPECT_EQ(error("machine", {{"cores", -2}}), "machine.cores: expected a count, got number -2");
    EXPECT_EQ(error("quick", "yes"), "quick: expected true or false, got string \"yes\"");
    EXPECT_EQ(error("commit", 3), "commit: expected a string, got number 3");
    EXPECT_EQ(error("commit", "abc"), "no error");
    EXPECT_NE(summary_error(nullptr).find("value: expected an object"), std::string::npos);
    const nlohmann::json doc{{"schema", 1}, {"benchmarks", {{"a//b", {{"label", "x"}}}}}};
    EXPECT_THROW(from_json(doc), std::runtime_error);
}

// Google Benchmark output: the fields it always writes are required by name, a summary given
// in its place is named as one, and a benchmark given twice (two files of one run) is refused.
TEST(results, google_benchmark_output_is_read_strictly) {
    const auto run = [](const char* drop) {
        nlohmann::json r{{"name", "ours/x/mpi/w4/large"}, {"run_name", "ours/x/mpi/w4/large"},
                         {"run_type", "iteration"}, {"real_time", 1.0}, {"time_unit", "ms"}};
        if (drop) r.erase(drop);
        return nlohmann::json{{"context", nlohmann::json::object()}, {"benchmarks", {r}}};
    };
    const auto error = [](const nlohmann::json& doc, results& into) {
        try {
            add_benchmark_json(into, doc);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    results r;
    EXPECT_EQ(error(run("real_time"), r), "benchmark ours/x/mpi/w4/large: real_time: missing");
    EXPECT_EQ(error(run("time_unit"), r), "benchmark ours/x/mpi/w4/large: time_unit: missing");
    EXPECT_EQ(error(nlohmann::json{{"schema", 1}, {"benchmarks", nlohmann::json::object()}}, r),
              "a summary (bench.json), not Google Benchmark output: summaries go to --compare");
    EXPECT_EQ(error(run(nullptr), r), "no error");
    EXPECT_EQ(error(run(nullptr), r),
              "benchmark ours/x/mpi/w4/large is also in a file before this one: give each run once");
}

TEST(results, google_benchmark_runs_pair_into_ratios) {
    const auto doc = nlohmann::json::parse(R"({
      "context": {"quick": "true"},
      "benchmarks": [
        {"name": "ours/x/mpi/w4/large/iterations:2/manual_time", "run_name": "ours/x/mpi/w4/large/iterations:2/manual_time",
         "run_type": "iteration", "real_time": 3.0, "time_unit": "ms", "bytes_per_second": 5e9, "faults_per_iter": 2.0,
         "label": "shape"},
        {"name": "baseline/x/mpi/w4/large/iterations:2/manual_time", "run_name": "baseline/x/mpi/w4/large/iterations:2/manual_time",
         "run_type": "iteration", "real_time": 2000.0, "time_unit": "us"}
      ]})");
    results r;
    add_benchmark_json(r, doc);
    ASSERT_EQ(r.workloads.count("x/mpi/w4/large"), 1u);
    const auto& w = r.workloads.at("x/mpi/w4/large");
    EXPECT_DOUBLE_EQ(*w.ratio(), 1.5);
    EXPECT_EQ(w.label, "shape");
    EXPECT_DOUBLE_EQ(*w.roles.at("ours").faults_per_iteration, 2.0);
    EXPECT_TRUE(r.quick);
    // The summary survives a round trip, ratio and target included.
    const auto j = to_json(r);
    EXPECT_DOUBLE_EQ(j["benchmarks"]["x/mpi/w4/large"]["ratio"].get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(j["benchmarks"]["x/mpi/w4/large"]["target"].get<double>(), 1.1);
    EXPECT_DOUBLE_EQ(*from_json(j).workloads.at("x/mpi/w4/large").ratio(), 1.5);
}

TEST(results, a_target_the_benchmark_gives_wins_over_the_name_and_reaches_the_report) {
    // A layer benchmark's pair (bench/layers, --report-out): its goal, not the simulator's 2.0.
    const auto doc = nlohmann::json::parse(R"({
      "context": {"quick": "false"},
      "benchmarks": [
        {"name": "ours/conv_layer/sim/w4/large", "run_name": "ours/conv_layer/sim/w4/large", "run_type": "iteration",
         "real_time": 0.125, "time_unit": "s", "target_ratio": 1.05, "label": "feature over serial"},
        {"name": "baseline/conv_layer/sim/w4/large", "run_name": "baseline/conv_layer/sim/w4/large",
         "run_type": "iteration", "real_time": 0.1, "time_unit": "s", "target_ratio": 1.05}
      ]})");
    results r;
    add_benchmark_json(r, doc);
    const auto& w = r.workloads.at("conv_layer/sim/w4/large");
    EXPECT_DOUBLE_EQ(*target_of("conv_layer/sim/w4/large", w), 1.05);
    EXPECT_DOUBLE_EQ(*target_ratio("conv_layer/sim/w4/large"), 2.0);  // what the name alone would give
    const auto j = to_json(r);
    EXPECT_DOUBLE_EQ(j["benchmarks"]["conv_layer/sim/w4/large"]["target"].get<double>(), 1.05);
    const results back = from_json(j);
    EXPECT_DOUBLE_EQ(*target_of("conv_layer/sim/w4/large", back.workloads.at("conv_layer/sim/w4/large")), 1.05);
    std::ostringstream md;
    write_markdown(md, back, "bench.svg");
    EXPECT_NE(md.str().find("| sim/w4/large | feature over serial | 125 ms | 100 ms | 1.25 | MISSED (<= 1.05) |"),
              std::string::npos)
        << md.str();
}

TEST(results, a_run_with_a_median_is_timed_by_it) {
    // ours: mean 3 ms but median 2 ms (one slow iteration); baseline: no median, mean 1 ms.
    const auto doc = nlohmann::json::parse(R"({
      "context": {},
      "benchmarks": [
        {"name": "ours/x/mpi/w4/large/iterations:10/manual_time", "run_name": "ours/x/mpi/w4/large/iterations:10/manual_time",
         "run_type": "iteration", "real_time": 3.0, "time_unit": "ms", "bytes_per_second": 4e9, "median_seconds": 0.002},
        {"name": "baseline/x/mpi/w4/large/iterations:10/manual_time", "run_name": "baseline/x/mpi/w4/large/iterations:10/manual_time",
         "run_type": "iteration", "real_time": 1.0, "time_unit": "ms", "bytes_per_second": 12e9}
      ]})");
    results r;
    add_benchmark_json(r, doc);
    const auto& w = r.workloads.at("x/mpi/w4/large");
    EXPECT_DOUBLE_EQ(w.roles.at("ours").seconds, 0.002);
    EXPECT_DOUBLE_EQ(w.roles.at("ours").bytes_per_second, 6e9);  // the same bytes in the median's time
    EXPECT_DOUBLE_EQ(w.roles.at("baseline").seconds, 0.001);
    EXPECT_DOUBLE_EQ(*w.ratio(), 2.0);
}

TEST(results, workloads_sort_with_numbers_as_numbers) {
    const workload_order less;
    EXPECT_TRUE(less("broadcast/mpi/w4/large", "broadcast/mpi/w16/large"));
    EXPECT_FALSE(less("broadcast/mpi/w16/large", "broadcast/mpi/w4/large"));
    EXPECT_TRUE(less("broadcast/mpi/w16/large", "broadcast/sim/w4/large"));
    EXPECT_FALSE(less("a/w4", "a/w4"));
    EXPECT_TRUE(less("a/w4", "a/w4/x"));
}

}  // namespace
}  // namespace distdl::bench::report
