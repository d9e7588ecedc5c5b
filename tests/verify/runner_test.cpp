// The runner and the checks: a good case passes, and each way a case can go wrong makes it
// fail with a message that says so (the checks can fail).
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>
#include <type_traits>

#include <unistd.h>

#include <gtest/gtest.h>

#include "verify/build_commit.hpp"
#include "verify/case_file.hpp"
#include "verify/random.hpp"
#include "verify/registry.hpp"
#include "verify/report.hpp"
#include "verify/transports.hpp"

namespace distdl::verify {
layer_runner sequential_runner();  // verify/runners/sequential.cpp
}  // namespace distdl::verify

namespace {

namespace fs = std::filesystem;
using namespace distdl;
using namespace distdl::verify;

const fs::path source_root = fs::path(__FILE__).parent_path().parent_path().parent_path();

// ---- test layers on one partition P_x: y = a x, adjoint dy -> b dy ----

enum class flaw { none, wrong_value, wrong_adjoint, sleeps, deadlocks, refuses_on_rank0, crashes, exits_badly };

template <class T>
class scaled_copy : public module<T> {
  public:
    scaled_copy(const cartesian_partition& P_x, flaw f) : world_(P_x.world_comm()), flaw_(f) {
        if (flaw_ == flaw::refuses_on_rank0 && world_->rank() == 0) throw invalid_argument("TestLayer: rank 0 says no");
        // As a sanitizer's report does: a correct result, then the process ends with status 3.
        if (flaw_ == flaw::exits_badly && world_->rank() == 0) std::atexit([] { std::_Exit(3); });
    }
  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override {
        y = x;
        if (flaw_ == flaw::wrong_value && world_->rank() == world_->size() - 1 && y.size() > 0) y.data()[0] += T(1);
        // Far past the test's time limit: the test would wait this long if the case were not killed.
        if (flaw_ == flaw::sleeps) std::this_thread::sleep_for(std::chrono::seconds(30));
        if (flaw_ == flaw::crashes && world_->rank() == 0) std::abort();
        if (flaw_ == flaw::deadlocks && world_->rank() == 0 && world_->size() > 1) {
            double never = 0;
            std::vector<request> pending;
            pending.push_back(world_->irecv(&never, 1, 1, 7));
            world_->wait_all(pending);
        }
    }
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override {
        dx = dy;
        if (flaw_ == flaw::wrong_adjoint) dx *= T(3);
    }

  private:
    std::shared_ptr<communicator> world_;
    flaw flaw_;
};

template <class T, flaw F>
case_problem<T> make_test_layer(const case_spec& spec, const case_world& world) {
    const auto workers = spec.partition("P_x").workers;
    const int ws = spec.world_size;
    const shape_t shape = spec.x_shape;
    case_problem<T> p;
    p.layer = std::make_unique<scaled_copy<T>>(world.get("P_x"), F);
    p.input = [=](std::uint64_t seed) {
        std::vector<tensor<T>> x;
        for (int w = 0; w < ws; ++w) {
            const bool member = std::find(workers.begin(), workers.end(), w) != workers.end();
            x.push_back(member ? random_tensor<T>(shape, derive_seed(seed, input_data, static_cast<std::size_t>(w)))
                               : zero_volume<T>());
        }
        return x;
    };
    p.forward = [](const std::vector<tensor<T>>& x) { return x; };
    // The reference agrees with the flawed adjoint, so only the dot-product test can catch it.
    p.adjoint = [](const std::vector<tensor<T>>& dy) {
        auto dx = dy;
        if (F == flaw::wrong_adjoint)
            for (auto& t : dx) t *= T(3);
        return dx;
    };
    p.forward_exact = p.adjoint_exact = true;
    return p;
}

// A test layer on P_x alone.
layer_runner runner_on_P_x(const std::string& name, problem_factory<float> make_float,
                           problem_factory<double> make_double) {
    layer_runner r;
    r.layer = name;
    r.partitions = {"P_x"};
    r.chainable = true;  // stages of the Sequential tests
    r.make_float = std::move(make_float);
    r.make_double = std::move(make_double);
    return r;
}

template <flaw F>
layer_runner test_runner(const std::string& name) {
    return runner_on_P_x(name, &make_test_layer<float, F>, &make_test_layer<double, F>);
}

// ---- the rounding scale (case_problem::forward_bound / adjoint_bound) ----
// y = c x and dx = c dy, against the reference's c0 = 1e-9 (or 1): with c = 1e-9 (1 + 1e-5) the
// values are off by 1e-5 of themselves but by 1e-14 of the bound |x| (|dy|), the sum of |terms|
// of a computation whose terms cancelled to 1e-9 of their size.
enum class scaling { cancelled_bounded, cancelled_unbounded, wrong_bounded };

template <class T>
class scaled : public module<T> {
  public:
    explicit scaled(double c, double adjoint_c) : c_(T(c)), adjoint_c_(T(adjoint_c)) {}

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override { y = x * c_; }
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override { dx = dy * adjoint_c_; }

