// The float32 direct convolution engine (kernels/conv_direct.hpp), forced through
// kernels::convolution, against the serial oracle (reference/conv.hpp) on a seeded sweep of
// 1-d and 2-d stride-1 geometries: 0–17 channels each way, odd and even kernels, padding 0 to
// beyond the kernel, widths below, at and past multiples of 16, empty batches, bias or none.
// Where the CPU lacks AVX-512 the engine cannot run: those tests are skipped, visibly.
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include "core/detail/box_copy.hpp"
#include "kernels/conv_direct.hpp"
#include "kernels/convolution.hpp"
#include "reference/conv.hpp"
#include "tests/kernels/conv_oracle.hpp"

using namespace distdl;
using test::absolute;
using test::in_double;

namespace {

constexpr const char* no_isa = "the CPU has no AVX-512F: the direct engine cannot run here";

std::string describe(const kernels::conv_geometry& g, const shape_t& x_shape) {
    std::ostringstream out;
    out << "x " << format_list(x_shape) << " C_out " << g.out_channels << " kernel " << format_list(g.kernel_size)
        << " padding " << format_list(g.padding) << " bias " << g.bias;
    return out.str();
}

void expect_direct(const kernels::convolution<float>& conv) { EXPECT_EQ(conv.last_engine(), "direct:avx512"); }

// Every pass twice on one object (the second on reused scratch), each within the rounding bound
// of its sums (test::rounding_ratio); the passes that reach the engine must report it.
void check_against_reference(const kernels::conv_geometry& g, const shape_t& x_shape, test::stream& gen) {
    SCOPED_TRACE(describe(g, x_shape));
    kernels::convolution<float> conv(g, kernels::conv_engine::direct);
    const ref::conv_geometry rg{{1}, g.padding, {1}};
    const auto x = test::random_tensor<float>(x_shape, gen);
    const auto w = test::random_tensor<float>(conv.weight_shape(), gen);
    const auto b = test::random_tensor<float>({g.out_channels}, gen);
    const tensor<float>* bias = g.bias ? &b : nullptr;
    const shape_t y_shape = ref::conv_output_shape(x_shape, conv.weight_shape(), rg);
    ASSERT_EQ(conv.output_shape(x_shape), y_shape);
    const auto dy = test::random_tensor<float>(y_shape, gen);
    const test::conv_oracle o = test::conv_reference(x, w, b, g.bias, dy, rg);
    // The engine runs unless the convolution has nothing to compute (see kernels/convolution.cpp).
    const bool y_work = o.positions * g.out_channels > 0 && g.in_channels > 0;
    const bool dx_work = x_shape[0] * g.in_channels > 0 && o.positions * g.out_channels > 0;
    const bool dw_work = o.positions * g.out_channels > 0;

    tensor<float> y = test::random_tensor<float>(y_shape, gen), dx = test::random_tensor<float>(x_shape, gen);
    for (int round = 0; round < 2; ++round) {
        conv.forward(x, w, bias, y);
        EXPECT_LE(test::rounding_ratio(y, o.y_exact, o.y_magnitude, o.forward_terms), 1.0) << "forward";
        if (y_work) expect_direct(conv);
        conv.backward_data(dy, w, x_shape, dx);
        EXPECT_LE(test::rounding_ratio(dx, o.dx_exact, o.dx_magnitude, o.data_terms), 1.0) << "backward_data";
        if (dx_work) expect_direct(conv);
    }
    // Gradients accumulate onto what dw and db hold; twice, so the second adds to the first.
    const auto dw0 = test::random_tensor<float>(conv.weight_shape(), gen);
    const auto db0 = test::random_tensor<float>({g.out_channels}, gen);
    tensor<float> dw = dw0, db = db0;
    for (int round = 1; round <= 2; ++round) {
        conv.backward_weights(x, dy, dw, g.bias ? &db : nullptr);
        if (dw_work) expect_direct(conv);
        const tensor<double> dw_exact = in_double(dw0) + double(round) * o.dw_once;
        const tensor<double> dw_magnitude = absolute(in_double(dw0)) + double(round) * o.dw_once_magnitude;
        EXPECT_LE(test::rounding_ratio(dw, dw_exact, dw_magnitude, round * o.weight_terms), 1.0)
            << "backward_weights, round " << round;
        if (g.bias) {
            const tensor<double> db_exact = in_double(db0) + double(round) * o.db_once;
            const tensor<double> db_magnitude = absolute(in_double(db0)) + double(round) * o.db_once_magnitude;
            EXPECT_LE(test::rounding_ratio(db, db_exact, db_magnitude, round * o.weight_terms), 1.0)
                << "bias gradient, round " << round;
        } else {
            EXPECT_EQ(db, db0);
        }
    }
}

// A random stride-1 geometry in `dims` dimensions with its input shape.
void random_case(std::size_t dims, test::stream& gen, kernels::conv_geometry& g, shape_t& x_shape) {
    g = {};
    const std::size_t batch = test::pick(gen, 0, 11) == 0 ? 0 : test::pick(gen, 1, 2);
    g.in_channels = test::pick(gen, 0, 17) == 0 ? 0 : test::pick(gen, 1, 17);
    g.out_channels = test::pick(gen, 0, 17) == 0 ? 0 : test::pick(gen, 1, 17);
    g.bias = test::pick(gen, 0, 1) == 1;
    x_shape = {batch, g.in_channels};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t k = test::pick(gen, 1, 4), p = test::pick(gen, 0, k);
        g.kernel_size.push_back(k);
        g.padding.push_back(p);
        const std::size_t min_length = k > 2 * p ? k - 2 * p : (test::pick(gen, 0, 5) == 0 ? 0 : 1);
        // The width (last dimension) from below one vector of 16 to past two; rows few.
        const bool width = e + 1 == dims;
        x_shape.push_back(min_length + test::pick(gen, 0, width ? 40 : 4));
    }
}

}  // namespace

