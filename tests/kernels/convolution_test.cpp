// kernels::convolution against the serial oracle (reference/conv.hpp) on a seeded random sweep
// of shapes and geometries, on every engine, plus its argument checks and concurrent use.
#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "kernels/convolution.hpp"
#include "reference/conv.hpp"
#include "tests/kernels/conv_oracle.hpp"

using namespace distdl;
using test::absolute;
using test::in_double;

namespace {

struct conv_case {
    kernels::conv_geometry g;
    shape_t x_shape;
    std::string describe() const {
        std::ostringstream out;
        out << "x " << format_list(x_shape) << " C_out " << g.out_channels << " kernel " << format_list(g.kernel_size)
            << " stride " << format_list(g.stride) << " padding " << format_list(g.padding) << " dilation "
            << format_list(g.dilation) << " bias " << g.bias;
        return out.str();
    }
};

// Random geometry: odd and even kernels 1–4, stride 1–4, padding 0–4 (also beyond d(k−1)/2),
// dilation 1–3, inputs just large enough for the kernel up to a few more; now and then an
// empty batch or channel extent.
// `wide`: 8–17 channels each way (oneDNN's blocked kernels), else 0–4.
conv_case random_case(std::size_t dims, test::stream& gen, bool wide = false) {
    conv_case c;
    const std::size_t batch = test::pick(gen, 0, 9) == 0 ? 0 : test::pick(gen, 1, 2);
    c.g.in_channels = wide ? test::pick(gen, 8, 17) : test::pick(gen, 0, 12) == 0 ? 0 : test::pick(gen, 1, 3);
    c.g.out_channels = wide ? test::pick(gen, 8, 17) : test::pick(gen, 0, 12) == 0 ? 0 : test::pick(gen, 1, 4);
    c.g.bias = test::pick(gen, 0, 1) == 1;
    c.x_shape = {batch, c.g.in_channels};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t k = test::pick(gen, 1, dims == 3 ? 3 : 4), s = test::pick(gen, 1, 4),
                          p = test::pick(gen, 0, 4), d = test::pick(gen, 1, 3);
        const std::size_t span = d * (k - 1) + 1;
        const std::size_t min_length = span > 2 * p ? span - 2 * p : 1;
        c.g.kernel_size.push_back(k);
        c.g.stride.push_back(s);
        c.g.padding.push_back(p);
        c.g.dilation.push_back(d);
        c.x_shape.push_back(std::max<std::size_t>(1, min_length) + test::pick(gen, 0, dims == 3 || wide ? 4 : 7));
    }
    return c;
}


// Every pass against the reference in double, within the rounding bound of its sums
// (test::rounding_ratio): the exact sums, the sums of |terms| (the reference on |inputs|) and
// the number of terms of the longest sum. Returns how many of the passes ran on oneDNN.
template <class T>
int check_against_reference(const conv_case& c, kernels::conv_engine engine, test::stream& gen) {
    int onednn_passes = 0;
    auto count = [&](const std::string& engine_used) { onednn_passes += engine_used.rfind("onednn:", 0) == 0; };
    SCOPED_TRACE(c.describe());
    kernels::convolution<T> conv(c.g, engine);
    const ref::conv_geometry rg{c.g.stride, c.g.padding, c.g.dilation};
    const auto x = test::random_tensor<T>(c.x_shape, gen);
    const auto w = test::random_tensor<T>(conv.weight_shape(), gen);
    const auto b = test::random_tensor<T>({c.g.out_channels}, gen);
    const tensor<T>* bias = c.g.bias ? &b : nullptr;
    const shape_t y_shape = ref::conv_output_shape(c.x_shape, conv.weight_shape(), rg);
    EXPECT_EQ(conv.output_shape(c.x_shape), y_shape);
    if (conv.output_shape(c.x_shape) != y_shape) return 0;
    const auto dy = test::random_tensor<T>(y_shape, gen);
    const test::conv_oracle o = test::conv_reference(x, w, b, c.g.bias, dy, rg);
    // Twice each, so the second call runs on the cached plans and reused outputs.
    tensor<T> y, dx = test::random_tensor<T>(c.x_shape, gen);  // overwritten, whatever it held
    for (int round = 0; round < 2; ++round) {
        conv.forward(x, w, bias, y);
        EXPECT_LE(test::rounding_ratio(y, o.y_exact, o.y_magnitude, o.forward_terms), 1.0) << conv.last_engine();
        count(conv.last_engine());
        conv.backward_data(dy, w, c.x_shape, dx);
        EXPECT_LE(test::rounding_ratio(dx, o.dx_exact, o.dx_magnitude, o.data_terms), 1.0) << conv.last_engine();
        count(conv.last_engine());
    }
    // Gradients accumulate onto what dw and db hold.
    const auto dw0 = test::random_tensor<T>(conv.weight_shape(), gen);
    const auto db0 = test::random_tensor<T>({c.g.out_channels}, gen);
    tensor<T> dw = dw0, db = db0;
    conv.backward_weights(x, dy, dw, c.g.bias ? &db : nullptr);
    const tensor<double> dw_exact = in_double(dw0) + o.dw_once;
    const tensor<double> dw_magnitude = absolute(in_double(dw0)) + o.dw_once_magnitude;
    EXPECT_LE(test::rounding_ratio(dw, dw_exact, dw_magnitude, o.weight_terms), 1.0) << conv.last_engine();
    count(conv.last_engine());
    if (c.g.bias) {
        const tensor<double> db_exact = in_double(db0) + o.db_once;
        const tensor<double> db_magnitude = absolute(in_double(db0)) + o.db_once_magnitude;
        EXPECT_LE(test::rounding_ratio(db, db_exact, db_magnitude, o.weight_terms), 1.0) << conv.last_engine();
    } else {
        EXPECT_EQ(db, db0);
    }
    return onednn_passes;
}

