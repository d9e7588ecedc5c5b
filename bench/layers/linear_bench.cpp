// DistributedLinear on 4 simulated workers (P_W 2x2, P_x 1x2, P_y 1x2), 64 x 4096 -> 4096
// float32, one forward + one adjoint per iteration, against the same step done by the serial
// kernels on the whole problem in one thread; and the GEMM kernel against a plain cblas call
// on the same operands. Two small runs (4 x 32 -> 32) time the layer's per-call cost with
// P_x, P_y inside P_W and outside it, and count its messages per step.
//
// All figures are CPU time of the whole process (MeasureProcessCPUTime), i.e. summed over the
// simulated workers: the distribution overhead is linear_sim_2x2 / linear_serial (goal <= 1.2),
// the kernel's wrapper cost kernel_gemm vs plain_cblas (goal: the kernel at >= 0.95x the rate).
// Both from 5 interleaved repetitions, in a closing table (bench/layers/goal_summary.hpp).
//
//   linear_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]   (see --help)
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/layers/goal_summary.hpp"
#include "bench/layers/stepped_world.hpp"
#include "core/partition.hpp"
#include "kernels/gemm.hpp"
#include "layers/linear.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::kernels::gemm;
using distdl::kernels::transpose;

constexpr std::size_t batch = 64, in_features = 4096, out_features = 4096;

tensor<float> filled(const shape_t& shape, float scale) {
    tensor<float> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = scale * static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
    return t;
}

// The serial step with the kernels the layer uses: y = x W^T + b, dx = dy W, dW += dy^T x,
// db += sum dy.
void linear_serial(benchmark::State& state) {
    const auto model = distdl::linear_initial_parameters<float>(in_features, out_features, {.seed = 1});
    const auto x = filled({batch, in_features}, 1), dy = filled({batch, out_features}, 1);
    tensor<float> y(shape_t{batch, out_features}), dx(shape_t{batch, in_features});
    tensor<float> dW = xt::zeros<float>(shape_t{out_features, in_features});
    tensor<float> db = xt::zeros<float>(shape_t{out_features});
    distdl::bench::measure_steps(state, [&] {
        for (std::size_t n = 0; n < batch; ++n)
            std::memcpy(y.data() + n * out_features, model.bias.data(), out_features * sizeof(float));
        gemm(transpose::no, transpose::yes, 1.0f, x, model.weight, 1.0f, y);
        gemm(transpose::no, transpose::no, 1.0f, dy, model.weight, 0.0f, dx);
        gemm(transpose::yes, transpose::no, 1.0f, dy, x, 1.0f, dW);
        for (std::size_t n = 0; n < batch; ++n)
            for (std::size_t o = 0; o < out_features; ++o) db.data()[o] += dy.data()[n * out_features + o];
        benchmark::DoNotOptimize(y.data());
        benchmark::DoNotOptimize(dx.data());
    });
}

// One forward + adjoint per step on simulated workers (bench/layers/stepped_world.hpp). P_W 2x2
// on workers 0-3; P_x and P_y on the given workers (inside P_W, or disjoint from it). Counter
// msgs_per_iter: messages sent by all workers per forward + adjoint (the traffic log's count).
void run_linear_sim(benchmark::State& state, int world_size, std::vector<int> x_workers, std::vector<int> y_workers,
                    std::size_t n_batch, std::size_t n_in, std::size_t n_out) {
    // Messages per worker, counted from the first measured step (the warm-up step is not counted).
    std::vector<std::uint64_t> sent(static_cast<std::size_t>(world_size), 0);
    const long steps = distdl::bench::run_stepped_world(state, world_size, [&](const std::shared_ptr<distdl::communicator>& world) {
        struct worker {
            std::unique_ptr<distdl::distributed_linear<float>> layer;
            tensor<float> x, dy, y, dx;
            bool warm = false;
        };
        auto W = distdl::partition::world(world);
        const auto P_x = W.create_partition_inclusive(x_workers).create_cartesian_topology_partition({1, 2});
        const auto P_y = W.create_partition_inclusive(y_workers).create_cartesian_topology_partition({1, 2});
        const auto P_W = W.create_partition_inclusive({0, 1, 2, 3}).create_cartesian_topology_partition({2, 2});
        auto self = std::make_shared<worker>();
        self->layer = std::make_unique<distdl::distributed_linear<float>>(P_x, P_y, P_W, n_in, n_out,
                                                                          distdl::linear_options{.seed = 1});
        self->x = P_x.active() ? filled({n_batch, n_in / 2}, 1) : distdl::zero_volume<float>();
        self->dy = P_y.active() ? filled({n_batch, n_out / 2}, 1) : distdl::zero_volume<float>();
        std::uint64_t& my_sent = sent[static_cast<std::size_t>(world->rank())];
        return [self, world, &my_sent] {
            const std::uint64_t before = world->traffic().total().messages;
            self->layer->forward(self->x, self->y);
            self->layer->adjoint(self->dy, self->dx);
            if (self->warm) my_sent += world->traffic().total().messages - before;
            self->warm = true;
        };
    });
    std::uint64_t total = 0;
    for (auto v : sent) total += v;
    state.counters["msgs_per_iter"] = static_cast<double>(total) / static_cast<double>(std::max<long>(steps, 1));
}