TEST(kernel_conv_direct, sweep_2d_matches_reference) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(41);
    kernels::conv_geometry g;
    shape_t x_shape;
    for (int i = 0; i < 60; ++i) {
        random_case(2, gen, g, x_shape);
        check_against_reference(g, x_shape, gen);
    }
}

TEST(kernel_conv_direct, sweep_1d_matches_reference) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(42);
    kernels::conv_geometry g;
    shape_t x_shape;
    for (int i = 0; i < 40; ++i) {
        random_case(1, gen, g, x_shape);
        check_against_reference(g, x_shape, gen);
    }
}

TEST(kernel_conv_direct, chosen_shapes_match_reference) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(43);
    const auto geometry = [](std::size_t c_in, std::size_t c_out, shape_t k, shape_t p, bool bias) {
        return kernels::conv_geometry{.in_channels = c_in, .out_channels = c_out, .kernel_size = k, .padding = p,
                                      .bias = bias};
    };
    // The benchmark's slices (smaller), every output-channel tile width 1–8 plus a second tile,
    // exact multiples of 16 and 32 columns, padding beyond the kernel (cropping in backward data).
    check_against_reference(geometry(8, 8, {3, 3}, {1, 1}, true), {2, 8, 7, 64}, gen);
    check_against_reference(geometry(8, 16, {3, 3}, {0, 1}, true), {1, 8, 6, 48}, gen);
    for (std::size_t c_out = 1; c_out <= 9; ++c_out)
        check_against_reference(geometry(3, c_out, {3, 3}, {1, 1}, c_out % 2 == 0), {1, 3, 3, 35}, gen);
    check_against_reference(geometry(5, 17, {2, 5}, {3, 6}, true), {2, 5, 4, 16}, gen);
    check_against_reference(geometry(16, 16, {1, 1}, {0, 0}, false), {1, 16, 2, 32}, gen);
    check_against_reference(geometry(2, 3, {4, 7}, {0, 0}, true), {1, 2, 4, 7}, gen);  // output 1 × 1
    // No padding (a window with its padding already in it, as the layers give it): rows of any
    // length, a partial last vector.
    check_against_reference(geometry(8, 16, {3, 3}, {0, 0}, true), {2, 8, 6, 35}, gen);
    check_against_reference(geometry(8, 8, {3, 3}, {0, 0}, true), {1, 8, 5, 66}, gen);
    check_against_reference(geometry(3, 5, {3, 2}, {0, 0}, false), {2, 3, 4, 18}, gen);
    check_against_reference(geometry(4, 4, {3}, {0}, true), {2, 4, 37}, gen);
    // Rows so long that each pass works in several bands of output rows (8 per band with an L2
    // of up to 1 MB, band_rows in kernels/conv_direct.cpp): a band's rows of x, of dy and of dx
    // must each be there when the band needs them, with padding 0, within the kernel, beyond half
    // the kernel and beyond the kernel (dx rows cropped).
    check_against_reference(geometry(2, 3, {3, 3}, {1, 1}, true), {2, 2, 29, 8200}, gen);
    check_against_reference(geometry(3, 2, {3, 2}, {2, 1}, false), {1, 3, 21, 8200}, gen);
    check_against_reference(geometry(2, 3, {4, 3}, {0, 0}, true), {1, 2, 27, 8200}, gen);
    check_against_reference(geometry(2, 2, {2, 3}, {3, 1}, true), {1, 2, 17, 8200}, gen);
}

