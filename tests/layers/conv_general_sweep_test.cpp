// Randomized sweep (fixed seed, simulator) of GeneralConv1d/2d/3d over all three partitions:
// P_co, P_ci and the spatial splits drawn independently, P_x, P_y and P_w on random (often
// overlapping, scrambled) worker sets of a world that may have idle workers, uneven and
// fewer channels than workers, kernel geometries as in the feature sweep (conv_sweep_test),
// the global input shape given or learnt, float and double (float: the engines the layers pick,
// the direct one included). Two calls per case; with the shape learnt, the second has another
// batch (the layout is planned again). In a third of the cases a refused call comes between
// them (a bad x or dy on one worker): every worker of the layer, and no other, must throw the
// same message naming that worker, and the layer must go on as if the call had not been made.
// Every P_y worker's output block, every P_x worker's input gradient and the owners' weight
// and bias gradients are compared with reference/conv on the global tensors, within the
// tolerance relative to the same sums over absolute values (what bounds rounding: float sums
// of random terms sometimes cancel to far below their terms).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "layers/conv_general.hpp"
#include "layers/conv_initial.hpp"
#include "reference/conv.hpp"
#include "reference/repartition.hpp"
#include "simulator/run.hpp"
#include "tests/layers/conv_sweep_draw.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "tests/layers/sweep_util.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::verify::largest_magnitude;

struct general_case {
    std::size_t dims = 1, in = 1, out = 1, world = 1;
    shape_t P_x, P_y, P_w, extent, k, s, p, d;
    std::vector<int> x_workers, y_workers, w_workers;
    bool bias = true, shape_given = false, single = false;
    // Between the two calls, now and then a refused call: an x or dy with one channel too many.
    distdl::testing::refusal refused;
    std::string describe() const {
        using distdl::format_list;
        std::ostringstream o;
        o << dims << "-d " << (single ? "float" : "double") << " world " << world << " P_x " << format_list(P_x)
          << " on " << format_list(x_workers) << " P_y " << format_list(P_y) << " on " << format_list(y_workers)
          << " P_w " << format_list(P_w) << " on " << format_list(w_workers) << " L " << format_list(extent) << " k "
          << format_list(k) << " s " << format_list(s) << " p " << format_list(p) << " d " << format_list(d) << " "
          << in << "->" << out << (bias ? "" : " no bias") << (shape_given ? " input_shape given" : "");
        if (refused.kind != distdl::testing::refusal::none) o << ", then a bad " << refused.names(x_workers, y_workers);
        return o.str();
    }
};

general_case draw(std::mt19937_64& rng) {
    auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
    general_case c;
    // One case in five is made for the float direct engine on halo windows (P_x = P_w, P_co = 1,
    // stride and dilation 1, 2-d): it reads the window's own part from the piece (x_patch) and
    // writes the own part of the window gradient straight into dx.
    const bool direct_windows = pick(0, 4) == 0;
    const std::size_t roll = pick(0, 9);
    c.dims = direct_windows ? 2 : roll < 5 ? 1 : roll < 9 ? 2 : 3;
    c.single = direct_windows || pick(0, 2) == 0;
    // Now and then more channels than a register tile and rows longer than a vector or two (the
    // float direct engine's tails).
    const bool wide = pick(0, 3) == 0;
    c.in = pick(1, wide ? 17 : 5);
    c.out = pick(1, wide ? 17 : 5);
    c.bias = pick(0, 3) != 0;
    c.shape_given = pick(0, 1) == 1;
    const std::size_t P_co = direct_windows ? 1 : pick(1, 3), P_ci = pick(1, 3);
    std::size_t spatial_workers = 1;
    shape_t P_spatial;
    for (std::size_t e = 0; e < c.dims; ++e) {
        const std::size_t budget = std::max<std::size_t>(1, 12 / (P_co * P_ci * spatial_workers));
        const std::size_t P = pick(1, std::min<std::size_t>(3, budget));
        spatial_workers *= P;
        P_spatial.push_back(P);
        const std::size_t longest = c.dims == 1 ? 12 : wide && e + 1 == c.dims ? 40 : 6;
        const std::size_t most_stride = direct_windows ? 1 : 3, most_dilation = direct_windows ? 1 : 2;
        const auto dim = distdl::testing::draw_conv_dimension(pick, {longest, 4, most_stride, 3, most_dilation});
        c.extent.push_back(dim.extent);
        c.k.push_back(dim.kernel);
        c.s.push_back(dim.stride);
        c.p.push_back(dim.padding);
        c.d.push_back(dim.dilation);
    }
    c.P_x = {1, P_ci};
    c.P_y = {1, P_co};
    c.P_w = {P_co, P_ci};
    for (auto* shape : {&c.P_x, &c.P_y, &c.P_w}) shape->insert(shape->end(), P_spatial.begin(), P_spatial.end());
    const std::size_t w_size = P_co * P_ci * spatial_workers;
    c.world = w_size + pick(0, 2);
    auto workers = [&](std::size_t count) { return distdl::testing::random_workers(rng, c.world, count); };
    c.w_workers = workers(w_size);
    c.x_workers = workers(P_ci * spatial_workers);
    // Now and then P_x = P_w (the feature layout, and the benchmark's general one): no broadcast
    // of the windows, the halo window is the kernel's input.
    if (P_co == 1 && (direct_windows || pick(0, 1) == 0)) c.x_workers = c.w_workers;
    c.y_workers = workers(P_co * spatial_workers);
    using refusal = distdl::testing::refusal;
    c.refused.kind = pick(0, 5) >= 2 ? refusal::none : pick(0, 1) ? refusal::x_piece : refusal::dy_piece;
    c.refused.refuser = pick(0, (c.refused.kind == refusal::x_piece ? c.x_workers : c.y_workers).size() - 1);
    return c;
}

