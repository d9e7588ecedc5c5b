// reference/linear: a hand-worked example (values worked out by hand below), shape errors,
// and the dot-product tests of its three adjoints on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/error.hpp"
#include "reference/linear.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

template <class T>
tensor<T> matrix(std::initializer_list<std::initializer_list<T>> rows) {
    const std::size_t r = rows.size(), c = rows.begin()->size();
    tensor<T> m(shape_t{r, c});
    std::size_t i = 0;
    for (const auto& row : rows)
        for (T v : row) m.data()[i++] = v;
    return m;
}

template <class T>
tensor<T> vector_of(std::initializer_list<T> values) {
    tensor<T> v(shape_t{values.size()});
    std::copy(values.begin(), values.end(), v.begin());
    return v;
}

template <class T>
void expect_equal(const tensor<T>& got, const tensor<T>& want) {
    ASSERT_EQ(distdl::shape_of(got), distdl::shape_of(want));
    for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got.data()[i], want.data()[i]) << "element " << i;
}

template <class T>
class reference_linear : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(reference_linear, element_types);

// x = [[1,2,3],[4,5,6]], W = [[1,0,-1],[2,1,0]], b = [0.5,-1], dy = [[1,-1],[2,0.5]]:
//   y  = x W^T + b = [[1-3+0.5, 2+2-1], [4-6+0.5, 8+5-1]] = [[-1.5, 3], [-1.5, 12]]
//   dx = dy W      = [[1-2, 0-1, -1-0], [2+1, 0+0.5, -2+0]] = [[-1,-1,-1], [3,0.5,-2]]
//   dW = dy^T x    = [[1+8, 2+10, 3+12], [-1+2, -2+2.5, -3+3]] = [[9,12,15], [1,0.5,0]]
//   db = sum dy    = [3, -0.5]
// (every value exact in float and double).
TYPED_TEST(reference_linear, hand_worked_example) {
    using T = TypeParam;
    const auto x = matrix<T>({{1, 2, 3}, {4, 5, 6}});
    const auto W = matrix<T>({{1, 0, -1}, {2, 1, 0}});
    const auto b = vector_of<T>({0.5, -1});
    const auto dy = matrix<T>({{1, -1}, {2, 0.5}});
    expect_equal(distdl::ref::linear(x, W, b), matrix<T>({{-1.5, 3}, {-1.5, 12}}));
    expect_equal(distdl::ref::linear(x, W), matrix<T>({{-2, 4}, {-2, 13}}));
    expect_equal(distdl::ref::linear_adjoint_input(dy, W), matrix<T>({{-1, -1, -1}, {3, 0.5, -2}}));
    expect_equal(distdl::ref::linear_adjoint_weight(dy, x), matrix<T>({{9, 12, 15}, {1, 0.5, 0}}));
    expect_equal(distdl::ref::linear_adjoint_bias(dy), vector_of<T>({3, -0.5}));
}

TYPED_TEST(reference_linear, empty_extents) {
    using T = TypeParam;
    const tensor<T> x(shape_t{0, 3});
    const tensor<T> W = xt::ones<T>(shape_t{2, 3});
    const tensor<T> b = xt::ones<T>(shape_t{2});
    EXPECT_EQ(distdl::shape_of(distdl::ref::linear(x, W, b)), (shape_t{0, 2}));
    const tensor<T> dy(shape_t{0, 2});
    // An empty batch contributes nothing: zero gradients of the full shapes.
    expect_equal(distdl::ref::linear_adjoint_weight(dy, x), tensor<T>(xt::zeros<T>(shape_t{2, 3})));
    expect_equal(distdl::ref::linear_adjoint_bias(dy), tensor<T>(xt::zeros<T>(shape_t{2})));
    // No input features: y = b.
    const tensor<T> x0 = xt::ones<T>(shape_t{4, 0});
    const tensor<T> W0(shape_t{2, 0});
    expect_equal(distdl::ref::linear(x0, W0, b), tensor<T>(xt::ones<T>(shape_t{4, 2})));
}

TYPED_TEST(reference_linear, shape_errors_name_the_shapes) {
    using T = TypeParam;
    const tensor<T> x(shape_t{2, 3}), W(shape_t{4, 5}), b(shape_t{3});
    try {
        distdl::ref::linear(x, W);
        FAIL() << "no error";
    } catch (const distdl::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("W of shape [4,5] does not take x of shape [2,3]"), std::string::npos) << e.what();
    }
    const tensor<T> W2(shape_t{4, 3});
    EXPECT_THROW(distdl::ref::linear(x, W2, b), distdl::invalid_argument);
    EXPECT_THROW(distdl::ref::linear(tensor<T>(shape_t{6}), W2), distdl::invalid_argument);
    EXPECT_THROW(distdl::ref::linear_adjoint_weight(tensor<T>(shape_t{3, 4}), x), distdl::invalid_argument);
}

tensor<double> random_matrix(const shape_t& shape, std::mt19937_64& gen) {
    return distdl::verify::random_tensor<double>(shape, gen());
}

// <F a, dy> = <a, F* dy> for F with respect to x, W and b (the others fixed; b = 0 or x = 0).
TEST(reference_linear_adjoint, dot_product_tests) {
    std::mt19937_64 gen(42);
    for (const auto& [batch, in, out] : std::vector<std::array<std::size_t, 3>>{{1, 1, 1}, {3, 7, 5}, {8, 2, 9}}) {
        const auto x = random_matrix({batch, in}, gen);
        const auto W = random_matrix({out, in}, gen);
        const auto dy = random_matrix({batch, out}, gen);
        const auto b = random_matrix({1, out}, gen);
        const tensor<double> b_vec = xt::flatten(b);

        const auto Fx = distdl::ref::linear(x, W);
        const auto Fty = distdl::ref::linear_adjoint_input(dy, W);
        EXPECT_LE(distdl::verify::adjoint_error(x, Fx, dy, Fty), 1e-14);

        const auto dW = distdl::ref::linear_adjoint_weight(dy, x);
        EXPECT_LE(distdl::verify::adjoint_error(W, Fx, dy, dW), 1e-14);

        const tensor<double> zero_x = xt::zeros<double>(shape_t{batch, in});
        const auto Fb = distdl::ref::linear(zero_x, W, b_vec);
        const auto db = distdl::ref::linear_adjoint_bias(dy);
        EXPECT_LE(distdl::verify::adjoint_error(b_vec, Fb, dy, db), 1e-14);
    }
}

}  // namespace