// backward_last: the bits of backward(x, ...) after the forward of x, from the engine's own
// padded copy (x overwritten in between), with and without padding; an engine that keeps no
// copy (im2col) refuses it.
TEST(kernel_conv_direct, backward_last_uses_the_kept_input) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(47);
    for (const std::size_t padding : {1, 0}) {
        const kernels::conv_geometry g{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3},
                                       .padding = {padding}, .bias = true};
        kernels::convolution<float> kept(g, kernels::conv_engine::direct), given(g, kernels::conv_engine::direct);
        ASSERT_TRUE(kept.retains_input());
        const auto w = test::random_tensor<float>(kept.weight_shape(), gen);
        const auto b = test::random_tensor<float>({6}, gen);
        // The second shape's passes run in bands of rows: the kept copy must still be whole.
        for (const shape_t& x_shape : {shape_t{2, 5, 7, 20}, shape_t{1, 5, 20, 8200}}) {
            SCOPED_TRACE("padding " + std::to_string(padding) + ", x " + format_list(x_shape));
            auto x = test::random_tensor<float>(x_shape, gen);
            const auto dy = test::random_tensor<float>(kept.output_shape(x_shape), gen);
            tensor<float> y1, y2, dx1, dx2, dw1 = xt::zeros<float>(kept.weight_shape()), dw2 = dw1;
            tensor<float> db1 = xt::zeros<float>(shape_t{6}), db2 = db1;
            given.forward(x, w, &b, y2);
            given.backward(x, dy, w, dx2, dw2, &db2);
            kept.forward(x, w, &b, y1);
            x.fill(7.0f);  // the caller's x changes: the kept copy serves
            kept.backward_last(dy, w, dx1, dw1, &db1);
            EXPECT_EQ(y1, y2);
            EXPECT_EQ(dx1, dx2);
            EXPECT_EQ(dw1, dw2);
            EXPECT_EQ(db1, db2);
        }
    }

    const kernels::conv_geometry g{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .bias = true};
    // A backward of another x since the forward replaced the kept copy: refused, not read as
    // the forward's (a backward of the forward's own x keeps it).
    {
        kernels::convolution<float> kept(g, kernels::conv_engine::direct);
        const auto x1 = test::random_tensor<float>({2, 5, 7, 20}, gen);
        const auto x2 = test::random_tensor<float>({2, 5, 7, 20}, gen);
        const auto w = test::random_tensor<float>(kept.weight_shape(), gen);
        const auto dy = test::random_tensor<float>(kept.output_shape(shape_of(x1)), gen);
        const auto b = test::random_tensor<float>({6}, gen);
        tensor<float> y, dx, dw = xt::zeros<float>(kept.weight_shape()), db = xt::zeros<float>(shape_t{6});
        kept.forward(x1, w, &b, y);
        kept.backward(x1, dy, w, dx, dw, &db);
        kept.backward_last(dy, w, dx, dw, &db);
        kept.backward_weights(x2, dy, dw, &db);
        try {
            kept.backward_last(dy, w, dx, dw, &db);
            ADD_FAILURE() << "backward_last read another x than the forward's";
        } catch (const distdl::invalid_argument& e) {
            EXPECT_EQ(std::string(e.what()),
                      "kernels::convolution::backward_last: the copy of the last forward's input was replaced since by "
                      "a backward or backward_weights with another x; pass that x to backward(x, ...)");
        }
    }
    kernels::convolution<float> im2col(g, kernels::conv_engine::im2col);
    EXPECT_FALSE(im2col.retains_input());
    const auto x = test::random_tensor<float>({2, 5, 7, 20}, gen);
    const auto w = test::random_tensor<float>(im2col.weight_shape(), gen);
    const auto b = test::random_tensor<float>({6}, gen);
    tensor<float> y, dx, dw = xt::zeros<float>(im2col.weight_shape()), db = xt::zeros<float>(shape_t{6});
    im2col.forward(x, w, &b, y);
    EXPECT_THROW(im2col.backward_last(y, w, dx, dw, &db), distdl::invalid_argument);
    EXPECT_FALSE(kernels::convolution<double>(g).retains_input());
}

