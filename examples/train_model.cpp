// Training a model-parallel classifier on 4 workers, checked against the same training in
// serial: forward, a loss summed over the workers, adjoint, a gradient step on the parameters
// each worker owns, repeated. What the layers must get right beyond one forward and adjoint: a
// parameter changed in place reaches every worker at the next forward, and gradients start again
// from zero after `zero_grad`.
//
//   train_model                              4 simulated workers (threads of this process)
//   mpiexec -n 4 train_model --transport mpi  4 Open MPI ranks
//
// Model, in a `sequential` (float64, x [2, 3, 16, 16]):
//   FeatureConv2d 3 -> 4 (3x3, padding 1; input shape given) on P_x 1x1x2x2 (workers 0-3, each
//     an 8 x 8 piece of every image), ReLU, MaxPool2d 2x2, FeatureConv2d 4 -> 2 (3x3, padding 1;
//     input shape learnt at the first forward), all four on P_x;
//   Repartition to worker 0 (P_one 1x1x1x1), Flatten there (2 x 2 x 8 x 8 -> 2 x 128, onto
//     P_flat 1x1 on worker 0), Repartition of the 128 features over P_lx 1x2 (workers 0, 1);
//   DistributedLinear 128 -> 3: W on P_lw 2x2 (workers 0-3), y on P_ly 1x2 (workers 2, 3).
// Loss 0.5 * sum (y - target)^2: each worker sums its piece of y (none: 0), an AllSumReduce over
// P_x gives every worker the total; dy = y - target. Plain gradient descent (rate 0.002) for 6
// steps. The serial model (distdl::ref) trains the same way on the whole tensors. Checks every
// step's loss on every worker, and after the last step each P_ly worker's piece of y and every
// parameter on its owner (the convolutions': worker 0; W: a block on each P_lw worker; the
// bias: the blocks of column 0 of P_lw), against the serial ones (relative difference <= 1e-12).
// Also requires the loss to fall at every step. Exits 1 if any check fails.
#include <array>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "core/all_sum_reduce.hpp"
#include "core/partition.hpp"
#include "core/repartition.hpp"
#include "example_checks.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/flatten.hpp"
#include "layers/linear.hpp"
#include "layers/pool_max.hpp"
#include "layers/relu.hpp"
#include "layers/sequential.hpp"
#include "reference/conv.hpp"
#include "reference/flatten.hpp"
#include "reference/linear.hpp"
#include "reference/pool.hpp"
#include "reference/relu.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using examples::block_of;
using examples::filled;
using examples::partition_of;

constexpr int steps = 6;
constexpr double rate = 0.002;
constexpr std::size_t features = 2 * 8 * 8, classes = 3;
const shape_t x_shape{2, 3, 16, 16};
const shape_t grid{1, 1, 2, 2};
const distdl::conv_options first_options{.kernel_size = {3}, .padding = {1}, .seed = 7, .input_shape = x_shape};
const distdl::conv_options second_options{.kernel_size = {3}, .padding = {1}, .seed = 8};
const distdl::linear_options head_options{.seed = 9};
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
    distdl::linear_parameters<double> head;
    tensor<double> y;
};

