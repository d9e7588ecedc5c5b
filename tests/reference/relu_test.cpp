// reference/relu: a hand-worked example (negative, signed zeros, positive, NaN) forward and
// adjoint, and shape errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "reference/relu.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

TEST(ReferenceRelu, HandWorkedExample) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    tensor<double> x(shape_t{1, 6});
    const double values[6] = {-2.0, -0.0, 0.0, 1.5, nan, -1e-300};
    std::copy(values, values + 6, x.data());
    const tensor<double> y = distdl::ref::relu(x);
    EXPECT_EQ(y(0, 0), 0.0);
    EXPECT_TRUE(std::signbit(y(0, 1)));  // -0 passes as it is
    EXPECT_EQ(y(0, 2), 0.0);
    EXPECT_EQ(y(0, 3), 1.5);
    EXPECT_TRUE(std::isnan(y(0, 4)));
    EXPECT_EQ(y(0, 5), 0.0);
    tensor<double> dy(shape_t{1, 6});
    for (std::size_t i = 0; i < 6; ++i) dy(0, i) = double(i + 1);
    const tensor<double> dx = distdl::ref::relu_adjoint(x, dy);
    const double want[6] = {0, 0, 0, 4, 0, 0};  // only where x > 0
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(dx(0, i), want[i]) << i;
}

TEST(ReferenceRelu, RefusesDyOfAnotherShape) {
    EXPECT_THROW(distdl::ref::relu_adjoint(tensor<float>(shape_t{2, 3}), tensor<float>(shape_t{3, 2})),
                 distdl::invalid_argument);
}

}  // namespace