// The same object across input shapes: the padded copies are re-laid-out, never stale.
TEST(kernel_conv_direct, one_object_across_input_shapes) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(44);
    const kernels::conv_geometry g{.in_channels = 4, .out_channels = 6, .kernel_size = {3, 3}, .padding = {1},
                                   .bias = true};
    kernels::convolution<float> conv(g, kernels::conv_engine::direct);
    const ref::conv_geometry rg{{1}, {1}, {1}};
    const auto w = test::random_tensor<float>(conv.weight_shape(), gen);
    const auto b = test::random_tensor<float>({6}, gen);
    const auto b64 = in_double(b), w64 = in_double(w);
    for (const shape_t& x_shape : {shape_t{1, 4, 5, 40}, shape_t{2, 4, 3, 9}, shape_t{1, 4, 6, 40}}) {
        SCOPED_TRACE(format_list(x_shape));
        const auto x = test::random_tensor<float>(x_shape, gen);
        tensor<float> y, dx;
        conv.forward(x, w, &b, y);
        expect_direct(conv);
        const auto x64 = in_double(x);
        EXPECT_LE(test::rounding_ratio(y, ref::conv_forward(x64, w64, &b64, rg),
                                       ref::conv_forward(absolute(x64), absolute(w64), &b64, rg), 4 * 9 + 1),
                  1.0);
        conv.backward_data(y, w, x_shape, dx);
        const auto y64 = in_double(y);
        EXPECT_LE(test::rounding_ratio(dx, ref::conv_adjoint_input(y64, w64, x_shape, rg),
                                       ref::conv_adjoint_input(absolute(y64), absolute(w64), x_shape, rg), 6 * 9),
                  1.0);
    }
}

// backward() gives the bits of backward_data + backward_weights.
TEST(kernel_conv_direct, combined_backward_equals_the_separate_passes) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(45);
    const kernels::conv_geometry g{.in_channels = 8, .out_channels = 8, .kernel_size = {3, 3}, .padding = {1},
                                   .bias = true};
    kernels::convolution<float> together(g, kernels::conv_engine::direct), apart(g, kernels::conv_engine::direct);
    const auto w = test::random_tensor<float>(together.weight_shape(), gen);
    const auto b = test::random_tensor<float>({8}, gen);
    for (const shape_t& x_shape : {shape_t{2, 8, 9, 21}, shape_t{1, 8, 19, 4100}}) {  // the second in bands
        SCOPED_TRACE(format_list(x_shape));
        const auto x = test::random_tensor<float>(x_shape, gen);
        const auto dy = test::random_tensor<float>(together.output_shape(x_shape), gen);
        tensor<float> y, dx1, dx2, dw1 = xt::zeros<float>(together.weight_shape()), dw2 = dw1;
        tensor<float> db1 = xt::zeros<float>(shape_t{8}), db2 = db1;
        together.forward(x, w, &b, y);
        together.backward(x, dy, w, dx1, dw1, &db1);
        expect_direct(together);
        apart.backward_data(dy, w, x_shape, dx2);
        apart.backward_weights(x, dy, dw2, &db2);
        EXPECT_EQ(dx1, dx2);
        EXPECT_EQ(dw1, dw2);
        EXPECT_EQ(db1, db2);
    }
}

