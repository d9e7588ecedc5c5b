// ReLU on both transports: the per-call agreement the case library cannot express (a dy of
// another shape on one worker refused by every worker of P_x with the same text), adjoint before
// forward, pieces changing shape between calls, NaN, ±0 (gradient 0), and idle workers. The serial meaning on
// every layout: cases/relu.
#include <cmath>
#include <limits>

#include "layers/relu.hpp"
#include "reference/relu.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace {

using distdl::relu;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::make_partition;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;

DISTDL_CHECK(relu_calls_and_refusals, world_size >= 3) {
    // P_x [1,3] on workers 0..2 (any further workers idle).
    const int me = world->rank();
    const auto P_x = make_partition(world, rank_range(0, 3), {1, 3});
    relu<double> layer(P_x);
    const tensor<double> none(shape_t{0});
    tensor<double> y, dx;
    if (me >= 3) {
        layer.forward(none, y);
        DCHECK_EQ(distdl::shape_of(y), (shape_t{0}));
        DCHECK_THROWS(layer.forward(tensor<double>(shape_t{2}), y), distdl::invalid_argument,
                      "ReLU: world rank " + std::to_string(me) + " is not in P_x and must pass an input of zero");
        return;
    }
    DCHECK_THROWS(layer.adjoint(tensor<double>(shape_t{2, 2}), dx), distdl::invalid_argument,
                  "ReLU: adjoint() needs a successful forward() first");
    for (const std::size_t width : {5u, 5u, 2u}) {  // the second call reuses, the third has other pieces
        tensor<double> x = random_tensor<double>({3, width}, width + std::size_t(me));
        x(0, 0) = std::numeric_limits<double>::quiet_NaN();
        x(1, 0) = 0.0;  // the gradient at 0 and -0 is 0 (as the reference), not dy
        x(2, 1) = -0.0;
        const tensor<double> dy = random_tensor<double>({3, width}, 40 + width);
        layer.forward(x, y);
        DCHECK(std::isnan(y(0, 0)));
        DCHECK(distdl::testing::same_bits(y, distdl::ref::relu(x)));  // the NaN's bits too
        layer.adjoint(dy, dx);
        DCHECK(distdl::testing::same_bits(dx, distdl::ref::relu_adjoint(x, dy)));
        DCHECK(dx(1, 0) == 0.0 && dx(2, 1) == 0.0);
    }
    // dy of another shape on worker 1 only: every worker of P_x refuses with its text.
    DCHECK_THROWS(layer.adjoint(tensor<double>(me == 1 ? shape_t{3, 3} : shape_t{3, 2}), dx), distdl::invalid_argument,
                  "ReLU: dy on P_x worker 1 (world rank 1) has shape [3,3], expected [3,2] (the last forward's x)");
    // And the layer still works.
    layer.adjoint(tensor<double>(shape_t{3, 2}, 1.0), dx);
    DCHECK_EQ(distdl::shape_of(dx), (shape_t{3, 2}));
}

}  // namespace