void linear_sim_2x2(benchmark::State& state) {
    run_linear_sim(state, 4, {0, 1}, {0, 2}, batch, in_features, out_features);
}

// Small operands (4 x 32 -> 32): the time is the layer's own per-call cost, not the GEMMs.
void linear_sim_2x2_small(benchmark::State& state) { run_linear_sim(state, 4, {0, 1}, {0, 2}, 4, 32, 32); }

// The same with P_x and P_y on workers outside P_W (8 workers).
void linear_sim_2x2_disjoint_small(benchmark::State& state) {
    run_linear_sim(state, 8, {4, 5}, {6, 7}, 4, 32, 32);
}

// The forward product's operands: 64 x 4096 times (4096 x 4096)^T.
struct gemm_operands {
    tensor<float> a = filled({batch, in_features}, 1);
    tensor<float> b = filled({out_features, in_features}, 0.01f);
    tensor<float> c = tensor<float>(shape_t{batch, out_features});
};

void kernel_gemm(benchmark::State& state) {
    gemm_operands o;
    distdl::bench::measure_steps(state, [&] {
        gemm(transpose::no, transpose::yes, 1.0f, o.a, o.b, 0.0f, o.c);
        benchmark::DoNotOptimize(o.c.data());
    });
}

void plain_cblas(benchmark::State& state) {
    gemm_operands o;
    distdl::bench::measure_steps(state, [&] {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, int(batch), int(out_features), int(in_features), 1.0f,
                    o.a.data(), int(in_features), o.b.data(), int(in_features), 0.0f, o.c.data(), int(out_features));
        benchmark::DoNotOptimize(o.c.data());
    });
}

}  // namespace

using distdl::bench::measured;
BENCHMARK(linear_serial)->Apply(measured);
BENCHMARK(linear_sim_2x2)->Apply(measured);
BENCHMARK(linear_sim_2x2_small)->Apply(measured)->Unit(benchmark::kMicrosecond);
BENCHMARK(linear_sim_2x2_disjoint_small)->Apply(measured)->Unit(benchmark::kMicrosecond);
BENCHMARK(kernel_gemm)->Apply(measured);
BENCHMARK(plain_cblas)->Apply(measured);

int main(int argc, char** argv) {
    // Both sides of every comparison single-threaded, as each worker is.
    openblas_set_num_threads(1);
    const char* about =
        "linear_bench: DistributedLinear 64x4096 -> 4096 float32 on 4 simulated workers (P_W 2x2, P_x 1x2,\n"
        "P_y 1x2), forward + adjoint, against the serial kernels on the whole problem; the layer's per-call\n"
        "cost on 4 x 32 -> 32 (P_x, P_y inside P_W and outside it); the GEMM kernel against a plain\n"
        "cblas_sgemm. CPU time summed over the workers; goals: linear_sim_2x2 <= 1.2 x linear_serial,\n"
        "kernel_gemm at >= 0.95 x plain_cblas's rate (time <= 1/0.95 x).";
    const auto compare = [](const std::string& name) {
        if (name == "linear_sim_2x2")
            return distdl::bench::comparison{"linear_serial", 1.2, "linear_layer/sim/w4/linear"};
        if (name == "kernel_gemm")
            return distdl::bench::comparison{"plain_cblas", 1 / 0.95, "linear_layer/serial/w1/gemm_kernel"};
        return distdl::bench::comparison{};
    };
    const distdl::bench::goal_summary::workload_filters filters{
        {"linear_layer/sim/w4/linear", "^(linear_sim_2x2|linear_serial)(/|$)"},
        {"linear_layer/serial/w1/gemm_kernel", "^(kernel_gemm|plain_cblas)(/|$)"}};
    return distdl::bench::run_layer_benchmarks(argc, argv, about, compare, filters);
}