// conv_engine::automatic takes the direct engine for narrow channel slices and, by the planned
// input shape, for 16 → 16 on long rows;
// a forced direct engine leaves what it cannot run (3-d, stride 2) to the others.
TEST(kernel_conv_direct, engine_selection) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(46);
    const auto run_forward = [&](const kernels::conv_geometry& g, const shape_t& x_shape, kernels::conv_engine e,
                                 const shape_t& planned = {}) {
        kernels::convolution<float> conv(g, e, planned);
        const auto x = test::random_tensor<float>(x_shape, gen);
        const auto w = test::random_tensor<float>(conv.weight_shape(), gen);
        tensor<float> y;
        conv.forward(x, w, nullptr, y);
        return conv.last_engine();
    };
    using kernels::conv_engine;
    EXPECT_EQ(run_forward({.in_channels = 8, .out_channels = 8, .kernel_size = {3, 3}, .padding = {1}}, {1, 8, 8, 20},
                          conv_engine::automatic),
              "direct:avx512");
    EXPECT_EQ(run_forward({.in_channels = 8, .out_channels = 16, .kernel_size = {3, 3}}, {1, 8, 8, 20},
                          conv_engine::automatic),
              "direct:avx512");
    EXPECT_EQ(run_forward({.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1}},
                          {1, 16, 8, 20}, conv_engine::automatic)
                  .rfind("onednn:", 0),
              0u);
    // 16 -> 16 with the planned input shape: the direct engine on rows of whole vectors of at least
    // 96 outputs; oneDNN on short rows, on rows whose last vector is mostly idle (130 outputs),
    // and without a plan.
    const kernels::conv_geometry g16{.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1}};
    EXPECT_EQ(run_forward(g16, {1, 16, 4, 128}, conv_engine::automatic, {8, 16, 256, 128}), "direct:avx512");
    EXPECT_EQ(run_forward({.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}}, {1, 16, 4, 98},
                          conv_engine::automatic, {8, 16, 130, 98}),
              "direct:avx512");  // 96 outputs per row
    EXPECT_EQ(run_forward(g16, {1, 16, 4, 64}, conv_engine::automatic, {8, 16, 64, 64}).rfind("onednn:", 0), 0u);
    EXPECT_EQ(run_forward(g16, {1, 16, 4, 130}, conv_engine::automatic, {8, 16, 130, 130}).rfind("onednn:", 0), 0u);
    EXPECT_EQ(run_forward(g16, {1, 16, 4, 128}, conv_engine::automatic).rfind("onednn:", 0), 0u);
    EXPECT_EQ(run_forward({.in_channels = 16, .out_channels = 32, .kernel_size = {3, 3}, .padding = {1}},
                          {1, 16, 4, 128}, conv_engine::automatic, {8, 16, 256, 256})
                  .rfind("onednn:", 0),
              0u);
    EXPECT_NE(run_forward({.in_channels = 8, .out_channels = 8, .kernel_size = {3, 3}, .stride = {2}}, {1, 8, 8, 20},
                          conv_engine::direct),
              "direct:avx512");
    EXPECT_NE(run_forward({.in_channels = 8, .out_channels = 8, .kernel_size = {3, 3, 3}}, {1, 8, 4, 4, 20},
                          conv_engine::direct),
              "direct:avx512");
}

