// A two-layer model-parallel perceptron on 4 workers, checked against the serial oracle: how the
// three partitions of DistributedLinear (spec 002) are laid out and chained.
//
//   linear_model                              4 simulated workers (threads of this process)
//   mpiexec -n 4 linear_model --transport mpi  4 Open MPI ranks
//
// Model, in a `sequential` (float64, x of 5 rows):
//   Linear 16 -> 12: x on P_x1 = 1x2 (workers 0, 1: 8 features each), W1 on P_W1 = 2x2 (workers
//                    0-3), y on P_y1 = 1x2 (workers 2, 3: 6 features each);
//   Linear 12 -> 8:  its input is the first layer's output where it lies, so P_x2 = P_y1; W2 on
//                    P_W2 = 2x2 (workers 3, 2, 1, 0: any order works), y on P_y2 = 1x2 (workers 0, 1).
// One forward and one adjoint on the workers; the same model in serial (distdl::ref) on the
// whole tensors, from the same initial parameters (they depend on the seed and the feature
// counts only). Checks every worker's piece of y and dx, and the block of each weight and bias
// gradient each worker owns (weights: every P_W worker; biases: column 0 of P_W), against the
// serial ones (relative difference <= 1e-12). Prints each difference; exits 1 if any check fails.
#include <memory>
#include <string>
#include <vector>

#include "core/partition.hpp"
#include "example_checks.hpp"
#include "layers/linear.hpp"
#include "layers/sequential.hpp"
#include "reference/linear.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using examples::block_of;
using examples::partition_of;

constexpr std::size_t batch = 5, in_features = 16, hidden = 12, out_features = 8;
const distdl::linear_options first_options{.seed = 3}, second_options{.seed = 4};

// The serial model, its output and its gradients for dy.
struct serial_result {
    distdl::linear_parameters<double> first, second;
    tensor<double> y, dx, dw1, db1, dw2, db2;
};

serial_result serial(const tensor<double>& x, const tensor<double>& dy) {
    serial_result r{distdl::linear_initial_parameters<double>(in_features, hidden, first_options),
                    distdl::linear_initial_parameters<double>(hidden, out_features, second_options)};
    const tensor<double> h = distdl::ref::linear(x, r.first.weight, r.first.bias);
    r.y = distdl::ref::linear(h, r.second.weight, r.second.bias);
    const tensor<double> dh = distdl::ref::linear_adjoint_input(dy, r.second.weight);
    r.dx = distdl::ref::linear_adjoint_input(dh, r.first.weight);
    r.dw2 = distdl::ref::linear_adjoint_weight(dy, h), r.db2 = distdl::ref::linear_adjoint_bias(dy);
    r.dw1 = distdl::ref::linear_adjoint_weight(dh, x), r.db1 = distdl::ref::linear_adjoint_bias(dh);
    return r;
}

// The model on one worker of the 4-worker world: forward and adjoint, its checks printed;
// returns the failures over all the workers (the same on every worker).
int run_worker(const std::shared_ptr<distdl::communicator>& world, const tensor<double>& x, const tensor<double>& dy,
               const serial_result& expected) {
    const auto W = distdl::partition::world(world);
    const auto P_x1 = partition_of(W, {0, 1}, {1, 2}), P_W1 = partition_of(W, {0, 1, 2, 3}, {2, 2});
    const auto P_y1 = partition_of(W, {2, 3}, {1, 2}), P_W2 = partition_of(W, {3, 2, 1, 0}, {2, 2});
    const auto P_y2 = partition_of(W, {0, 1}, {1, 2});
    distdl::sequential<double> model;
    auto& first = model.emplace<distdl::distributed_linear<double>>(P_x1, P_y1, P_W1, in_features, hidden,
                                                                    first_options);
    auto& second = model.emplace<distdl::distributed_linear<double>>(P_y1, P_y2, P_W2, hidden, out_features,
                                                                     second_options);

    // Workers outside P_x1 hand in an empty piece (ignored); outside P_y2 they get {0} back.
    const tensor<double> none(shape_t{0});
    const tensor<double> y = model.forward(P_x1.active() ? block_of(x, {1, 2}, P_x1.index()) : none);
    const tensor<double> dx = model.adjoint(P_y2.active() ? block_of(dy, {1, 2}, P_y2.index()) : none);
    examples::worker_checks checks(W);
    if (P_y2.active()) checks.check("y", y, block_of(expected.y, {1, 2}, P_y2.index()));
    if (P_x1.active()) checks.check("dx", dx, block_of(expected.dx, {1, 2}, P_x1.index()));
    // Each P_W worker's blocks of the weight's gradient, and of the bias's on column 0.
    const auto check_gradients = [&](distdl::distributed_linear<double>& layer, const distdl::cartesian_partition& P_W,
                                     const tensor<double>& dw, const tensor<double>& db, const std::string& which) {
        for (auto* p : layer.parameters())
            checks.check_parameter("d" + p->name + " " + which, p->grad,
                                   examples::linear_block(p->name, dw, db, P_W.shape(), P_W.index()));
    };
    check_gradients(first, P_W1, expected.dw1, expected.db1, "1");
    check_gradients(second, P_W2, expected.dw2, expected.db2, "2");
    return checks.total(12, "per layer: 4 weight blocks, 2 bias blocks");
}

}  // namespace

int main(int argc, char** argv) {
    const tensor<double> x = examples::filled({batch, in_features}, 0.5);
    const tensor<double> dy = examples::filled({batch, out_features}, 2.0);
    const serial_result expected = serial(x, dy);
    return examples::run_model_example(
        argc, argv,
        "Runs two DistributedLinear layers (16 -> 12 -> 8) on 4 workers and checks every result\n"
        "against the serial model (distdl::ref) on the whole tensors.",
        [&](const std::shared_ptr<distdl::communicator>& world) { return run_worker(world, x, dy, expected); });
}
