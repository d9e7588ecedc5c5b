// A small model-parallel network on 4 simulated workers, checked against the serial oracle:
// the way to develop a distributed model on one machine before there is a cluster.
//
// Model: FeatureConv2d (3 -> 4 channels, 3x3, padding 1) then MaxPool2d (2x2), in a
// `sequential`, with x [2, 3, 16, 16] (float64) split over P_x 1x1x2x2 (each worker holds an
// 8 x 8 piece of every image). One forward and one adjoint on the workers; the same model in
// serial loop nests (distdl::ref) on the whole tensor. Checks that every worker's piece of y
// and of dx, and the weight and bias gradients on the worker that owns them, equal the serial
// ones (relative difference <= 1e-12). Prints each difference; exits 1 if any check fails.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "core/decomposition.hpp"
#include "core/partition.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"
#include "simulator/run.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

const shape_t x_shape{2, 3, 16, 16};
const shape_t grid{1, 1, 2, 2};
constexpr double tolerance = 1e-12;

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
    const distdl::ref::conv_geometry conv{.padding = {1}};
    const distdl::ref::pool_geometry pool{.kernel_size = {2}};
    const tensor<double> a = distdl::ref::conv_forward(x, p.weight, &p.bias, conv);
    const tensor<double> da = distdl::ref::max_pool_adjoint(a, dy, pool);
    return {distdl::ref::max_pool(a, pool), distdl::ref::conv_adjoint_input(da, p.weight, x_shape, conv),
            distdl::ref::conv_adjoint_weight(x, da, distdl::shape_of(p.weight), conv),
            distdl::ref::conv_adjoint_bias(da)};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc > 1) {
        std::printf("usage: %s\nRuns FeatureConv2d + MaxPool2d on 4 simulated workers and checks every result against\n"
                    "the serial model (distdl::ref) on the whole tensor.\n",
                    argv[0]);
        return std::string(argv[1]) == "--help" ? 0 : 2;
    }
    const distdl::conv_options conv_options{.kernel_size = {3}, .padding = {1}, .seed = 7, .input_shape = x_shape};
    const auto spec = distdl::normalize_conv_options("Conv2d", 2, 3, 4, conv_options);
    const tensor<double> x = filled(x_shape, 0.5);
    const shape_t y_shape = distdl::ref::pool_output_shape(
        distdl::ref::conv_output_shape(x_shape, spec.weight_shape(), {.padding = {1}}), {.kernel_size = {2}});
    const tensor<double> dy = filled(y_shape, 2.0);
    const serial_result expected = serial(x, dy, distdl::conv_initial_parameters<double>(spec));

    std::mutex print;
    bool ok = true;
    std::atomic<int> gradients{0};  // parameter gradients checked, over all workers
    auto check = [&](const char* what, int rank, const tensor<double>& got, const tensor<double>& want) {
        const double d = relative_difference(got, want);
        std::lock_guard<std::mutex> lock(print);
        std::printf("worker %d: %-12s relative difference %.1e\n", rank, what, d);
        ok = ok && d <= tolerance;
    };
    try {
        distdl::sim::run(4, [&](const std::shared_ptr<distdl::communicator>& world) {
            const auto P_x = distdl::partition::world(world).create_cartesian_topology_partition(grid);
            distdl::sequential<double> model;
            model.emplace<distdl::feature_conv<double>>(2, P_x, 3, 4, conv_options);
            model.emplace<distdl::distributed_max_pool<double>>(P_x, distdl::pool_options{.kernel_size = {2}});

            const shape_t at = P_x.index();
            const tensor<double> y = model.forward(block_of(x, at));
            const tensor<double> dx = model.adjoint(block_of(dy, at));
            check("y", world->rank(), y, block_of(expected.y, at));
            check("dx", world->rank(), dx, block_of(expected.dx, at));
            for (auto* p : model.parameters()) {  // the owner of the weight and bias (worker 0)
                check(p->name == "weight" ? "d weight" : "d bias", world->rank(), p->grad,
                      p->name == "weight" ? expected.dw : expected.db);
                ++gradients;
            }
        });
    } catch (const std::exception& e) {
        std::printf("FAIL %s\n", e.what());
        return 1;
    }
    if (gradients != 2) {
        std::printf("%d parameter gradients found on the workers, expected 2 (weight and bias)\n", gradients.load());
        ok = false;
    }
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