// forward with an x patch: the box of x comes from the source, x's own elements there are never
// read (NaN in the test), and forward and backward_last give the bits of the plain passes on x
// with the box copied in; 2-d and 1-d, boxes spanning every image and channel (a halo window's
// own middle) and boxes that do not, padding or none. Engines that keep no copy of x refuse a
// patch, and so does a box outside x or its source.
TEST(kernel_conv_direct, forward_patch_gives_the_same_bits) {
    if (!kernels::detail::direct_convolution::cpu_supported()) GTEST_SKIP() << no_isa;
    test::stream gen(49);
    struct trial {
        kernels::conv_geometry g;
        shape_t x_shape, start, extent, source_shape, source_start;
    };
    const kernels::conv_geometry g2{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .bias = true};
    const kernels::conv_geometry g2p{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .padding = {1},
                                     .bias = true};
    const kernels::conv_geometry g1{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .bias = false};
    const std::vector<trial> trials{
        {g2, {2, 5, 9, 35}, {0, 0, 1, 1}, {2, 5, 7, 33}, {2, 5, 7, 33}, {0, 0, 0, 0}},
        {g2, {2, 5, 9, 35}, {0, 0, 0, 2}, {2, 5, 9, 20}, {3, 6, 10, 21}, {1, 1, 1, 1}},
        {g2p, {2, 5, 7, 20}, {0, 0, 2, 0}, {2, 5, 3, 20}, {2, 5, 3, 20}, {0, 0, 0, 0}},
        {g2, {2, 5, 9, 35}, {1, 2, 1, 1}, {1, 3, 7, 33}, {1, 3, 7, 33}, {0, 0, 0, 0}},
        {g2, {1, 5, 20, 8200}, {0, 0, 1, 1}, {1, 5, 18, 8198}, {1, 5, 18, 8198}, {0, 0, 0, 0}},  // in bands
        {g1, {2, 3, 40}, {0, 0, 1}, {2, 3, 38}, {2, 3, 38}, {0, 0, 0}},
        {g1, {2, 3, 40}, {0, 1, 0}, {2, 1, 40}, {2, 3, 40}, {0, 2, 0}},
    };
    for (const auto& t : trials) {
        SCOPED_TRACE(describe(t.g, t.x_shape) + " box at " + format_list(t.start));
        kernels::convolution<float> plain(t.g, kernels::conv_engine::direct);
        kernels::convolution<float> patched(t.g, kernels::conv_engine::direct);
        const auto x = test::random_tensor<float>(t.x_shape, gen);
        const auto w = test::random_tensor<float>(plain.weight_shape(), gen);
        const auto b = test::random_tensor<float>({t.g.out_channels}, gen);
        const tensor<float>* bias = t.g.bias ? &b : nullptr;
        const auto dy = test::random_tensor<float>(plain.output_shape(t.x_shape), gen);
        // The box's values in the source; in the patched object's x, NaN (never read).
        tensor<float> source(t.source_shape), holey = x;
        source.fill(-5.0f);
        distdl::detail::copy_box(x.data(), t.x_shape, t.start, source.data(), t.source_shape, t.source_start,
                                 t.extent, distdl::detail::box_op::assign);
        distdl::detail::fill_box(holey.data(), t.x_shape, t.start, t.extent, std::numeric_limits<float>::quiet_NaN());
        const kernels::x_patch<float> patch{t.start, t.extent, source.data(), t.source_shape, t.source_start};
        tensor<float> y1, y2, dx1, dx2, dw1 = xt::zeros<float>(plain.weight_shape()), dw2 = dw1;
        tensor<float> db1 = xt::zeros<float>(shape_t{t.g.out_channels}), db2 = db1;
        plain.forward(x, w, bias, y1);
        plain.backward(x, dy, w, dx1, dw1, t.g.bias ? &db1 : nullptr);
        patched.forward(holey, w, bias, y2, &patch);
        patched.backward_last(dy, w, dx2, dw2, t.g.bias ? &db2 : nullptr);
        EXPECT_EQ(y1, y2);
        EXPECT_EQ(dx1, dx2);
        EXPECT_EQ(dw1, dw2);
        EXPECT_EQ(db1, db2);
    }

    const kernels::conv_geometry g{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .bias = true};
    const auto x = test::random_tensor<float>({2, 5, 9, 35}, gen);
    const auto w = test::random_tensor<float>({6, 5, 3, 3}, gen);
    const auto b = test::random_tensor<float>({6}, gen);
    tensor<float> y;
    const kernels::x_patch<float> patch{{0, 0, 1, 1}, {2, 5, 7, 33}, x.data(), {2, 5, 9, 35}, {0, 0, 1, 1}};
    kernels::convolution<float> im2col(g, kernels::conv_engine::im2col);
    EXPECT_THROW(im2col.forward(x, w, &b, y, &patch), distdl::invalid_argument);
    kernels::convolution<float> direct(g, kernels::conv_engine::direct);
    const kernels::x_patch<float> too_far{{0, 0, 1, 1}, {2, 5, 9, 33}, x.data(), {2, 5, 9, 35}, {0, 0, 0, 0}};
    EXPECT_THROW(direct.forward(x, w, &b, y, &too_far), distdl::invalid_argument);  // past x's rows
    const kernels::x_patch<float> short_source{{0, 0, 1, 1}, {2, 5, 7, 33}, x.data(), {2, 5, 7, 33}, {0, 0, 1, 0}};
    EXPECT_THROW(direct.forward(x, w, &b, y, &short_source), distdl::invalid_argument);  // past the source's
}

