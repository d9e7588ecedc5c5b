// Randomized sweep (fixed seed, simulator) of DistributedLinear: P_fo and P_fi drawn
// independently, P_x, P_y and P_W on random (often overlapping, scrambled) worker sets of a
// world that may have idle workers, fewer features than workers, batches 0-3 changing from
// call to call, float and double. Three calls per case; in a third of the cases a refused call
// comes before the last (a bad x or dy on one worker: every worker of the layer, and no other,
// must throw the same message naming it, and the layer must go on as if the call had not been
// made). Every P_y worker's output block, every P_x worker's input gradient and every P_W
// worker's weight (and bias) gradient block are compared with reference/linear on the global
// tensors, within the tolerance relative to the same sums over absolute values.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "layers/linear.hpp"
#include "reference/linear.hpp"
#include "reference/repartition.hpp"
#include "simulator/run.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "tests/layers/sweep_util.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::verify::largest_magnitude;
using distdl::testing::refusal;

struct linear_case {
    std::size_t in = 1, out = 1, world = 1, P_fi = 1, P_fo = 1;
    std::vector<int> x_workers, y_workers, w_workers;
    bool bias = true, single = false;
    std::size_t batches[3] = {1, 1, 1};
    refusal refused;
    std::string describe() const {
        using distdl::format_list;
        std::ostringstream o;
        o << (single ? "float" : "double") << " world " << world << " P_x [1," << P_fi << "] on "
          << format_list(x_workers) << " P_y [1," << P_fo << "] on " << format_list(y_workers) << " P_W [" << P_fo
          << "," << P_fi << "] on " << format_list(w_workers) << " " << in << "->" << out << (bias ? "" : " no bias")
          << " batches " << format_list(batches);
        if (refused.kind != refusal::none) o << ", a bad " << refused.names(x_workers, y_workers) << " before the last";
        return o.str();
    }
};

linear_case draw(std::mt19937_64& rng) {
    auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
    linear_case c;
    c.single = pick(0, 2) == 0;
    c.bias = pick(0, 3) != 0;
    c.P_fo = pick(1, 4);
    c.P_fi = pick(1, std::min<std::size_t>(4, 12 / c.P_fo));
    c.in = pick(1, 9);
    c.out = pick(1, 9);
    for (auto& b : c.batches) b = pick(0, 3);
    c.world = c.P_fo * c.P_fi + pick(0, 2);
    auto workers = [&](std::size_t count) { return distdl::testing::random_workers(rng, c.world, count); };
    c.w_workers = workers(c.P_fo * c.P_fi);
    c.x_workers = workers(c.P_fi);
    c.y_workers = workers(c.P_fo);
    c.refused.kind = pick(0, 5) >= 2 ? refusal::none : pick(0, 1) ? refusal::x_piece : refusal::dy_piece;
    c.refused.refuser = pick(0, (c.refused.kind == refusal::x_piece ? c.P_fi : c.P_fo) - 1);
    return c;
}