// Returns how many passes ran on oneDNN.
template <class T>
int sweep(kernels::conv_engine engine, std::uint64_t seed, std::size_t cases_per_dim, bool wide = false) {
    test::stream gen(seed);
    int onednn_passes = 0;
    for (std::size_t dims = 1; dims <= 3; ++dims)
        for (std::size_t i = 0; i < cases_per_dim; ++i)
            onednn_passes += check_against_reference<T>(random_case(dims, gen, wide), engine, gen);
    return onednn_passes;
}

}  // namespace

TEST(kernel_convolution, float_automatic_matches_reference) {
    // Few channels: oneDNN often has only its gemm path, which is left to im2col.
    const int onednn_passes = sweep<float>(kernels::conv_engine::automatic, 11, 40);
    EXPECT_GT(onednn_passes, 50) << "passes on oneDNN";
    RecordProperty("onednn_passes", onednn_passes);
}
TEST(kernel_convolution, float_automatic_many_channels_matches_reference) {
    // 15 cases per dimension count, 5 passes each. With random strides, dilations and wide
    // padding, oneDNN often offers only its gemm path (left to im2col); many must still run on it.
    const int onednn_passes = sweep<float>(kernels::conv_engine::automatic, 14, 15, true);
    EXPECT_GT(onednn_passes, 40) << "passes on oneDNN";
    RecordProperty("onednn_passes", onednn_passes);
}
TEST(kernel_convolution, double_many_channels_matches_reference) {
    EXPECT_EQ(sweep<double>(kernels::conv_engine::automatic, 15, 10, true), 0);
}
TEST(kernel_convolution, float_im2col_matches_reference) {
    EXPECT_EQ(sweep<float>(kernels::conv_engine::im2col, 12, 40), 0);
}
TEST(kernel_convolution, double_matches_reference) {
    EXPECT_EQ(sweep<double>(kernels::conv_engine::automatic, 13, 40), 0);
}

TEST(kernel_convolution, larger_problems_cross_several_column_tiles) {
    // Enough output positions and rows for several 512 KiB column tiles per image.
    test::stream gen(5);
    conv_case c2{{.in_channels = 16, .out_channels = 5, .kernel_size = {3, 3}, .padding = {1}, .bias = true},
                 {2, 16, 40, 37}};
    conv_case c3{{.in_channels = 4, .out_channels = 3, .kernel_size = {3, 2, 3}, .stride = {2, 1, 1},
                  .padding = {1, 0, 2}, .dilation = {1, 2, 1}},
                 {1, 4, 9, 12, 11}};
    // oneDNN's blocked kernels in 1-d, 2-d and 3-d, stride 2, bias.
    conv_case c16_1{{.in_channels = 16, .out_channels = 32, .kernel_size = {4}, .stride = {2}, .padding = {1},
                     .bias = true},
                    {2, 16, 23}};
    conv_case c16_3{{.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3, 3}, .stride = {2}, .padding = {1},
                     .bias = true},
                    {1, 16, 7, 6, 5}};
    for (const auto& c : {c16_1, c16_3}) {
        EXPECT_EQ(check_against_reference<float>(c, kernels::conv_engine::automatic, gen), 5);
        check_against_reference<float>(c, kernels::conv_engine::im2col, gen);
    }
    for (auto engine : {kernels::conv_engine::automatic, kernels::conv_engine::im2col}) {
        check_against_reference<float>(c2, engine, gen);
        check_against_reference<double>(c2, engine, gen);
        check_against_reference<float>(c3, engine, gen);
        check_against_reference<double>(c3, engine, gen);
    }
}

