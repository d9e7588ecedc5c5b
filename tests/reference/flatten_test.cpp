// reference/flatten: a hand-worked example (the positions written out below), the adjoint putting
// every element back, and shape errors.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "reference/flatten.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

TEST(ReferenceFlatten, HandWorkedExample) {
    // x[n, c, h] = 100 n + 10 c + h for x of shape [2, 2, 3]: sample n's features in the order
    // (c, h) = (0,0) (0,1) (0,2) (1,0) (1,1) (1,2).
    tensor<double> x(shape_t{2, 2, 3});
    for (std::size_t n = 0; n < 2; ++n)
        for (std::size_t c = 0; c < 2; ++c)
            for (std::size_t h = 0; h < 3; ++h) x(n, c, h) = 100.0 * n + 10.0 * c + h;
    const tensor<double> y = distdl::ref::flatten(x);
    ASSERT_EQ(distdl::shape_of(y), (shape_t{2, 6}));
    const double want[2][6] = {{0, 1, 2, 10, 11, 12}, {100, 101, 102, 110, 111, 112}};
    for (std::size_t n = 0; n < 2; ++n)
        for (std::size_t f = 0; f < 6; ++f) EXPECT_EQ(y(n, f), want[n][f]) << n << "," << f;
    const tensor<double> back = distdl::ref::flatten_adjoint(y, shape_t{2, 2, 3});
    EXPECT_EQ(back, x);
}

TEST(ReferenceFlatten, TwoDimensionsAndEmptyBatch) {
    tensor<float> x(shape_t{3, 4});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = float(i) - 5.5f;
    EXPECT_EQ(distdl::ref::flatten(x), x);
    EXPECT_EQ(distdl::shape_of(distdl::ref::flatten(tensor<float>(shape_t{0, 2, 5}))), (shape_t{0, 10}));
}

TEST(ReferenceFlatten, RefusesDyOfAnotherShape) {
    try {
        distdl::ref::flatten_adjoint(tensor<double>(shape_t{2, 5}), shape_t{2, 2, 3});
        FAIL() << "no error";
    } catch (const distdl::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("dy has shape [2,5], not the flat shape of [2,2,3]"), std::string::npos)
            << e.what();
    }
}

}  // namespace