// Runs one case on the simulator; returns the first problem (empty: none).
template <class T>
std::string run_case(const general_case& c, std::uint64_t seed) {
    distdl::conv_options options{.kernel_size = c.k, .stride = c.s, .padding = c.p, .dilation = c.d,
                                 .bias = c.bias, .seed = seed};
    // A given input shape fixes the batch (another one is refused); learnt, it may change.
    const std::size_t batches[] = {1 + seed % 2, c.shape_given ? 1 + seed % 2 : 2 - seed % 2};
    if (c.shape_given) {
        options.input_shape = shape_t{batches[0], c.in};
        options.input_shape->insert(options.input_shape->end(), c.extent.begin(), c.extent.end());
    }
    const auto spec = distdl::normalize_conv_options("GeneralConv", c.dims, c.in, c.out, options);
    const auto model = distdl::conv_initial_parameters<T>(spec);
    const distdl::ref::conv_geometry g{c.s, c.p, c.d};
    const double tolerance = distdl::testing::arithmetic_tolerance<T>();

    struct expected {
        std::vector<tensor<T>> x, y, dy, dx;
        double y_scale, dx_scale;  // compare_piece's scales: the magnitudes of the terms summed
    };
    std::vector<expected> calls;
    tensor<T> dw = xt::zeros<T>(spec.weight_shape()), db = xt::zeros<T>(shape_t{c.out});
    tensor<T> dw_terms = dw, db_terms = db;
    const tensor<T> w_abs = xt::abs(model.weight), b_abs = xt::abs(model.bias);
    for (std::size_t call = 0; call < 2; ++call) {
        shape_t x_shape{batches[call], c.in};
        x_shape.insert(x_shape.end(), c.extent.begin(), c.extent.end());
        const tensor<T> x = distdl::verify::random_tensor<T>(x_shape, seed * 7 + call);
        const tensor<T> y = distdl::ref::conv_forward(x, model.weight, c.bias ? &model.bias : nullptr, g);
        const tensor<T> dy = distdl::verify::random_tensor<T>(distdl::shape_of(y), seed * 11 + call);
        dw += distdl::ref::conv_adjoint_weight(x, dy, spec.weight_shape(), g);
        db += distdl::ref::conv_adjoint_bias(dy);
        const tensor<T> dx = distdl::ref::conv_adjoint_input(dy, model.weight, x_shape, g);
        // The same sums over absolute values bound what rounding can do to each element (a sum
        // of random terms may cancel to far below its terms).
        const tensor<T> x_abs = xt::abs(x), dy_abs = xt::abs(dy);
        const tensor<T> y_terms = distdl::ref::conv_forward(x_abs, w_abs, c.bias ? &b_abs : nullptr, g);
        const tensor<T> dx_terms = distdl::ref::conv_adjoint_input(dy_abs, w_abs, x_shape, g);
        dw_terms += distdl::ref::conv_adjoint_weight(x_abs, dy_abs, spec.weight_shape(), g);
        db_terms += distdl::ref::conv_adjoint_bias(dy_abs);
        calls.push_back({distdl::ref::split(x, c.P_x), distdl::ref::split(y, c.P_y), distdl::ref::split(dy, c.P_y),
                         distdl::ref::split(dx, c.P_x), largest_magnitude(y_terms), largest_magnitude(dx_terms)});
    }

    std::vector<std::string> problems(c.world), refusals(c.world);
    distdl::sim::run(static_cast<int>(c.world), [&](const std::shared_ptr<distdl::communicator>& world) {
        const int me = world->rank();
        const auto P_x = distdl::testing::make_partition(world, c.x_workers, c.P_x);
        const auto P_y = distdl::testing::make_partition(world, c.y_workers, c.P_y);
        const auto P_w = distdl::testing::make_partition(world, c.w_workers, c.P_w);
        distdl::general_conv<T> layer(c.dims, P_x, P_y, P_w, c.in, c.out, options);
        using distdl::verify::runners::rank_in;
        const auto w = std::size_t(me);
        const int px = rank_in(c.x_workers, w), py = rank_in(c.y_workers, w), pw = rank_in(c.w_workers, w);
        std::string& problem = problems[static_cast<std::size_t>(me)];
        auto note = [&](const tensor<T>& got, const tensor<T>& want, const std::string& what, double scale) {
            const auto r = distdl::verify::compare_piece(got, want, false, tolerance, what, scale);
            if (problem.empty() && !r.problem.empty()) problem = r.problem;
        };
        tensor<T> y, dx;
        for (std::size_t call = 0; call < 2; ++call) {
            const auto& e = calls[call];
            if (call == 1 && c.refused.kind != distdl::testing::refusal::none)
                refusals[std::size_t(me)] =
                    distdl::testing::refused_call<T>(layer, calls[0].x, calls[0].dy, px, py, c.refused);
            const std::string when = call == 0 ? " (first call)" : " (second call)";
            layer.forward(px >= 0 ? e.x[std::size_t(px)] : distdl::zero_volume<T>(), y);
            if (py >= 0) note(y, e.y[std::size_t(py)], "output" + when, e.y_scale);
            layer.adjoint(py >= 0 ? e.dy[std::size_t(py)] : distdl::zero_volume<T>(), dx);
            if (px >= 0) note(dx, e.dx[std::size_t(px)], "input gradient" + when, e.dx_scale);
        }
        if (pw < 0) return;
        const shape_t at = distdl::unravel_index(std::size_t(pw), c.P_w);
        if (!std::all_of(at.begin() + 2, at.end(), [](std::size_t i) { return i == 0; })) return;
        const std::size_t o0 = distdl::balanced_start(c.out, c.P_w[0], at[0]);
        const std::size_t o1 = distdl::balanced_stop(c.out, c.P_w[0], at[0]);
        const std::size_t i0 = distdl::balanced_start(c.in, c.P_w[1], at[1]);
        const std::size_t i1 = distdl::balanced_stop(c.in, c.P_w[1], at[1]);
        const auto params = layer.parameters();
        xt::xstrided_slice_vector block{xt::range(o0, o1), xt::range(i0, i1), xt::ellipsis()};
        note(params.at(0)->grad, tensor<T>(xt::strided_view(dw, block)), "weight gradient",
             largest_magnitude(dw_terms));
        if (c.bias && at[1] == 0)
            note(params.at(1)->grad, tensor<T>(xt::view(db, xt::range(o0, o1))), "bias gradient",
                 largest_magnitude(db_terms));
    });
    for (std::size_t r = 0; r < problems.size(); ++r)
        if (!problems[r].empty()) return "worker " + std::to_string(r) + ": " + problems[r];
    if (c.refused.kind == distdl::testing::refusal::none) return {};
    return distdl::testing::refusal_problem(c.refused, c.x_workers, c.y_workers, c.w_workers, refusals);
}

