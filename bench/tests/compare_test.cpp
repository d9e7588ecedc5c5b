// The regression comparer of distdl-bench-report on small hand-written summaries: ratios
// within tolerance pass, a ratio that grew beyond it fails, a missing workload fails with a
// message naming it.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "bench/report/compare.hpp"
#include "bench/report/results.hpp"

namespace distdl::bench::report {
namespace {

results load(const std::string& name) {
    std::ifstream in(std::string(BENCH_TEST_DATA) + "/" + name);
    EXPECT_TRUE(in.good()) << name;
    return from_json(nlohmann::json::parse(in));
}

TEST(compare, ratios_within_tolerance_pass) {
    // old ratios 1.0, 2.0, 1.5; new 1.1 (+10%), 2.0, 1.5.
    const comparison c = compare(load("old.json"), load("within.json"));
    EXPECT_TRUE(c.passed());
    ASSERT_EQ(c.rows.size(), 3u);
    std::ostringstream out;
    EXPECT_EQ(print_comparison(out, c, default_tolerance), 0);
    EXPECT_NE(out.str().find("PASS"), std::string::npos) << out.str();
}

TEST(compare, a_worse_ratio_fails_and_is_named) {
    // broadcast 1.0 -> 1.5: +50% > 25%.
    const comparison c = compare(load("old.json"), load("worse.json"));
    EXPECT_EQ(c.worse, 1);
    EXPECT_FALSE(c.passed());
    std::ostringstream out;
    EXPECT_EQ(print_comparison(out, c, default_tolerance), 1);
    EXPECT_NE(out.str().find("| broadcast/mpi/w4/large | 1.000 | 1.500 | +50.0% | WORSE |"), std::string::npos)
        << out.str();
    EXPECT_NE(out.str().find("FAIL: 1 worse, 0 missing"), std::string::npos) << out.str();
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

TEST(results, google_benchmark_output_is_refused_as_a_summary) {
    const auto raw = nlohmann::json::parse(R"({"context": {}, "benchmarks": []})");
    try {
        from_json(raw);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("not a distdl benchmark summary"), std::string::npos) << e.what();
    }
}

TEST(results, benchmark_names_split_into_role_and_workload) {
    EXPECT_EQ(split_name("ours/broadcast/mpi/w4/large/iterations:10/manual_time"),
              (std::pair<std::string, std::string>{"ours", "broadcast/mpi/w4/large"}));
    EXPECT_EQ(split_name("baseline/gemm/f64/512"), (std::pair<std::string, std::string>{"baseline", "gemm/f64/512"}));
    EXPECT_THROW(split_name("lonely/iterations:3"), std::runtime_error);
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