// The bound is not vacuous: a float weight gradient summing 3,200 products passes it, and the
// same result with one product of 0.25 left out of one element fails it.
TEST(kernel_convolution, rounding_bound_catches_one_missing_term) {
    const kernels::conv_geometry g{.in_channels = 1, .out_channels = 1, .kernel_size = {2, 2}};
    kernels::convolution<float> conv(g, kernels::conv_engine::im2col);
    const ref::conv_geometry rg{};
    test::stream gen(8);
    auto x = test::random_tensor<float>({2, 1, 41, 41}, gen);
    auto dy = test::random_tensor<float>({2, 1, 40, 40}, gen);
    x(0, 0, 0, 0) = 0.5f;
    dy(0, 0, 0, 0) = 0.5f;  // the one term of dw(0, 0, 0, 0) at n = 0, output (0, 0): 0.25
    tensor<float> dw = xt::zeros<float>(shape_t{1, 1, 2, 2});
    conv.backward_weights(x, dy, dw, nullptr);
    const auto x64 = in_double(x), dy64 = in_double(dy);
    const auto exact = ref::conv_adjoint_weight(x64, dy64, {1, 1, 2, 2}, rg);
    const auto magnitude = ref::conv_adjoint_weight(absolute(x64), absolute(dy64), {1, 1, 2, 2}, rg);
    const std::size_t terms = 2 * 40 * 40 + 1;
    EXPECT_LE(test::rounding_ratio(dw, exact, magnitude, terms), 1.0);
    dw(0, 0, 0, 0) -= 0.25f;
    EXPECT_GT(test::rounding_ratio(dw, exact, magnitude, terms), 1.0);
}

TEST(kernel_convolution, float_uses_onednn_where_it_is_fast) {
    kernels::convolution<float> conv({.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}, .padding = {1}});
    test::stream gen(3);
    const auto x = test::random_tensor<float>({2, 16, 12, 12}, gen);
    const auto w = test::random_tensor<float>(conv.weight_shape(), gen);
    tensor<float> y, dx, dw = xt::zeros<float>(conv.weight_shape());
    conv.forward(x, w, nullptr, y);
    EXPECT_EQ(conv.last_engine().rfind("onednn:", 0), 0u) << conv.last_engine();
    conv.backward_data(y, w, shape_of(x), dx);
    EXPECT_EQ(conv.last_engine().rfind("onednn:", 0), 0u) << conv.last_engine();
    conv.backward_weights(x, y, dw, nullptr);
    EXPECT_EQ(conv.last_engine().rfind("onednn:", 0), 0u) << conv.last_engine();
    kernels::convolution<double> conv64({.in_channels = 16, .out_channels = 16, .kernel_size = {3, 3}});
    tensor<double> y64;
    conv64.forward(xt::cast<double>(x), xt::cast<double>(w), nullptr, y64);
    EXPECT_EQ(conv64.last_engine(), "im2col");
}

// backward() after forward() reuses the converted x and dy; its results are the separate passes'
// bit for bit, for channel counts that take oneDNN's blocked layout (16) and channels-last (8,
// 12), and also when the x given is not the forward's (then it converts x afresh).
TEST(kernel_convolution, combined_backward_equals_the_separate_passes) {
    test::stream gen(21);
    for (const std::size_t channels : {8u, 12u, 16u}) {
        for (const bool same_x : {true, false}) {
            SCOPED_TRACE("channels " + std::to_string(channels) + (same_x ? ", x of the forward" : ", another x"));
            const kernels::conv_geometry g{.in_channels = channels, .out_channels = channels, .kernel_size = {3, 3},
                                           .padding = {1}, .bias = true};
            kernels::convolution<float> together(g, kernels::conv_engine::onednn),
                apart(g, kernels::conv_engine::onednn);  // 8 and 12 channels would take the direct engine
            const auto x = test::random_tensor<float>({2, channels, 9, 11}, gen);
            const auto x_other = test::random_tensor<float>({2, channels, 9, 11}, gen);
            const auto w = test::random_tensor<float>(together.weight_shape(), gen);
            const auto b = test::random_tensor<float>({channels}, gen);
            const auto dy = test::random_tensor<float>(together.output_shape(shape_of(x)), gen);
            const tensor<float>& x_back = same_x ? x : x_other;
            tensor<float> y, dx1, dx2, dw1 = xt::zeros<float>(together.weight_shape()), dw2 = dw1;
            tensor<float> db1 = xt::zeros<float>(shape_t{channels}), db2 = db1;
            for (int round = 0; round < 2; ++round) {  // the second on cached plans
                together.forward(x, w, &b, y);
                together.backward(x_back, dy, w, dx1, dw1, &db1);
                EXPECT_EQ(together.last_engine().rfind("onednn:", 0), 0u) << together.last_engine();
                apart.forward(x, w, &b, y);
                apart.backward_data(dy, w, shape_of(x), dx2);
                apart.backward_weights(x_back, dy, dw2, &db2);
                EXPECT_EQ(dx1, dx2);
                EXPECT_EQ(dw1, dw2);
                EXPECT_EQ(db1, db2);
            }
        }
    }
}

