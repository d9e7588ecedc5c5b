// The serial convolution oracle: hand-worked examples and dot-product (adjoint) tests.
#include <gtest/gtest.h>

#include "reference/conv.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

using namespace distdl;
using distdl::ref::conv_geometry;

namespace {

template <class T>
tensor<T> make(const shape_t& shape, std::vector<double> values) {
    tensor<T> t(shape);
    EXPECT_EQ(values.size(), t.size());
    for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = T(values[i]);
    return t;
}

}  // namespace

TEST(ref_conv, conv1d_stride_padding_bias_by_hand) {
    // padded x = [0,1,2,3,4,5,0]; windows start at 0, 2, 4; w = [1,0,-1]; bias 10.
    const auto x = make<double>({1, 1, 5}, {1, 2, 3, 4, 5});
    const auto w = make<double>({1, 1, 3}, {1, 0, -1});
    const auto b = make<double>({1}, {10});
    const auto y = ref::conv_forward(x, w, &b, conv_geometry{{2}, {1}, {}});
    EXPECT_EQ(y, make<double>({1, 1, 3}, {8, 8, 14}));
}

TEST(ref_conv, conv1d_dilation_by_hand) {
    // y[j] = x[j] + 2 x[j+2]
    const auto x = make<float>({1, 1, 5}, {1, 2, 3, 4, 5});
    const auto w = make<float>({1, 1, 2}, {1, 2});
    const auto y = ref::conv_forward(x, w, nullptr, conv_geometry{{}, {}, {2}});
    EXPECT_EQ(y, make<float>({1, 1, 3}, {7, 10, 13}));
}

