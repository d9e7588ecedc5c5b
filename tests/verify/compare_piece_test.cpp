// compare_piece's relative error and its scale: a piece whose values cancelled to nearly zero is
// judged against the magnitude of the whole tensor, and a wrong value still fails.
#include <gtest/gtest.h>

#include <algorithm>

#include "verify/checks.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::verify::compare_piece;
using distdl::verify::largest_magnitude;

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

}  // namespace