// Runs one case on the simulator; returns the first problem (empty: none).
template <class T>
std::string run_case(const linear_case& c, std::uint64_t seed) {
    const distdl::linear_options options{.bias = c.bias, .seed = seed};
    const auto model = distdl::linear_initial_parameters<T>(c.in, c.out, options);
    const tensor<T> w_abs = xt::abs(model.weight), b_abs = xt::abs(model.bias);
    const double tolerance = distdl::testing::arithmetic_tolerance<T>();
    const shape_t P_x{1, c.P_fi}, P_y{1, c.P_fo}, P_W{c.P_fo, c.P_fi};

    struct expected {
        std::vector<tensor<T>> x, y, dy, dx;
        double y_scale, dx_scale;  // compare_piece's scales: the magnitudes of the terms summed
    };
    std::vector<expected> calls;
    tensor<T> dw = xt::zeros<T>(shape_t{c.out, c.in}), db = xt::zeros<T>(shape_t{c.out});
    tensor<T> dw_terms = dw, db_terms = db;
    for (std::size_t call = 0; call < 3; ++call) {
        const tensor<T> x = distdl::verify::random_tensor<T>({c.batches[call], c.in}, seed * 7 + call);
        const tensor<T> y =
            c.bias ? distdl::ref::linear(x, model.weight, model.bias) : distdl::ref::linear(x, model.weight);
        const tensor<T> dy = distdl::verify::random_tensor<T>({c.batches[call], c.out}, seed * 11 + call);
        const tensor<T> dx = distdl::ref::linear_adjoint_input(dy, model.weight);
        const tensor<T> x_abs = xt::abs(x), dy_abs = xt::abs(dy);
        const tensor<T> y_terms = c.bias ? distdl::ref::linear(x_abs, w_abs, b_abs) : distdl::ref::linear(x_abs, w_abs);
        const tensor<T> dx_terms = distdl::ref::linear_adjoint_input(dy_abs, w_abs);
        if (call != 1 || c.refused.kind == refusal::none) {  // the refused call adds nothing
            dw += distdl::ref::linear_adjoint_weight(dy, x);
            dw_terms += distdl::ref::linear_adjoint_weight(dy_abs, x_abs);
            db += distdl::ref::linear_adjoint_bias(dy);
            db_terms += distdl::ref::linear_adjoint_bias(dy_abs);
        }
        calls.push_back({distdl::ref::split(x, P_x), distdl::ref::split(y, P_y), distdl::ref::split(dy, P_y),
                         distdl::ref::split(dx, P_x), largest_magnitude(y_terms), largest_magnitude(dx_terms)});
    }

    std::vector<std::string> problems(c.world), refusals(c.world);
    distdl::sim::run(static_cast<int>(c.world), [&](const std::shared_ptr<distdl::communicator>& world) {
        const int me = world->rank();
        const auto px_part = distdl::testing::make_partition(world, c.x_workers, P_x);
        const auto py_part = distdl::testing::make_partition(world, c.y_workers, P_y);
        const auto pw_part = distdl::testing::make_partition(world, c.w_workers, P_W);
        distdl::distributed_linear<T> layer(px_part, py_part, pw_part, c.in, c.out, options);
        using distdl::verify::runners::rank_in;
        const auto w = std::size_t(me);
        const int px = rank_in(c.x_workers, w), py = rank_in(c.y_workers, w), pw = rank_in(c.w_workers, w);
        std::string& problem = problems[std::size_t(me)];
        auto note = [&](const tensor<T>& got, const tensor<T>& want, const std::string& what, double scale) {
            const auto r = distdl::verify::compare_piece(got, want, false, tolerance, what, scale);
            if (problem.empty() && !r.problem.empty()) problem = r.problem;
        };
        tensor<T> y, dx;
        for (std::size_t call = 0; call < 3; ++call) {
            const auto& e = calls[call];
            const std::string when = " (call " + std::to_string(call + 1) + ")";
            // Call 2 is the refused one when there is one: its pieces are call 2's, one of them bad.
            if (call == 1 && c.refused.kind != refusal::none) {
                refusals[std::size_t(me)] = distdl::testing::refused_call<T>(layer, e.x, e.dy, px, py, c.refused);
                continue;
            }
            layer.forward(px >= 0 ? e.x[std::size_t(px)] : distdl::zero_volume<T>(), y);
            if (py >= 0) note(y, e.y[std::size_t(py)], "output" + when, e.y_scale);
            layer.adjoint(py >= 0 ? e.dy[std::size_t(py)] : distdl::zero_volume<T>(), dx);
            if (px >= 0) note(dx, e.dx[std::size_t(px)], "input gradient" + when, e.dx_scale);
        }
        if (pw < 0) return;
        const std::size_t r = std::size_t(pw) / c.P_fi, col = std::size_t(pw) % c.P_fi;
        const auto params = layer.parameters();
        note(params.at(0)->grad, distdl::testing::matrix_block(dw, c.P_fo, r, c.P_fi, col), "weight gradient",
             largest_magnitude(dw_terms));
        if (c.bias && col == 0)
            note(params.at(1)->grad, distdl::testing::vector_block(db, c.P_fo, r), "bias gradient",
                 largest_magnitude(db_terms));
    });
    for (std::size_t r = 0; r < problems.size(); ++r)
        if (!problems[r].empty()) return "worker " + std::to_string(r) + ": " + problems[r];
    if (c.refused.kind == refusal::none) return {};
    return distdl::testing::refusal_problem(c.refused, c.x_workers, c.y_workers, c.w_workers, refusals);
}

TEST(linear_sweep, matches_reference_for_random_partitions) {
    std::mt19937_64 rng(20261127);
    int split_both = 0, idle_workers = 0, fewer_features = 0, refusals = 0, empty_batches = 0;
    for (std::uint64_t i = 0; i < 300; ++i) {
        const linear_case c = draw(rng);
        split_both += c.P_fi > 1 && c.P_fo > 1;
        idle_workers += c.world > c.w_workers.size();
        fewer_features += c.in < c.P_fi || c.out < c.P_fo;
        refusals += c.refused.kind != refusal::none;
        empty_batches += c.batches[0] == 0 || c.batches[2] == 0;
        const std::string problem = c.single ? run_case<float>(c, 300 + i) : run_case<double>(c, 300 + i);
        ASSERT_TRUE(problem.empty()) << "case " << i << " (" << c.describe() << "): " << problem;
    }
    // The sweep covers what it claims to.
    EXPECT_GT(split_both, 80);
    EXPECT_GT(idle_workers, 150);
    EXPECT_GT(fewer_features, 30);
    EXPECT_GT(refusals, 60);
    EXPECT_GT(empty_batches, 60);
}

}  // namespace
