// Training a model-parallel network on 4 workers, checked against the same training in serial:
// forward, a loss summed over the workers, adjoint, a gradient step on the parameters each worker
// owns, repeated. What the layers must get right beyond one forward and adjoint: a parameter
// changed in place reaches every worker at the next forward, and gradients start again from zero
// after `zero_grad`.
//
//   train_model                              4 simulated workers (threads of this process)
//   mpiexec -n 4 train_model --transport mpi  4 Open MPI ranks
//
// Model, in a `sequential` on P_x 1x1x2x2 (float64, x [2, 3, 16, 16], each worker an 8 x 8 piece
// of every image): FeatureConv2d 3 -> 4 (3x3, padding 1; input shape given), MaxPool2d 2x2,
// FeatureConv2d 4 -> 2 (3x3, padding 1; input shape learnt at the first forward). Loss
// 0.5 * sum (y - target)^2: each worker sums its piece, an AllSumReduce over P_x gives every
// worker the total; dy = y - target. Plain gradient descent (rate 0.005) for 6 steps. The serial
// model (distdl::ref) trains the same way on the whole tensors. Checks every step's loss on every
// worker, and after the last step each worker's piece of y and the four parameters on their
// owner (worker 0 of P_x), against the serial ones (relative difference <= 1e-12). Also requires
// the loss to fall at every step. Exits 1 if any check fails.
#include <array>
#include <cstdio>
#include <memory>
#include <vector>

#include "core/all_sum_reduce.hpp"
#include "core/partition.hpp"
#include "example_checks.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using examples::block_of;
using examples::filled;

constexpr int steps = 6;
constexpr double rate = 0.005;
const shape_t x_shape{2, 3, 16, 16};
const shape_t grid{1, 1, 2, 2};
const distdl::conv_options first_options{.kernel_size = {3}, .padding = {1}, .seed = 7, .input_shape = x_shape};
const distdl::conv_options second_options{.kernel_size = {3}, .padding = {1}, .seed = 8};
// The serial model's geometry (the layers get the same through their options).
const distdl::ref::conv_geometry conv_geometry{.padding = {1}};
const distdl::ref::pool_geometry pool_geometry{.kernel_size = {2}};

double half_squared_error(const tensor<double>& y, const tensor<double>& target) {
    double sum = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
        const double e = y.data()[i] - target.data()[i];
        sum += 0.5 * e * e;
    }
    return sum;
}

// The serial training: the loss before each step, and the model and its output after the last.
struct serial_training {
    std::array<double, steps> losses{};
    distdl::conv_parameters<double> first, second;
    tensor<double> y;
};

serial_training train_serially(const tensor<double>& x, const tensor<double>& target) {
    using namespace distdl::ref;
    const auto initial = [](std::size_t in, std::size_t out, const distdl::conv_options& options) {
        return distdl::conv_initial_parameters<double>(distdl::normalize_conv_options("Conv2d", 2, in, out, options));
    };
    serial_training s{{}, initial(3, 4, first_options), initial(4, 2, second_options)};
    const auto descend = [](distdl::conv_parameters<double>& p, const tensor<double>& in, const tensor<double>& dout) {
        p.weight -= rate * conv_adjoint_weight(in, dout, distdl::shape_of(p.weight), conv_geometry);
        p.bias -= rate * conv_adjoint_bias(dout);
    };
    for (int step = 0; step <= steps; ++step) {
        const tensor<double> a = conv_forward(x, s.first.weight, &s.first.bias, conv_geometry);
        const tensor<double> h = max_pool(a, pool_geometry);
        s.y = conv_forward(h, s.second.weight, &s.second.bias, conv_geometry);
        if (step == steps) break;
        s.losses[step] = half_squared_error(s.y, target);
        const tensor<double> dy = s.y - target;
        const tensor<double> dh = conv_adjoint_input(dy, s.second.weight, distdl::shape_of(h), conv_geometry);
        const tensor<double> da = max_pool_adjoint(a, dh, pool_geometry);
        descend(s.second, h, dy);
        descend(s.first, x, da);
    }
    return s;
}

// The training on one worker of the 4-worker world, its checks printed; returns the failures
// over all the workers (the same on every worker).
int train_worker(const std::shared_ptr<distdl::communicator>& world, const tensor<double>& x,
                 const tensor<double>& target, const serial_training& expected) {
    const auto W = distdl::partition::world(world);
    const auto P_x = W.create_cartesian_topology_partition(grid);
    distdl::sequential<double> model;
    model.emplace<distdl::feature_conv<double>>(2, P_x, 3, 4, first_options);
    model.emplace<distdl::distributed_max_pool<double>>(P_x, distdl::pool_options{.kernel_size = {2}});
    model.emplace<distdl::feature_conv<double>>(2, P_x, 4, 2, second_options);
    distdl::all_sum_reduce<double> total(P_x, {0, 1, 2, 3});

    const shape_t at = P_x.index();
    const tensor<double> x_piece = block_of(x, grid, at), target_piece = block_of(target, grid, at);
    examples::worker_checks checks(W);
    tensor<double> y, dx, loss;
    double previous = INFINITY;
    for (int step = 0; step <= steps; ++step) {
        model.forward(x_piece, y);
        if (step == steps) break;
        total.forward(tensor<double>(shape_t{1}, half_squared_error(y, target_piece)), loss);
        if (W.rank() == 0) std::printf("step %d: loss %.6f\n", step, loss(0));
        checks.check("loss " + std::to_string(step), loss, tensor<double>(shape_t{1}, expected.losses[step]));
        if (step > 0) checks.require(loss(0) < previous, "loss " + std::to_string(step) + " below the one before");
        previous = loss(0);
        model.adjoint(y - target_piece, dx);
        for (auto* p : model.parameters()) p->value -= rate * p->grad;
        model.zero_grad();
    }
    checks.check("y", y, block_of(expected.y, grid, at));
    const std::array<const tensor<double>*, 4> trained{&expected.first.weight, &expected.first.bias,
                                                       &expected.second.weight, &expected.second.bias};
    const auto owned = model.parameters();  // the owner of all four (worker 0)
    for (std::size_t i = 0; i < owned.size() && i < trained.size(); ++i)
        checks.check_parameter("trained " + owned[i]->name + " " + std::to_string(i / 2 + 1), owned[i]->value,
                               *trained[i]);
    return checks.total(4, "the two layers' weight and bias");
}

}  // namespace

int main(int argc, char** argv) {
    const tensor<double> x = filled(x_shape, 0.5);
    const shape_t y_shape{2, 2, 8, 8};
    const tensor<double> target = 0.5 * filled(y_shape, 1.5);
    const serial_training expected = train_serially(x, target);
    return examples::run_model_example(
        argc, argv,
        "Trains FeatureConv2d + MaxPool2d + FeatureConv2d for 6 gradient steps on 4 workers and checks\n"
        "every loss, the output and the trained parameters against the same training in serial\n"
        "(distdl::ref) on the whole tensors.",
        [&](const std::shared_ptr<distdl::communicator>& world) { return train_worker(world, x, target, expected); });
}