TEST(conv_sweep, general_conv_matches_reference_for_random_partitions_and_geometries) {
    std::mt19937_64 rng(20261126);
    int channel_split = 0, both_splits = 0, idle_workers = 0, fewer_channels = 0, refusals = 0, windows_direct = 0;
    for (std::uint64_t i = 0; i < 200; ++i) {
        const general_case c = draw(rng);
        const bool spatial = std::any_of(c.P_x.begin() + 2, c.P_x.end(), [](std::size_t P) { return P > 1; });
        const bool channels = c.P_w[0] > 1 || c.P_w[1] > 1;
        channel_split += channels;
        both_splits += channels && spatial;
        idle_workers += c.world > c.w_workers.size();
        fewer_channels += c.in < c.P_w[1] || c.out < c.P_w[0];
        refusals += c.refused.kind != distdl::testing::refusal::none;
        const bool unit_steps = std::all_of(c.s.begin(), c.s.end(), [](std::size_t s) { return s == 1; }) &&
                                std::all_of(c.d.begin(), c.d.end(), [](std::size_t d) { return d == 1; });
        windows_direct += c.single && c.dims == 2 && spatial && unit_steps && c.x_workers == c.w_workers;
        const std::string problem = c.single ? run_case<float>(c, 100 + i) : run_case<double>(c, 100 + i);
        ASSERT_TRUE(problem.empty()) << "case " << i << " (" << c.describe() << "): " << problem;
    }
    // The sweep covers what it claims to.
    EXPECT_GT(channel_split, 100);
    EXPECT_GT(both_splits, 50);
    EXPECT_GT(idle_workers, 80);
    EXPECT_GT(fewer_channels, 20);
    EXPECT_GT(refusals, 40);
    EXPECT_GT(windows_direct, 20);
}

}  // namespace