TEST(kernel_convolution, refuses_bad_arguments) {
    kernels::convolution<double> conv({.in_channels = 2, .out_channels = 3, .kernel_size = {3}, .bias = true});
    tensor<double> y, dx;
    const tensor<double> x = xt::zeros<double>(shape_t{1, 2, 5}), w = xt::zeros<double>(shape_t{3, 2, 3}),
                         b = xt::zeros<double>(shape_t{3});
    EXPECT_THROW(conv.forward(x, w, nullptr, y), invalid_argument);                                   // bias missing
    EXPECT_THROW(conv.forward(tensor<double>(xt::zeros<double>(shape_t{1, 3, 5})), w, &b, y), invalid_argument);
    EXPECT_THROW(conv.forward(tensor<double>(xt::zeros<double>(shape_t{1, 2, 2})), w, &b, y), invalid_argument);
    EXPECT_THROW(conv.forward(x, tensor<double>(xt::zeros<double>(shape_t{3, 2, 2})), &b, y), invalid_argument);
    EXPECT_THROW(conv.backward_data(tensor<double>(xt::zeros<double>(shape_t{1, 3, 4})), w, {1, 2, 5}, dx),
                 invalid_argument);  // dy has 4 positions, the output has 3
    tensor<double> dw = xt::zeros<double>(shape_t{3, 2});
    EXPECT_THROW(conv.backward_weights(x, tensor<double>(xt::zeros<double>(shape_t{1, 3, 3})), dw, nullptr),
                 invalid_argument);
    EXPECT_THROW(kernels::convolution<float>({.in_channels = 1, .out_channels = 1, .kernel_size = {}}),
                 invalid_argument);
    EXPECT_THROW(kernels::convolution<float>({.in_channels = 1, .out_channels = 1, .kernel_size = {3, 3},
                                              .stride = {1, 2, 1}}),
                 invalid_argument);
}

TEST(kernel_convolution, concurrent_objects_on_many_threads) {
    // Each thread owns its objects (as each simulated worker does) and checks its own results.
    std::vector<std::thread> threads;
    std::vector<int> failures(6, 0);
    for (int t = 0; t < 6; ++t)
        threads.emplace_back([t, &failures] {
            test::stream gen(100 + t);
            const kernels::conv_geometry g{.in_channels = 3, .out_channels = 4, .kernel_size = {3, 3},
                                           .stride = {1 + std::size_t(t % 2)}, .padding = {1}, .bias = true};
            kernels::convolution<float> conv(g);
            kernels::convolution<double> conv64(g);
            const ref::conv_geometry rg{g.stride, g.padding, g.dilation};
            const auto x = test::random_tensor<double>({2, 3, 11, 10}, gen);
            const auto w = test::random_tensor<double>({4, 3, 3, 3}, gen);
            const auto b = test::random_tensor<double>({4}, gen);
            const auto expected = ref::conv_forward(x, w, &b, rg);
            const tensor<float> xf = xt::cast<float>(x), wf = xt::cast<float>(w), bf = xt::cast<float>(b);
            tensor<float> y;
            tensor<double> y64, dx64;
            for (int round = 0; round < 3; ++round) {
                conv.forward(xf, wf, &bf, y);
                conv64.forward(x, w, &b, y64);
                conv64.backward_data(y64, w, shape_of(x), dx64);
                if (test::relative_error(tensor<double>(xt::cast<double>(y)), expected) > 1e-5) ++failures[t];
                if (test::relative_error(y64, expected) > 1e-12) ++failures[t];
            }
        });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 6; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

// oneDNN 2.6.3's AVX-512 weights pass gets these 3-d geometries wrong (depth padding beyond a
// depth stride of 2 or more; kernels/conv_onednn.cpp), and writes outside its buffers: they
// must come out right on every engine, with one channel (channels-last) and 16 (blocked).
TEST(kernel_convolution, depth_padding_beyond_the_depth_stride_is_right) {
    test::stream gen(17);
    struct depth {
        std::size_t k, s, p, length;
    };
    for (const depth d : {depth{4, 2, 3, 2}, depth{4, 2, 3, 4}, depth{5, 3, 4, 5}, depth{8, 2, 5, 8}})
        for (const std::size_t channels : {1, 16}) {
            const std::size_t out = channels == 1 ? 3 : 16;
            conv_case c{{.in_channels = channels, .out_channels = out, .kernel_size = {d.k, 2, 3}, .stride = {d.s, 1, 2},
                         .padding = {d.p, 0, 1}, .bias = true},
                        {2, channels, d.length, 3, 5}};
            for (auto engine : {kernels::conv_engine::automatic, kernels::conv_engine::onednn})
                check_against_reference<float>(c, engine, gen);
        }
}