TEST(ref_conv, conv2d_two_input_channels_padding_by_hand) {
    // w picks the top-left of channel 0 and the bottom-right of channel 1:
    // y[j0][j1] = x0[j0-1][j1-1] + x1[j0][j1] (zero outside).
    const auto x = make<double>({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    const auto w = make<double>({1, 2, 2, 2}, {1, 0, 0, 0, 0, 0, 0, 1});
    EXPECT_EQ(ref::conv_forward(x, w, nullptr, conv_geometry{}), make<double>({1, 1, 1, 1}, {9}));
    EXPECT_EQ(ref::conv_forward(x, w, nullptr, conv_geometry{{}, {1}, {}}),
              make<double>({1, 1, 3, 3}, {5, 6, 0, 7, 9, 2, 0, 3, 4}));
}

TEST(ref_conv, conv2d_two_output_channels_and_batch_by_hand) {
    // 1×1 kernels: output channel 0 = 2·x, channel 1 = x − 1 (bias −1); stride 2 keeps corners.
    const auto x = make<double>({2, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1});
    const auto w = make<double>({2, 1, 1, 1}, {2, 1});
    const auto b = make<double>({2}, {0, -1});
    EXPECT_EQ(ref::conv_forward(x, w, &b, conv_geometry{{2}, {}, {}}),
              make<double>({2, 2, 2, 2}, {2, 6, 14, 18, 0, 2, 6, 8, 18, 14, 6, 2, 8, 6, 2, 0}));
}

TEST(ref_conv, conv3d_by_hand) {
    // 2×2×2 of ones over 1..8: one output, the sum 36; per-dimension stride/padding along the last
    // dimension: padding (0,0,1), kernel (2,2,1) gives y[0,0,j] = column sums (1+3+5+7, 2+4+6+8) with zeros.
    const auto x = make<double>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
    EXPECT_EQ(ref::conv_forward(x, tensor<double>(xt::ones<double>(shape_t{1, 1, 2, 2, 2})), nullptr, {}),
              make<double>({1, 1, 1, 1, 1}, {36}));
    EXPECT_EQ(ref::conv_forward(x, tensor<double>(xt::ones<double>(shape_t{1, 1, 2, 2, 1})), nullptr,
                                conv_geometry{{1}, {0, 0, 1}, {}}),
              make<double>({1, 1, 1, 1, 4}, {0, 16, 20, 0}));
}

TEST(ref_conv, adjoints_by_hand) {
    // y[j] = x[j] + 2 x[j+1], j = 0, 1; dy = [1, 10].
    const auto x = make<double>({1, 1, 3}, {1, 2, 3});
    const auto w = make<double>({1, 1, 2}, {1, 2});
    const auto dy = make<double>({1, 1, 2}, {1, 10});
    EXPECT_EQ(ref::conv_adjoint_input(dy, w, {1, 1, 3}, {}), make<double>({1, 1, 3}, {1, 12, 20}));
    EXPECT_EQ(ref::conv_adjoint_weight(x, dy, {1, 1, 2}, {}), make<double>({1, 1, 2}, {21, 32}));
    EXPECT_EQ(ref::conv_adjoint_bias(dy), make<double>({1}, {11}));
    // Stride 2, padding 1 (windows over padded [0,x0,x1,x2,0] at 0 and 2): dx gets w1·dy0, w0·dy1 + ..., 
    // y0 = 2 x0, y1 = x1 + 2 x2.
    EXPECT_EQ(ref::conv_adjoint_input(dy, w, {1, 1, 3}, conv_geometry{{2}, {1}, {}}),
              make<double>({1, 1, 3}, {2, 10, 20}));
}

TEST(ref_conv, refuses_bad_shapes) {
    const tensor<double> x = xt::zeros<double>(shape_t{1, 2, 4});
    EXPECT_THROW(ref::conv_forward(x, tensor<double>(xt::zeros<double>(shape_t{1, 3, 2})), nullptr, {}),
                 invalid_argument);  // C_in 3 vs 2
    EXPECT_THROW(ref::conv_forward(x, tensor<double>(xt::zeros<double>(shape_t{1, 2, 5})), nullptr, {}),
                 invalid_argument);  // kernel does not fit
    EXPECT_THROW(ref::conv_forward(x, tensor<double>(xt::zeros<double>(shape_t{1, 2, 2})), nullptr,
                                   conv_geometry{{1, 1}, {}, {}}),
                 invalid_argument);  // two strides for one spatial dimension
}

TEST(ref_conv, dot_product_tests_1d_2d_3d) {
    struct problem {
        shape_t x, w;
        conv_geometry g;
    };
    const std::vector<problem> problems = {
        {{2, 3, 11}, {4, 3, 3}, {{2}, {2}, {1}}},
        {{1, 2, 9}, {3, 2, 2}, {{1}, {5}, {3}}},
        {{2, 2, 7, 6}, {3, 2, 3, 2}, {{1, 2}, {1, 3}, {2, 1}}},
        {{1, 2, 5, 6, 4}, {2, 2, 2, 3, 1}, {{2, 1, 1}, {1, 0, 2}, {1, 2, 1}}},
    };
    std::uint64_t seed = 1;
    for (const auto& p : problems) {
        const auto x = verify::random_tensor<double>(p.x, seed++);
        const auto w = verify::random_tensor<double>(p.w, seed++);
        const auto b = verify::random_tensor<double>({p.w[0]}, seed++);
        const auto y_shape = ref::conv_output_shape(p.x, p.w, p.g);
        const auto dy = verify::random_tensor<double>(y_shape, seed++);
        // input: F x = conv(x; w)
        EXPECT_LT(verify::adjoint_error(x, ref::conv_forward(x, w, nullptr, p.g), dy,
                                         ref::conv_adjoint_input(dy, w, p.x, p.g)),
                  1e-13);
        // weight: F w = conv(x; w)
        EXPECT_LT(verify::adjoint_error(w, ref::conv_forward(x, w, nullptr, p.g), dy,
                                         ref::conv_adjoint_weight(x, dy, p.w, p.g)),
                  1e-13);
        // bias, linearised with x = 0: F b = conv(0; w) + b
        const tensor<double> zero = xt::zeros<double>(p.x);
        EXPECT_LT(verify::adjoint_error(b, ref::conv_forward(zero, w, &b, p.g), dy, ref::conv_adjoint_bias(dy)),
                  1e-13);
    }
}