  private:
    T c_, adjoint_c_;
};

// The input of a one-worker test layer: one random piece of `shape`.
template <class T>
std::function<std::vector<tensor<T>>(std::uint64_t)> one_piece_of(const shape_t& shape) {
    return [shape](std::uint64_t seed) {
        return std::vector<tensor<T>>{random_tensor<T>(shape, derive_seed(seed, input_data, 0))};
    };
}

template <class T, scaling S>
case_problem<T> make_scaled_layer(const case_spec& spec, const case_world&) {
    const double c0 = S == scaling::wrong_bounded ? 1.0 : 1e-9, c = c0 * (1 + 1e-5);
    case_problem<T> p;
    p.layer = std::make_unique<scaled<T>>(c, c);
    p.input = one_piece_of<T>(spec.x_shape);
    p.forward = p.adjoint = [c0](std::vector<tensor<T>> pieces) {
        for (auto& t : pieces) t *= T(c0);
        return pieces;
    };
    if (S != scaling::cancelled_unbounded)
        p.forward_bound = p.adjoint_bound = [](const std::vector<tensor<T>>& magnitudes) { return magnitudes; };
    return p;
}

template <scaling S>
layer_runner scaled_runner(const std::string& name) {
    return runner_on_P_x(name, &make_scaled_layer<float, S>, &make_scaled_layer<double, S>);
}

// ---- the tolerances themselves (DESIGN §5) ----
// An error of a third, or three times, the documented bound: in the output (y = c x against the
// reference's x; dx = c dy, as its reference, keeps the pair adjoint), or in the adjoint alone
// (dx = c dy, which the reference copies, so only the dot-product test sees it).
enum class near_miss { output_under, output_over, adjoint_under, adjoint_over };

template <class T, near_miss M>
case_problem<T> make_near_miss_layer(const case_spec& spec, const case_world&) {
    const bool is_float = std::is_same_v<T, float>;
    const bool output = M == near_miss::output_under || M == near_miss::output_over;
    const double bound = is_float ? 1e-5 : output ? 1e-12 : 1e-13;
    const double c = 1 + bound * (M == near_miss::output_over || M == near_miss::adjoint_over ? 3.0 : 1.0 / 3);
    case_problem<T> p;
    p.layer = std::make_unique<scaled<T>>(output ? c : 1.0, c);
    p.input = one_piece_of<T>(spec.x_shape);
    p.forward = [](std::vector<tensor<T>> pieces) { return pieces; };
    p.adjoint = [c](std::vector<tensor<T>> pieces) {
        for (auto& t : pieces) t *= T(c);
        return pieces;
    };
    return p;
}

template <near_miss M>
layer_runner near_miss_runner(const std::string& name) {
    return runner_on_P_x(name, &make_near_miss_layer<float, M>, &make_near_miss_layer<double, M>);
}

const runner_registry& test_registry() {
    static const runner_registry registry = [] {
        runner_registry r;
        r.add(test_runner<flaw::none>("Identity"));
        r.add(test_runner<flaw::wrong_value>("WrongValue"));
        r.add(test_runner<flaw::wrong_adjoint>("WrongAdjoint"));
        r.add(test_runner<flaw::sleeps>("Sleeper"));
        r.add(test_runner<flaw::deadlocks>("Deadlock"));
        r.add(test_runner<flaw::crashes>("Crasher"));
        r.add(test_runner<flaw::exits_badly>("ExitsBadly"));  // only in a worker process (run_sim)
        r.add(test_runner<flaw::refuses_on_rank0>("RefusesOnRank0"));
        r.add(scaled_runner<scaling::cancelled_bounded>("CancelledBounded"));
        r.add(scaled_runner<scaling::cancelled_unbounded>("CancelledUnbounded"));
        r.add(scaled_runner<scaling::wrong_bounded>("WrongBounded"));
        r.add(near_miss_runner<near_miss::output_under>("OutputUnder"));
        r.add(near_miss_runner<near_miss::output_over>("OutputOver"));
        r.add(near_miss_runner<near_miss::adjoint_under>("AdjointUnder"));
        r.add(near_miss_runner<near_miss::adjoint_over>("AdjointOver"));
        r.add(sequential_runner());
        return r;
    }();
    return registry;
}

case_spec test_case(const std::string& layer, int world_size, const std::string& dtype = "float64",
                    nlohmann::json expect = "pass", const shape_t& x_shape = {3, 2}) {
    nlohmann::json doc = {{"schema", 1},
                          {"name", "test/" + layer},
                          {"layer", layer},
                          {"world_size", world_size},
                          {"partitions", {{"P_x", {{"workers", {{"range", {0, world_size}}}}, {"shape", {world_size}}}}}},
                          {"x_shape", x_shape},
                          {"dtype", dtype},
                          {"expect", expect}};
    return parse_case(doc, "inline.json", test_registry());
}

// A Sequential case of the given test layers, each on the case's one partition P.
case_spec sequential_case(const std::vector<std::string>& layers, int world_size) {
    nlohmann::json stages = nlohmann::json::array();
    for (const auto& layer : layers) stages.push_back({{"layer", layer}, {"partitions", {{"P_x", "P"}}}});
    const nlohmann::json P = {{"workers", {{"range", {0, world_size}}}}, {"shape", {world_size}}};
    nlohmann::json doc = {{"schema", 1},
                          {"name", "test/sequential"},
                          {"layer", "Sequential"},
                          {"world_size", world_size},
                          {"partitions", {{"P", P}}},
                          {"stages", stages},
                          {"x_shape", {3, 2}},
                          {"expect", "pass"}};
    return parse_case(doc, "inline.json", test_registry());
}

case_outcome run_sim(const case_spec& spec, double limit = 30) {
    return run_on_simulator(spec, *test_registry().find(spec.layer), limit);
}

TEST(runner, identity_passes_both_checks) {
    for (const char* type : {"float64", "float32"}) {
        const auto out = run_sim(test_case("Identity", 5, type));
        EXPECT_TRUE(out.passed()) << out.message;
        EXPECT_EQ(out.forward_error, 0.0);
        EXPECT_EQ(out.adjoint_error, 0.0);
        EXPECT_LE(out.dot_error, 1e-15);
    }
}

// A case whose every tensor is empty passes, since nothing fails, and says it compared nothing.
TEST(runner, a_case_of_empty_tensors_says_it_compared_nothing) {
    const auto nothing = run_sim(test_case("Identity", 3, "float64", "pass", {0, 2}));
    EXPECT_TRUE(nothing.passed()) << nothing.message;
    EXPECT_EQ(nothing.data_elements, 0u);
    EXPECT_NE(case_line(nothing).find("(all empty: nothing compared)"), std::string::npos) << case_line(nothing);

    const auto some = run_sim(test_case("Identity", 3));
    EXPECT_EQ(some.data_elements, 3 * (6 + 6u));  // every worker's x and y of shape [3,2]
    EXPECT_EQ(case_line(some).find("nothing compared"), std::string::npos) << case_line(some);
}

TEST(runner, wrong_module_fails_sequential_equivalence) {
    const auto out = run_sim(test_case("WrongValue", 4));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("rank 3: forward output differs from the reference"), std::string::npos) << out.message;
    EXPECT_GT(out.forward_error, 0.0);
}