// backward with a dx redirect: the box lands in the target with the bits of the plain backward
// (and everything else of dx too, except the box, which is left unspecified); on the direct
// engine (2-d, 1-d; a box spanning every image and channel goes straight to the target, one
// that does not is copied), on oneDNN and on im2col (copied), and through backward_last.
TEST(kernel_conv_direct, backward_redirect_gives_the_same_bits) {
    test::stream gen(48);
    struct trial {
        kernels::conv_geometry g;
        shape_t x_shape, start, extent, target_shape, target_start;
        kernels::conv_engine engine;
    };
    using kernels::conv_engine;
    const kernels::conv_geometry g2{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .bias = true};
    const kernels::conv_geometry g2p{.in_channels = 5, .out_channels = 6, .kernel_size = {3, 3}, .padding = {1},
                                     .bias = true};
    const kernels::conv_geometry g16{.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}, .bias = true};
    const kernels::conv_geometry g1{.in_channels = 3, .out_channels = 4, .kernel_size = {3}, .bias = false};
    const kernels::conv_geometry g10{.in_channels = 10, .out_channels = 3, .kernel_size = {3, 3}, .bias = true};
    const std::vector<trial> trials{
        // A halo window's own middle (every image and channel), the target a piece with room around.
        {g2, {2, 5, 9, 35}, {0, 0, 1, 1}, {2, 5, 7, 33}, {2, 5, 7, 33}, {0, 0, 0, 0}, conv_engine::direct},
        {g2, {2, 5, 9, 35}, {0, 0, 0, 2}, {2, 5, 9, 20}, {3, 6, 10, 21}, {1, 1, 1, 1}, conv_engine::direct},
        {g2p, {2, 5, 7, 20}, {0, 0, 2, 0}, {2, 5, 3, 20}, {2, 5, 3, 20}, {0, 0, 0, 0}, conv_engine::direct},
        {g2, {2, 5, 9, 35}, {1, 2, 1, 1}, {1, 3, 7, 33}, {1, 3, 7, 33}, {0, 0, 0, 0}, conv_engine::direct},
        {g1, {2, 3, 40}, {0, 0, 1}, {2, 3, 38}, {2, 3, 38}, {0, 0, 0}, conv_engine::direct},
        // Columns from past the first vector to the middle of a later one; more than 8 channels
        // (two blocks of the data pass's outputs); a box of one column.
        {g10, {1, 10, 6, 70}, {0, 0, 1, 17}, {1, 10, 4, 30}, {1, 10, 5, 33}, {0, 0, 1, 2}, conv_engine::direct},
        {g10, {1, 10, 6, 70}, {0, 0, 0, 40}, {1, 10, 6, 1}, {1, 10, 6, 1}, {0, 0, 0, 0}, conv_engine::direct},
        // Strips of 3 and 7 columns beside the box (column by column), two blocks of channels:
        // 20 columns per row, more than one pass of column jobs holds.
        {g10, {1, 10, 6, 70}, {0, 0, 1, 3}, {1, 10, 4, 60}, {1, 10, 5, 63}, {0, 0, 1, 2}, conv_engine::direct},
        {g16, {2, 16, 6, 18}, {0, 0, 1, 1}, {2, 16, 4, 16}, {2, 16, 4, 16}, {0, 0, 0, 0}, conv_engine::onednn},
        {g2, {2, 5, 9, 35}, {0, 0, 1, 1}, {2, 5, 7, 33}, {2, 5, 7, 33}, {0, 0, 0, 0}, conv_engine::im2col},
    };
    for (const auto& t : trials) {
        if (t.engine == conv_engine::direct && !kernels::detail::direct_convolution::cpu_supported()) continue;
        SCOPED_TRACE(describe(t.g, t.x_shape) + " box at " + format_list(t.start));
        kernels::convolution<float> plain(t.g, t.engine), redirected(t.g, t.engine);
        const auto x = test::random_tensor<float>(t.x_shape, gen);
        const auto w = test::random_tensor<float>(plain.weight_shape(), gen);
        const auto b = test::random_tensor<float>({t.g.out_channels}, gen);
        const tensor<float>* bias = t.g.bias ? &b : nullptr;
        const auto dy = test::random_tensor<float>(plain.output_shape(t.x_shape), gen);
        for (const bool last : {false, true}) {
            if (last && !redirected.retains_input()) continue;
            tensor<float> y, dx1, dx2, dw1 = xt::zeros<float>(plain.weight_shape()), dw2 = dw1;
            tensor<float> db1 = xt::zeros<float>(shape_t{t.g.out_channels}), db2 = db1;
            tensor<float> target(t.target_shape), expected_target(t.target_shape);
            target.fill(-5.0f);
            expected_target.fill(-5.0f);
            const kernels::dx_redirect<float> r{t.start, t.extent, target.data(), t.target_shape, t.target_start};
            plain.forward(x, w, bias, y);
            plain.backward(x, dy, w, dx1, dw1, t.g.bias ? &db1 : nullptr);
            redirected.forward(x, w, bias, y);
            if (last) redirected.backward_last(dy, w, dx2, dw2, t.g.bias ? &db2 : nullptr, &r);
            else redirected.backward(x, dy, w, dx2, dw2, t.g.bias ? &db2 : nullptr, &r);
            EXPECT_EQ(dw1, dw2);
            EXPECT_EQ(db1, db2);
            // The box from the target, the rest from dx2: all of it the plain dx's bits.
            distdl::detail::copy_box(dx1.data(), t.x_shape, t.start, expected_target.data(), t.target_shape,
                                     t.target_start, t.extent, distdl::detail::box_op::assign);
            EXPECT_EQ(target, expected_target);
            distdl::detail::copy_box(target.data(), t.target_shape, t.target_start, dx2.data(), t.x_shape, t.start,
                                     t.extent, distdl::detail::box_op::assign);
            EXPECT_EQ(dx1, dx2);
        }
    }

    // A box outside dx or its target is refused, naming it.
    kernels::convolution<float> im2col(g2, conv_engine::im2col);
    const auto x = test::random_tensor<float>({2, 5, 9, 35}, gen);
    const auto w = test::random_tensor<float>(im2col.weight_shape(), gen);
    const auto b = test::random_tensor<float>({6}, gen);
    const auto dy = test::random_tensor<float>(im2col.output_shape(shape_of(x)), gen);
    tensor<float> y, dx, dw = xt::zeros<float>(im2col.weight_shape()), db = xt::zeros<float>(shape_t{6});
    tensor<float> target({2, 5, 7, 33});
    im2col.forward(x, w, &b, y);
    const kernels::dx_redirect<float> past_dx{{0, 0, 3, 1}, {2, 5, 7, 33}, target.data(), {2, 5, 7, 33}, {0, 0, 0, 0}};
    try {
        im2col.backward(x, dy, w, dx, dw, &db, &past_dx);
        FAIL() << "no error";
    } catch (const distdl::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("a dx redirect: its box at [0,0,3,1] of extent [2,5,7,33] does not lie "
                                             "inside dx of shape [2,5,9,35]"),
                  std::string::npos)
            << e.what();
    }
}
