// kernels/gemm against a plain loop on random shapes (empty extents included), every
// transpose combination, alpha/beta accumulation, leading dimensions, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "kernels/gemm.hpp"
#include "tests/kernels/kernel_test_util.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::kernels::gemm;
using distdl::kernels::transpose;

template <class T>
tensor<T> random_matrix(const shape_t& shape, distdl::test::stream& gen) {
    return distdl::verify::random_tensor<T>(shape, gen());
}

// C = alpha op(A) op(B) + beta C, in double, by the definition.
template <class T>
tensor<double> loop_gemm(bool ta, bool tb, double alpha, const tensor<T>& a, const tensor<T>& b, double beta,
                         const tensor<T>& c) {
    const std::size_t m = c.shape()[0], n = c.shape()[1], k = ta ? a.shape()[0] : a.shape()[1];
    tensor<double> out(shape_t{m, n});
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            double s = 0;
            for (std::size_t l = 0; l < k; ++l) s += double(ta ? a(l, i) : a(i, l)) * double(tb ? b(j, l) : b(l, j));
            out(i, j) = alpha * s + (beta == 0 ? 0.0 : beta * double(c(i, j)));
        }
    return out;
}

template <class T>
class gemm_kernel : public ::testing::Test {};
using element_types = ::testing::Types<float, double>;
TYPED_TEST_SUITE(gemm_kernel, element_types);

TYPED_TEST(gemm_kernel, matches_a_loop_on_random_shapes) {
    using T = TypeParam;
    const double tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-13;
    distdl::test::stream gen(7);
    auto extent = [](distdl::test::stream& g) { return distdl::test::pick(g, 0, 9); };
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t m = extent(gen), n = extent(gen), k = extent(gen);
        const bool ta = trial % 2, tb = (trial / 2) % 2;
        const double alpha = trial % 5 == 0 ? 0.5 : 1.0, beta = (trial / 4) % 3 == 0 ? 0.0 : (trial % 3 == 0 ? 1.0 : -0.25);
        const auto a = random_matrix<T>(ta ? shape_t{k, m} : shape_t{m, k}, gen);
        const auto b = random_matrix<T>(tb ? shape_t{n, k} : shape_t{k, n}, gen);
        tensor<T> c = random_matrix<T>({m, n}, gen);
        const auto want = loop_gemm(ta, tb, alpha, a, b, beta, c);
        const T* storage = c.data();
        gemm(ta ? transpose::yes : transpose::no, tb ? transpose::yes : transpose::no, T(alpha), a, b, T(beta), c);
        EXPECT_EQ(c.data(), storage) << "the output was reallocated";
        double scale = 1;
        for (double v : want) scale = std::max(scale, std::abs(v));
        for (std::size_t i = 0; i < c.size(); ++i)
            ASSERT_LE(std::abs(double(c.data()[i]) - want.data()[i]), tolerance * scale)
                << "trial " << trial << " m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb;
    }
}

TYPED_TEST(gemm_kernel, beta_zero_overwrites_even_nan_and_k_zero_scales) {
    using T = TypeParam;
    const tensor<T> a(shape_t{3, 0}), b(shape_t{0, 2});
    tensor<T> c(shape_t{3, 2});
    c.fill(std::numeric_limits<T>::quiet_NaN());
    gemm(transpose::no, transpose::no, T(1), a, b, T(0), c);
    for (auto v : c) EXPECT_EQ(v, T(0));
    c.fill(T(2));
    gemm(transpose::no, transpose::no, T(1), a, b, T(3), c);
    for (auto v : c) EXPECT_EQ(v, T(6));
    distdl::test::stream gen(3);
    const auto a2 = random_matrix<T>({3, 4}, gen), b2 = random_matrix<T>({4, 2}, gen);
    c.fill(std::numeric_limits<T>::quiet_NaN());
    gemm(transpose::no, transpose::no, T(1), a2, b2, T(0), c);
    for (auto v : c) EXPECT_FALSE(std::isnan(v));
}

TYPED_TEST(gemm_kernel, accumulates_with_beta_one) {
    using T = TypeParam;
    const tensor<T> a = xt::ones<T>(shape_t{2, 3}), b = xt::ones<T>(shape_t{3, 2});
    tensor<T> c = xt::zeros<T>(shape_t{2, 2});
    for (int i = 0; i < 4; ++i) gemm(transpose::no, transpose::no, T(1), a, b, T(1), c);
    for (auto v : c) EXPECT_EQ(v, T(12));
}

TYPED_TEST(gemm_kernel, raw_form_with_leading_dimensions) {
    using T = TypeParam;
    // A is the left 2x2 block of a 2x3 buffer, B the top-right 2x2 block of a 2x4 buffer, C the
    // left 2x2 of a 2x5 buffer whose other columns must stay untouched.
    const std::vector<T> a{1, 2, 99, 3, 4, 99};
    const std::vector<T> b{99, 99, 5, 6, 99, 99, 7, 8};
    std::vector<T> c(10, T(-1));
    gemm(transpose::no, transpose::no, 2, 2, 2, T(1), a.data(), 3, b.data() + 2, 4, T(0), c.data(), 5);
    // [[1,2],[3,4]] [[5,6],[7,8]] = [[19,22],[43,50]]
    EXPECT_EQ(c[0], T(19));
    EXPECT_EQ(c[1], T(22));
    EXPECT_EQ(c[5], T(43));
    EXPECT_EQ(c[6], T(50));
    for (std::size_t i : {2, 3, 4, 7, 8, 9}) EXPECT_EQ(c[i], T(-1)) << i;
}

TYPED_TEST(gemm_kernel, refuses_mismatched_shapes) {
    using T = TypeParam;
    const tensor<T> a(shape_t{2, 3}), b(shape_t{4, 2});
    tensor<T> c(shape_t{2, 2});
    try {
        gemm(transpose::no, transpose::no, T(1), a, b, T(0), c);
        FAIL() << "no error";
    } catch (const distdl::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("op(A) 2x3 times op(B) 4x2 does not give C of shape [2,2]"), std::string::npos)
            << e.what();
    }
    tensor<T> wrong_c(shape_t{3, 3});
    EXPECT_THROW(gemm(transpose::no, transpose::yes, T(1), a, tensor<T>(shape_t{3, 3}), T(0), wrong_c),
                 distdl::invalid_argument);
    EXPECT_THROW(gemm(transpose::no, transpose::no, T(1), tensor<T>(shape_t{6}), b, T(0), c), distdl::invalid_argument);
}

}  // namespace