TEST(runner, wrong_adjoint_fails_dot_product_test) {
    const auto out = run_sim(test_case("WrongAdjoint", 3));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("adjoint dot-product test"), std::string::npos) << out.message;
    EXPECT_GT(out.dot_error, 0.1);
}

// The harness's bounds are DESIGN §5's: 1e-12 (double) and 1e-5 (float) for the outputs,
// 1e-13 and 1e-5 for the dot-product test; a third of one passes, three times fails.
TEST(runner, the_bounds_are_the_documented_ones) {
    for (const char* type : {"float64", "float32"}) {
        auto out = run_sim(test_case("OutputUnder", 1, type));
        EXPECT_TRUE(out.passed()) << type << ": " << out.message;
        out = run_sim(test_case("OutputOver", 1, type));
        EXPECT_FALSE(out.passed()) << type;
        EXPECT_NE(out.message.find("forward output differs from the reference"), std::string::npos) << out.message;
        out = run_sim(test_case("AdjointUnder", 1, type));
        EXPECT_TRUE(out.passed()) << type << ": " << out.message;
        out = run_sim(test_case("AdjointOver", 1, type));
        EXPECT_FALSE(out.passed()) << type;
        EXPECT_NE(out.message.find("adjoint dot-product test"), std::string::npos) << out.message;
    }
}

