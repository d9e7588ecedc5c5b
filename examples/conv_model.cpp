// A small model-parallel network on 4 workers, checked against the serial oracle: the way to
// develop a distributed model on one machine before there is a cluster, and then to run the
// very same code on one.
//
//   conv_model                              4 simulated workers (threads of this process)
//   mpiexec -n 4 conv_model --transport mpi  4 Open MPI ranks
//
// Model: FeatureConv2d (3 -> 4 channels, 3x3, padding 1) then MaxPool2d (2x2), in a
// `sequential`, with x [2, 3, 16, 16] (float64) split over P_x 1x1x2x2 (each worker holds an
// 8 x 8 piece of every image). One forward and one adjoint on the workers; the same model in
// serial loop nests (distdl::ref) on the whole tensor. Checks that every worker's piece of y
// and of dx, and the weight and bias gradients on the worker that owns them, equal the serial
// ones (relative difference <= 1e-12). Prints each difference; exits 1 if any check fails.
#include <memory>

#include "core/partition.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "example_checks.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using examples::block_of;
using examples::filled;

const shape_t x_shape{2, 3, 16, 16};
const shape_t grid{1, 1, 2, 2};
// The serial model's geometry (the layers get the same as their options below).
const distdl::ref::conv_geometry conv_geometry{.padding = {1}};
const distdl::ref::pool_geometry pool_geometry{.kernel_size = {2}};

// The serial model and its gradients for dy, on the whole tensor.
struct serial_result {
    tensor<double> y, dx, dw, db;
};

serial_result serial(const tensor<double>& x, const tensor<double>& dy, const distdl::conv_parameters<double>& p) {
    const tensor<double> a = distdl::ref::conv_forward(x, p.weight, &p.bias, conv_geometry);
    const tensor<double> da = distdl::ref::max_pool_adjoint(a, dy, pool_geometry);
    return {distdl::ref::max_pool(a, pool_geometry),
            distdl::ref::conv_adjoint_input(da, p.weight, x_shape, conv_geometry),
            distdl::ref::conv_adjoint_weight(x, da, distdl::shape_of(p.weight), conv_geometry),
            distdl::ref::conv_adjoint_bias(da)};
}

// The model on one worker of the 4-worker world: forward and adjoint on its piece, its checks
// printed; returns the failures over all the workers (the same on every worker).
int run_worker(const std::shared_ptr<distdl::communicator>& world, const distdl::conv_options& conv_options,
               const tensor<double>& x, const tensor<double>& dy, const serial_result& expected) {
    const auto W = distdl::partition::world(world);
    const auto P_x = W.create_cartesian_topology_partition(grid);
    distdl::sequential<double> model;
    model.emplace<distdl::feature_conv<double>>(2, P_x, 3, 4, conv_options);
    model.emplace<distdl::distributed_max_pool<double>>(P_x, distdl::pool_options{.kernel_size = {2}});

    const shape_t at = P_x.index();
    const tensor<double> y = model.forward(block_of(x, grid, at));
    const tensor<double> dx = model.adjoint(block_of(dy, grid, at));
    examples::worker_checks checks(W);
    checks.check("y", y, block_of(expected.y, grid, at));
    checks.check("dx", dx, block_of(expected.dx, grid, at));
    for (auto* p : model.parameters())  // the owner of the weight and bias (worker 0)
        checks.check_parameter(p->name == "weight" ? "d weight" : "d bias", p->grad,
                               p->name == "weight" ? expected.dw : expected.db);
    return checks.total(2, "weight and bias");
}

}  // namespace

int main(int argc, char** argv) {
    const distdl::conv_options conv_options{.kernel_size = {3}, .padding = {1}, .seed = 7, .input_shape = x_shape};
    const auto spec = distdl::normalize_conv_options("Conv2d", 2, 3, 4, conv_options);
    const tensor<double> x = filled(x_shape, 0.5);
    const shape_t y_shape = distdl::ref::pool_output_shape(
        distdl::ref::conv_output_shape(x_shape, spec.weight_shape(), conv_geometry), pool_geometry);
    const tensor<double> dy = filled(y_shape, 2.0);
    const serial_result expected = serial(x, dy, distdl::conv_initial_parameters<double>(spec));
    return examples::run_model_example(
        argc, argv,
        "Runs FeatureConv2d + MaxPool2d on 4 workers and checks every result against the serial\n"
        "model (distdl::ref) on the whole tensor.",
        [&](const std::shared_ptr<distdl::communicator>& world) {
            return run_worker(world, conv_options, x, dy, expected);
        });
}