serial_training train_serially(const tensor<double>& x, const tensor<double>& target) {
    using namespace distdl::ref;
    const auto initial = [](std::size_t in, std::size_t out, const distdl::conv_options& options) {
        return distdl::conv_initial_parameters<double>(distdl::normalize_conv_options("Conv2d", 2, in, out, options));
    };
    serial_training s{{}, initial(3, 4, first_options), initial(4, 2, second_options),
                      distdl::linear_initial_parameters<double>(features, classes, head_options)};
    const auto descend = [](distdl::conv_parameters<double>& p, const tensor<double>& in, const tensor<double>& dout) {
        p.weight -= rate * conv_adjoint_weight(in, dout, distdl::shape_of(p.weight), conv_geometry);
        p.bias -= rate * conv_adjoint_bias(dout);
    };
    for (int step = 0; step <= steps; ++step) {
        const tensor<double> a = conv_forward(x, s.first.weight, &s.first.bias, conv_geometry);
        const tensor<double> r = relu(a);
        const tensor<double> h = max_pool(r, pool_geometry);
        const tensor<double> c = conv_forward(h, s.second.weight, &s.second.bias, conv_geometry);
        const tensor<double> f = flatten(c);
        s.y = linear(f, s.head.weight, s.head.bias);
        if (step == steps) break;
        s.losses[step] = half_squared_error(s.y, target);
        const tensor<double> dy = s.y - target;
        const tensor<double> dc = flatten_adjoint(linear_adjoint_input(dy, s.head.weight), distdl::shape_of(c));
        const tensor<double> dr = max_pool_adjoint(r, conv_adjoint_input(dc, s.second.weight, distdl::shape_of(h),
                                                                          conv_geometry), pool_geometry);
        const tensor<double> da = relu_adjoint(a, dr);
        s.head.weight -= rate * linear_adjoint_weight(dy, f);
        s.head.bias -= rate * linear_adjoint_bias(dy);
        descend(s.second, h, dc);
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
    const auto P_one = partition_of(W, {0}, {1, 1, 1, 1}), P_flat = partition_of(W, {0}, {1, 1});
    const auto P_lx = partition_of(W, {0, 1}, {1, 2}), P_ly = partition_of(W, {2, 3}, {1, 2});
    const auto P_lw = partition_of(W, {0, 1, 2, 3}, {2, 2});
    distdl::sequential<double> model;
    auto& first = model.emplace<distdl::feature_conv<double>>(2, P_x, 3, 4, first_options);
    model.emplace<distdl::relu<double>>(P_x);
    model.emplace<distdl::distributed_max_pool<double>>(P_x, distdl::pool_options{.kernel_size = {2}});
    auto& second = model.emplace<distdl::feature_conv<double>>(2, P_x, 4, 2, second_options);
    model.emplace<distdl::repartition<double>>(P_x, P_one);
    model.emplace<distdl::flatten<double>>(P_one, P_flat);
    model.emplace<distdl::repartition<double>>(P_flat, P_lx);
    auto& head = model.emplace<distdl::distributed_linear<double>>(P_lx, P_ly, P_lw, features, classes, head_options);
    distdl::all_sum_reduce<double> total(P_x, {0, 1, 2, 3});

    // y and the target lie on P_ly (1 x 2: the classes split 2, 1); elsewhere y is {0}.
    const tensor<double> none(shape_t{0});
    const tensor<double> target_piece = P_ly.active() ? block_of(target, {1, 2}, P_ly.index()) : none;
    examples::worker_checks checks(W);
    tensor<double> y, dx, loss;
    double previous = INFINITY;
    for (int step = 0; step <= steps; ++step) {
        model.forward(block_of(x, grid, P_x.index()), y);
        if (step == steps) break;
        total.forward(tensor<double>(shape_t{1}, P_ly.active() ? half_squared_error(y, target_piece) : 0.0), loss);
        if (W.rank() == 0) std::printf("step %d: loss %.6f\n", step, loss(0));
        checks.check("loss " + std::to_string(step), loss, tensor<double>(shape_t{1}, expected.losses[step]));
        if (step > 0) checks.require(loss(0) < previous, "loss " + std::to_string(step) + " below the one before");
        previous = loss(0);
        model.adjoint(P_ly.active() ? tensor<double>(y - target_piece) : none, dx);
        for (auto* p : model.parameters()) p->value -= rate * p->grad;
        model.zero_grad();
    }
    if (P_ly.active()) checks.check("y", y, block_of(expected.y, {1, 2}, P_ly.index()));
    // The convolutions' parameters on worker 0 (P_x's first); W's 2x2 blocks on P_lw, the
    // bias's blocks on its column 0.
    for (auto* p : first.parameters())
        checks.check_parameter("trained conv 1 " + p->name, p->value,
                               p->name == "weight" ? expected.first.weight : expected.first.bias);
    for (auto* p : second.parameters())
        checks.check_parameter("trained conv 2 " + p->name, p->value,
                               p->name == "weight" ? expected.second.weight : expected.second.bias);
    for (auto* p : head.parameters())
        checks.check_parameter("trained linear " + p->name, p->value,
                               examples::linear_block(p->name, expected.head.weight, expected.head.bias, P_lw.shape(),
                                                      P_lw.index()));
    return checks.total(10, "2 per convolution, 4 weight and 2 bias blocks of the Linear layer");
}

}  // namespace

int main(int argc, char** argv) {
    const tensor<double> x = filled(x_shape, 0.5);
    const tensor<double> target = filled({2, classes}, 1.5);
    const serial_training expected = train_serially(x, target);
    return examples::run_model_example(
        argc, argv,
        "Trains a classifier (FeatureConv2d, ReLU, MaxPool2d, FeatureConv2d, Flatten, DistributedLinear)\n"
        "for 6 gradient steps on 4 workers and checks every loss, the output and the trained parameters\n"
        "against the same training in serial (distdl::ref) on the whole tensors.",
        [&](const std::shared_ptr<distdl::communicator>& world) { return train_worker(world, x, target, expected); });
}