TEST(runner, rounding_is_judged_against_the_bound_and_a_wrong_value_still_fails) {
    auto out = run_sim(test_case("CancelledBounded", 1));
    EXPECT_TRUE(out.passed()) << out.message;
    EXPECT_NEAR(out.forward_error, 1e-14, 1e-15);
    EXPECT_NEAR(out.adjoint_error, 1e-14, 1e-15);
    out = run_sim(test_case("CancelledUnbounded", 1));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("forward output differs from the reference"), std::string::npos) << out.message;
    out = run_sim(test_case("WrongBounded", 1));
    EXPECT_FALSE(out.passed());
    EXPECT_NEAR(out.forward_error, 1e-5, 1e-7);
}

TEST(runner, expected_error_that_never_comes_fails) {
    const auto out = run_sim(test_case("Identity", 2, "float64", {{"error", "something"}}));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("was not refused (expected an error containing \"something\")"), std::string::npos)
        << out.message;
}

// Texts are quoted as in JSON: the message stays one line, and a quote in the text is not its end.
TEST(runner, expected_error_texts_are_quoted_as_in_json) {
    const auto out = run_sim(test_case("Identity", 2, "float64", {{"error", "two \"lines\"\nof text"}}));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("(expected an error containing \"two \\\"lines\\\"\\nof text\")"), std::string::npos)
        << out.message;
    EXPECT_EQ(out.message.find('\n'), std::string::npos) << out.message;
}

TEST(runner, refusal_on_some_ranks_only_fails) {
    const auto out = run_sim(test_case("RefusesOnRank0", 3, "float64", {{"error", "says no"}}));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("rank 1 was not refused"), std::string::npos) << out.message;
}

TEST(runner, deadlock_is_a_failure_with_a_message) {
    const auto out = run_sim(test_case("Deadlock", 3));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("deadlock"), std::string::npos) << out.message;
}

TEST(runner, hang_past_the_time_limit_fails_and_its_process_is_killed) {
    const auto out = run_sim(test_case("Sleeper", 2), 0.2);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("exceeded the time limit of 0.2 s"), std::string::npos) << out.message;
    EXPECT_NE(out.message.find("its process was killed"), std::string::npos) << out.message;
}

TEST(runner, a_crash_fails_its_case_only) {
    const auto out = run_sim(test_case("Crasher", 2));
    EXPECT_FALSE(out.passed());
    EXPECT_EQ(out.name, "test/Crasher");
    EXPECT_NE(out.message.find("the process running the case died of signal " + std::to_string(SIGABRT)),
              std::string::npos)
        << out.message;
    EXPECT_NE(out.message.find("before it sent its result"), std::string::npos) << out.message;
    EXPECT_TRUE(run_sim(test_case("Identity", 2)).passed());  // the next case runs as usual
}

