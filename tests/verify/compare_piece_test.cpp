// compare_piece's relative error and its scale: a piece whose values cancelled to nearly zero is
// judged against the magnitude of the whole tensor, and a wrong value still fails. Infinite
// reference values (max pooling's −∞ for a window of padding only) must be matched exactly and
// neither set the scale nor enter the dot-product test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "verify/checks.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::verify::compare_piece;
using distdl::verify::largest_magnitude;

constexpr double inf = std::numeric_limits<double>::infinity();

tensor<double> vector_of(std::initializer_list<double> values) {
    tensor<double> t(shape_t{values.size()});
    std::copy(values.begin(), values.end(), t.begin());
    return t;
}

TEST(compare_piece, relative_to_the_piece_without_a_scale) {
    const auto r = compare_piece(vector_of({2e-6, 0}), vector_of({2e-6 + 2e-17, 0}), false, 1e-12, "piece");
    EXPECT_NEAR(r.relative_error, 1e-11, 1e-13);
    EXPECT_NE(r.problem.find("piece differs from the reference: relative error"), std::string::npos) << r.problem;
}

TEST(compare_piece, relative_to_the_scale_of_the_whole_tensor) {
    const auto whole = largest_magnitude(std::vector<tensor<double>>{vector_of({-4.0, 1.0}), vector_of({2e-6, 0})});
    EXPECT_EQ(whole, 4.0);
    const auto rounded =
        compare_piece(vector_of({2e-6, 0}), vector_of({2e-6 + 2e-17, 0}), false, 1e-12, "piece", whole);
    EXPECT_NEAR(rounded.relative_error, 5e-18, 1e-19);
    EXPECT_TRUE(rounded.problem.empty()) << rounded.problem;
    // A wrong value is still far beyond the tolerance.
    const auto wrong = compare_piece(vector_of({2e-6, 0}), vector_of({2e-6, 1e-9}), false, 1e-12, "piece", whole);
    EXPECT_NEAR(wrong.relative_error, 2.5e-10, 1e-12);
    EXPECT_FALSE(wrong.problem.empty());
}

TEST(compare_piece, a_scale_below_the_piece_changes_nothing) {
    const auto r = compare_piece(vector_of({3.0, 1.0}), vector_of({3.0, 1.5}), false, 1e-12, "piece", 1.0);
    EXPECT_NEAR(r.relative_error, 0.5 / 3.0, 1e-15);
}

TEST(compare_piece, exact_ignores_the_scale) {
    const auto r = compare_piece(vector_of({1.0}), vector_of({1.0 + 1e-15}), true, 1e-12, "piece", 1e6);
    EXPECT_FALSE(r.bit_exact);
    EXPECT_NE(r.problem.find("bit-exact"), std::string::npos) << r.problem;
}

TEST(compare_piece, an_infinite_reference_value_sets_no_scale_and_must_be_matched) {
    EXPECT_EQ(largest_magnitude(vector_of({-inf, 3.0, -2.0})), 3.0);
    const auto same = compare_piece(vector_of({-inf, 3.0}), vector_of({-inf, 3.0 + 3e-15}), false, 1e-12, "piece");
    EXPECT_NEAR(same.relative_error, 1e-15, 1e-16);
    EXPECT_TRUE(same.problem.empty()) << same.problem;
    // Relative to the finite values: a wrong one fails instead of vanishing against infinity.
    const auto wrong = compare_piece(vector_of({-inf, 3.0}), vector_of({-inf, 4.0}), false, 1e-12, "piece");
    EXPECT_NEAR(wrong.relative_error, 0.25, 1e-15);
    EXPECT_FALSE(wrong.problem.empty());
    for (const auto& [got, want] : {std::pair{-inf, 1.0}, std::pair{1.0, -inf}, std::pair{inf, -inf}}) {
        const auto r = compare_piece(vector_of({got, 0.5}), vector_of({want, 0.5}), false, 1e-12, "piece");
        EXPECT_TRUE(std::isinf(r.relative_error)) << got << " vs " << want << ": " << r.relative_error;
        EXPECT_FALSE(r.problem.empty());
    }
}

TEST(dot_terms, an_infinite_output_is_a_constant_outside_the_linear_map) {
    // Max pooling of [a, b] with kernel 1 and padding 1: outputs [-inf, a, b, -inf]; its adjoint
    // sends dy[1] to a and dy[2] to b, and dy[0], dy[3] nowhere.
    const auto x = vector_of({0.5, -2.0}), fx = vector_of({-inf, 0.5, -2.0, -inf});
    const auto y = vector_of({7.0, 1.5, 3.0, -9.0}), fty = vector_of({1.5, 3.0});
    const auto t = distdl::verify::dot_terms_of(x, fx, y, fty);
    EXPECT_EQ(t.fx_y, 0.5 * 1.5 - 2.0 * 3.0);
    EXPECT_EQ(t.fx_sq, 0.25 + 4.0);
    EXPECT_EQ(t.y_sq, 1.5 * 1.5 + 9.0);
    EXPECT_EQ(distdl::verify::adjoint_error(x, fx, y, fty), 0.0);
    // A wrong adjoint still shows.
    EXPECT_GT(distdl::verify::adjoint_error(x, fx, y, vector_of({1.5, 7.0})), 0.1);
}

}  // namespace
