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
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "core/decomposition.hpp"
#include "core/partition.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "mpi_backend/environment.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"
#include "simulator/run.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

const shape_t x_shape{2, 3, 16, 16};
const shape_t grid{1, 1, 2, 2};
constexpr double tolerance = 1e-12;
// The serial model's geometry (the layers get the same as their options below).
const distdl::ref::conv_geometry conv_geometry{.padding = {1}};
const distdl::ref::pool_geometry pool_geometry{.kernel_size = {2}};

// Deterministic values without ties (max pooling's choice is then unambiguous).
tensor<double> filled(const shape_t& shape, double salt) {
    tensor<double> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = std::sin(salt + 0.37 * static_cast<double>(i));
    return t;
}

// The block of a global tensor that the worker at `at` of `grid` holds (balanced split).
tensor<double> block_of(const tensor<double>& global, const shape_t& at) {
    const auto box = distdl::balanced_box(distdl::shape_of(global), grid, at);
    xt::xstrided_slice_vector slices;
    for (std::size_t d = 0; d < box.rank(); ++d) slices.push_back(xt::range(box.start[d], box.stop[d]));
    return xt::strided_view(global, slices);
}

// max |a - b| / max |b| (0 for two empty tensors).
double relative_difference(const tensor<double>& a, const tensor<double>& b) {
    if (a.shape() != b.shape()) return INFINITY;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(a.data()[i] - b.data()[i]));
        scale = std::max(scale, std::abs(b.data()[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

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
    const tensor<double> y = model.forward(block_of(x, at));
    const tensor<double> dx = model.adjoint(block_of(dy, at));
    std::array<int, 2> mine{0, 0};  // failed checks, parameter gradients checked
    auto check = [&](const char* what, const tensor<double>& got, const tensor<double>& want) {
        const double d = relative_difference(got, want);
        std::printf("worker %d: %-12s relative difference %.1e\n", world->rank(), what, d);
        if (!(d <= tolerance)) ++mine[0];
    };
    check("y", y, block_of(expected.y, at));
    check("dx", dx, block_of(expected.dx, at));
    for (auto* p : model.parameters()) {  // the owner of the weight and bias (worker 0)
        check(p->name == "weight" ? "d weight" : "d bias", p->grad, p->name == "weight" ? expected.dw : expected.db);
        ++mine[1];
    }
    int failures = 0, gradients = 0;
    for (const auto& r : W.allgather_data(mine)) failures += r[0], gradients += r[1];
    if (gradients != 2) {
        if (world->rank() == 0)
            std::printf("%d parameter gradients found on the workers, expected 2 (weight and bias)\n", gradients);
        ++failures;
    }
    return failures;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string args = argc == 1 ? "" : argc == 3 ? std::string(argv[1]) + " " + argv[2] : argv[1];
    if (args != "" && args != "--transport sim" && args != "--transport mpi") {
        std::printf("usage: %s [--transport sim|mpi]\n"
                    "Runs FeatureConv2d + MaxPool2d on 4 workers and checks every result against the serial\n"
                    "model (distdl::ref) on the whole tensor. sim (default): 4 simulated workers; mpi: run as\n"
                    "mpiexec -n 4 %s --transport mpi.\n",
                    argv[0], argv[0]);
        return args == "--help" ? 0 : 2;
    }
    const distdl::conv_options conv_options{.kernel_size = {3}, .padding = {1}, .seed = 7, .input_shape = x_shape};
    const auto spec = distdl::normalize_conv_options("Conv2d", 2, 3, 4, conv_options);
    const tensor<double> x = filled(x_shape, 0.5);
    const shape_t y_shape = distdl::ref::pool_output_shape(
        distdl::ref::conv_output_shape(x_shape, spec.weight_shape(), conv_geometry), pool_geometry);
    const tensor<double> dy = filled(y_shape, 2.0);
    const serial_result expected = serial(x, dy, distdl::conv_initial_parameters<double>(spec));

    int failures = 0;
    try {
        if (args == "--transport mpi") {
            distdl::mpi::environment env(argc, argv);
            const auto world = distdl::mpi::world_communicator();
            if (world->size() != 4) {
                if (world->rank() == 0) std::printf("FAIL run me on 4 ranks (mpiexec -n 4), not %d\n", world->size());
                return 2;
            }
            failures = run_worker(world, conv_options, x, dy, expected);
            if (world->rank() != 0) return failures == 0 ? 0 : 1;  // rank 0 gives the verdict
        } else {
            std::atomic<int> total{0};
            distdl::sim::run(4, [&](const std::shared_ptr<distdl::communicator>& world) {
                const int f = run_worker(world, conv_options, x, dy, expected);
                if (world->rank() == 0) total = f;
            });
            failures = total;
        }
    } catch (const std::exception& e) {
        std::printf("FAIL %s\n", e.what());
        return 1;
    }
    std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}