// The test layers run in worker processes: a sanitizer's finding there shows in a worker's end.
class workers_end_well : public ::testing::Environment {
  public:
    void TearDown() override { EXPECT_EQ(describe_wait_status(finish_simulator_cases()), "ended with exit status 0"); }
};
const auto* const workers_checked = ::testing::AddGlobalTestEnvironment(new workers_end_well);

TEST(runner, a_case_changed_after_parsing_is_refused_not_run_as_its_document_says) {
    auto spec = test_case("Identity", 2);
    spec.expected_error = "changed";
    EXPECT_THROW(run_sim(spec), std::logic_error);
}

TEST(runner, in_this_process_a_case_runs_alike) {
    const auto& runner = *test_registry().find("WrongValue");
    const auto out = run_in_this_process(test_case("WrongValue", 4), runner);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("differs from the reference"), std::string::npos) << out.message;
    EXPECT_TRUE(run_in_this_process(test_case("Identity", 3), *test_registry().find("Identity")).passed());
}

// ---- Sequential: the stages' references chained; a flaw of one stage fails the case ----

TEST(runner, sequential_of_correct_stages_passes) {
    const auto out = run_sim(sequential_case({"Identity", "Identity", "Identity"}, 3));
    EXPECT_TRUE(out.passed()) << out.message;
    EXPECT_EQ(out.forward_error, 0.0);
    EXPECT_LE(out.dot_error, 1e-15);
}

TEST(runner, sequential_with_one_wrong_stage_fails) {
    auto out = run_sim(sequential_case({"Identity", "WrongValue", "Identity"}, 3));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("rank 2: forward output differs from the reference"), std::string::npos) << out.message;
    out = run_sim(sequential_case({"WrongAdjoint", "Identity"}, 2));
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("adjoint dot-product test"), std::string::npos) << out.message;
}

TEST(runner, sequential_judges_rounding_against_the_chained_bounds) {
    // Two stages of c = 1e-9 (1 + 1e-5): off by 2e-5 of the values, 2e-23 of the bound |x|.
    auto out = run_sim(sequential_case({"CancelledBounded", "CancelledBounded"}, 1));
    EXPECT_TRUE(out.passed()) << out.message;
    EXPECT_LT(out.forward_error, 1e-20);
    out = run_sim(sequential_case({"CancelledUnbounded", "CancelledUnbounded"}, 1));
    EXPECT_FALSE(out.passed());
    EXPECT_NEAR(out.forward_error, 2e-5, 1e-7);
}

// ---- the library's own cases through the built-in runners ----

case_outcome run_library_case(const std::string& relative) {
    const auto spec = load_case((source_root / "cases" / relative).string(), builtin_registry());
    return run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
}

TEST(runner, the_worker_ending_badly_after_its_cases_is_reported) {
    EXPECT_EQ(finish_simulator_cases(), 0);  // the workers before ended well; a fresh one for this test
    EXPECT_TRUE(run_sim(test_case("ExitsBadly", 2)).passed());
    EXPECT_TRUE(run_sim(test_case("Identity", 2)).passed());  // the same worker
    // Another registry: another worker; the first one's end is kept for finish_simulator_cases.
    EXPECT_TRUE(run_library_case("sum_reduce/spec001_2x3x2_to_1x3x1.json").passed());
    EXPECT_EQ(describe_wait_status(finish_simulator_cases()), "ended with exit status 3");
    EXPECT_EQ(finish_simulator_cases(), 0);  // no worker left
}

TEST(runner, library_case_passes) {
    const auto out = run_library_case("sum_reduce/spec001_2x3x2_to_1x3x1.json");
    EXPECT_TRUE(out.passed()) << out.message;
    EXPECT_LE(out.dot_error, 1e-13);
}

TEST(runner, library_refusal_passes) {
    const auto out = run_library_case("sum_reduce/spec000_example5_refused.json");
    EXPECT_TRUE(out.passed()) << out.message;
    EXPECT_NE(out.message.find("(dimension 2: 2 vs 3)"), std::string::npos) << out.message;
}

// A library case with some keys of its document replaced (the worker process runs a case as its
// document says, so the document is changed, not the parsed case).
case_spec library_case_with(const std::string& name, const nlohmann::json& changes) {
    const auto file = (source_root / "cases" / name).string();
    auto document = load_case(file, builtin_registry()).source;
    document.update(changes);
    return parse_case(document, file, builtin_registry());
}

// The library's refusal case with another "expect".
case_spec refusal_case_expecting(const nlohmann::json& expect) {
    return library_case_with("sum_reduce/spec000_example5_refused.json", {{"expect", expect}});
}

TEST(runner, refusal_with_mismatched_text_fails) {
    const auto spec = refusal_case_expecting({{"error", "a message the layer never gives"}});
    const auto out = run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("which does not contain \"a message the layer never gives\""), std::string::npos)
        << out.message;
}

// Only the library's refusal satisfies an expected error: an x_shape that does not fit
// in_features reaches the layer, which refuses it; a case the runner cannot build is a failure
// of the case whatever its text says.
TEST(runner, a_refusal_comes_from_the_layer_not_the_runner) {
    const nlohmann::json wrong_features{{"x_shape", {2, 5}}, {"expect", {{"error", "in_features"}}}};
    auto spec = library_case_with("linear/spec002_example.json", wrong_features);
    auto out = run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("refused with \"Linear: x on P_x worker"), std::string::npos) << out.message;
    spec = library_case_with("linear/spec002_example.json",
                             {{"x_shape", {2, 5}}, {"expect", {{"error", "expected [batch, "}}}});
    out = run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
    EXPECT_TRUE(out.passed()) << out.message;
    spec = library_case_with("linear/spec002_example.json",
                             {{"x_shape", {2, 5, 1}}, {"expect", {{"error", "x_shape [2,5,1]"}}}});
    out = run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("cannot be split over P_x"), std::string::npos) << out.message;
}

TEST(runner, pass_case_that_is_refused_fails) {
    const auto spec = refusal_case_expecting("pass");
    const auto out = run_on_simulator(spec, *builtin_registry().find(spec.layer), 30);
    EXPECT_FALSE(out.passed());
    EXPECT_NE(out.message.find("cannot reduce"), std::string::npos) << out.message;
}

// ---- outcomes travel as JSON (MPI agreement) and land in the reports ----

TEST(report, outcome_round_trips_through_json_and_reports_are_written) {
    const auto out = run_sim(test_case("WrongValue", 2));
    const auto back = nlohmann::json(out).get<case_outcome>();
    EXPECT_EQ(back.name, out.name);
    EXPECT_EQ(back.message, out.message);
    EXPECT_EQ(back.forward_error, out.forward_error);
    EXPECT_EQ(back.result, out.result);

    run_record record;
    record.transport = "sim";
    record.outcomes = {out, run_sim(test_case("Identity", 2))};
    const fs::path dir = fs::temp_directory_path() / ("distdl_verify_report_" + std::to_string(::getpid()));
    write_reports(dir.string(), record);
    std::ifstream md(dir / "verify.md");
    const std::string text((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("## WrongValue"), std::string::npos);
    EXPECT_NE(text.find("git commit:"), std::string::npos);
    std::ifstream js(dir / "verify.json");
    const auto report = nlohmann::json::parse(js);
    EXPECT_EQ(report.at("totals").at("failed"), 1);
    EXPECT_EQ(report.at("totals").at("passed"), 1);
    EXPECT_EQ(report.at("layers").at("Identity").at("cases").size(), 1u);
    // The commit is the one the library was built from (written by the build), wherever it runs.
    const std::string commit = build_commit();
    EXPECT_EQ(report.at("git_commit"), commit);
    EXPECT_TRUE(commit == "unknown" || (commit.size() >= 7 && commit.find_first_not_of("0123456789abcdef") ==
                                                                 std::string::npos))
        << commit;
    fs::remove_all(dir);
}

}  // namespace
