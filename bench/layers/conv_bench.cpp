// The distributed convolutions on 4 simulated workers against the serial kernel on the whole
// problem in one thread: x 8 x 16 x 256 x 256 float32, 16 -> 16 channels, 3x3, padding 1,
// one forward + one adjoint (input, weight and bias gradients) per iteration.
//   conv_serial/0       kernels::convolution on the whole tensor, engine automatic, told the
//                       input shape (the baseline: the direct engine on AVX-512, the fastest here)
//   conv_serial/1       the same with oneDNN forced (for comparison)
//   feature_conv_2x2    FeatureConv2d, P_x 1x1x2x2
//   channel_conv_2x2    ChannelConv2d, P_x 1x2x1x1, P_y 1x2x1x1, P_w 2x2x1x1
//   general_conv_2x2    GeneralConv2d, P_x 1x2x2x1, P_y 1x1x2x1 (workers 0, 1), P_w 1x2x2x1
//   <layer>_kernels_2x2 that layer's local kernels alone on its 4 workers, no data movement (the
//                       floor of its decomposition: the closing table splits each layer's
//                       overhead into the kernels' and the data movement's)
//   batch_kernels_2x2   the serial kernel on a quarter of the batch on each of the 4 workers (the
//                       machine's own price for running kernels two cores at a time)
// The layers get input_shape (planned at construction). Counters: messages per step summed over
// the workers, page faults per step (process). conv_local: the kernel alone on one worker's problem.
// All figures are CPU time of the whole process (MeasureProcessCPUTime), i.e. summed over the
// simulated workers: the distribution overhead is <layer> / conv_serial/0 (goal <= 1.2), which
// the closing table gives from 5 interleaved repetitions (bench/layers/goal_summary.hpp).
//
//   conv_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]   (see --help)
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "bench/layers/goal_summary.hpp"
#include "bench/layers/stepped_world.hpp"
#include "core/decomposition.hpp"
#include "core/partition.hpp"
#include "kernels/convolution.hpp"
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

constexpr std::size_t batch = 8, channels = 16, height = 256, width = 256;

const distdl::conv_options options{.kernel_size = {3}, .padding = {1}, .seed = 1};
// The layers are told the global input shape (planned at construction, as in training).
const distdl::conv_options layer_options{
    .kernel_size = {3}, .padding = {1}, .seed = 1, .input_shape = shape_t{batch, channels, height, width}};

tensor<float> filled(const shape_t& shape) {
    tensor<float> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.0f;
    return t;
}

// This worker's balanced piece shape of an N x C x H x W tensor over a partition grid.
shape_t piece_shape(const shape_t& grid, const shape_t& at, const shape_t& global) {
    shape_t s(global.size());
    for (std::size_t d = 0; d < global.size(); ++d) s[d] = distdl::balanced_size(global[d], grid[d], at[d]);
    return s;
}

void conv_serial(benchmark::State& state) {
    const auto spec = distdl::normalize_conv_options("Conv2d", 2, channels, channels, layer_options);
    const auto model = distdl::conv_initial_parameters<float>(spec);
    distdl::kernels::conv_geometry g{channels, channels, {3, 3}, {1, 1}, {1, 1}, {1, 1}, true};
    const auto engine = state.range(0) ? distdl::kernels::conv_engine::onednn : distdl::kernels::conv_engine::automatic;
    const shape_t x_shape{batch, channels, height, width};
    distdl::kernels::convolution<float> kernel(g, engine, x_shape);
    const auto x = filled(x_shape), dy = filled(x_shape);
    tensor<float> y, dx;
    tensor<float> dw = xt::zeros<float>(spec.weight_shape()), db = xt::zeros<float>(shape_t{channels});
    distdl::bench::measure_steps(state, [&] {
        kernel.forward(x, model.weight, &model.bias, y);
        kernel.backward(x, dy, model.weight, dx, dw, &db);
        benchmark::DoNotOptimize(y.data());
        benchmark::DoNotOptimize(dx.data());
    });
    state.SetLabel(kernel.last_engine());
}

long minor_faults() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

// The local kernel alone on one worker's problem of each layer (forward + both backward passes,
// float32, 3x3): N x C_in x H x W -> C_out, padding pad_h, pad_w. Reports page
// faults per iteration (fresh memory inside the loop shows up here).
void conv_local(benchmark::State& state) {
    const auto c_in = std::size_t(state.range(0)), c_out = std::size_t(state.range(1));
    const auto h = std::size_t(state.range(2)), w = std::size_t(state.range(3));
    const auto pad_h = std::size_t(state.range(4)), pad_w = std::size_t(state.range(5));
    distdl::kernels::conv_geometry g{c_in, c_out, {3, 3}, {1, 1}, {pad_h, pad_w}, {1, 1}, true};
    const distdl::kernels::conv_engine engines[] = {distdl::kernels::conv_engine::automatic,
                                                    distdl::kernels::conv_engine::onednn,
                                                    distdl::kernels::conv_engine::direct};
    const shape_t x_shape{batch, c_in, h, w};
    distdl::kernels::convolution<float> kernel(g, engines[state.range(6)], x_shape);
    const auto x = filled(x_shape);
    const auto y_shape = kernel.output_shape(distdl::shape_of(x));
    const auto dy = filled(y_shape), weight = filled(kernel.weight_shape()), bias = filled({c_out});
    tensor<float> y, dx;
    tensor<float> dw = xt::zeros<float>(kernel.weight_shape()), db = xt::zeros<float>(shape_t{c_out});
    kernel.forward(x, weight, &bias, y);  // warm-up: plans and buffers
    kernel.backward(x, dy, weight, dx, dw, &db);
    long faults = 0;
    for (auto _ : state) {
        const long before = minor_faults();
        kernel.forward(x, weight, &bias, y);
        kernel.backward(x, dy, weight, dx, dw, &db);
        faults += minor_faults() - before;
        benchmark::DoNotOptimize(y.data());
        benchmark::DoNotOptimize(dx.data());
    }
    state.counters["faults"] = benchmark::Counter(double(faults), benchmark::Counter::kAvgIterations);
    state.SetLabel(kernel.last_engine());
}

// Builds the layer on every worker of a 4-worker world; returns it with this worker's x and dy.
struct worker_setup {
    std::unique_ptr<distdl::module<float>> layer;
    tensor<float> x, dy;
};
using setup_fn = std::function<worker_setup(const std::shared_ptr<distdl::communicator>&)>;

// One forward + adjoint of the layer per step on 4 simulated workers (bench/layers/stepped_world.hpp).
void run_distributed(benchmark::State& state, const setup_fn& setup) {
    std::vector<long> step_starts;
    std::atomic<unsigned long long> messages{0};
    distdl::bench::run_stepped_world(state, 4, [&](const std::shared_ptr<distdl::communicator>& world) {
        struct worker {
            worker_setup w;
            tensor<float> y, dx;
        };
        auto self = std::make_shared<worker>(worker{setup(world), {}, {}});
        const bool first = world->rank() == 0;
        auto warm_up = std::make_shared<bool>(true);
        return [self, first, world, warm_up, &step_starts, &messages] {
            if (first) step_starts.push_back(minor_faults());  // the other workers are in this step too
            const auto sent = world->traffic().total().messages;
            self->w.layer->forward(self->w.x, self->y);
            self->w.layer->adjoint(self->w.dy, self->dx);
            if (!*warm_up) messages += world->traffic().total().messages - sent;
            *warm_up = false;
        };
    });
    if (state.iterations() > 0) state.counters["messages"] = double(messages.load()) / double(state.iterations());
    // Messages per step, summed over the workers (each collective's messages as the transport
    // counts them). Page faults per step, process-wide, between the starts of the measured steps (the first
    // step is the warm-up): fresh memory per call shows up here.
    if (step_starts.size() > 2)
        state.counters["faults"] = double(step_starts.back() - step_starts[1]) / double(step_starts.size() - 2);
}

// One worker's local convolution in a layer's decomposition (what the layer hands its kernel
// each step): input window N x c_in x H x W, c_out outputs, the kernel's own zero padding.
struct local_problem {
    std::size_t c_in, c_out;
    shape_t window;
    std::size_t pad_h, pad_w;
    bool bias;
};

// The local kernels of a layer alone on its 4 simulated workers, each on its own problem, with
// no data movement: the floor of the layer's decomposition on this machine (the four kernels
// run two at a time on two cores, as in the layer). <layer> / <floor> is the price of the data
// movement, <floor> / conv_serial/0 that of the split itself. The backward runs as the layer's:
// from the kernel's own copy of x where it keeps one (backward_last), else from x.
void kernels_alone(benchmark::State& state, const std::function<local_problem(int rank)>& problem_of) {
    distdl::bench::run_stepped_world(state, 4, [&](const std::shared_ptr<distdl::communicator>& world) {
        const local_problem p = problem_of(world->rank());
        struct worker {
            explicit worker(const local_problem& p)
                : kernel({p.c_in, p.c_out, {3, 3}, {1, 1}, {p.pad_h, p.pad_w}, {1, 1}, p.bias},
                         distdl::kernels::conv_engine::automatic, p.window) {}
            distdl::kernels::convolution<float> kernel;
            tensor<float> x, dy, w, b, y, dx, dw, db;
        };
        auto self = std::make_shared<worker>(p);
        self->x = filled(p.window);
        self->dy = filled(self->kernel.output_shape(p.window));
        self->w = filled(self->kernel.weight_shape());
        self->b = filled({p.bias ? p.c_out : 0});
        self->dw = xt::zeros<float>(self->kernel.weight_shape());
        self->db = xt::zeros<float>(shape_t{p.bias ? p.c_out : 0});
        return [self, bias = p.bias] {
            auto& k = *self;
            k.kernel.forward(k.x, k.w, bias ? &k.b : nullptr, k.y);
            k.dw.fill(0.0f);
            k.db.fill(0.0f);
            if (k.kernel.retains_input()) k.kernel.backward_last(k.dy, k.w, k.dx, k.dw, bias ? &k.db : nullptr);
            else k.kernel.backward(k.x, k.dy, k.w, k.dx, k.dw, bias ? &k.db : nullptr);
            benchmark::DoNotOptimize(k.dx.data());
        };
    });
}

// Worker r's problem in each layer below (bias on the workers of input-channel index 0).
void feature_kernels_2x2(benchmark::State& state) {
    // P_x 1x1x2x2: a 128 x 128 output block from its 130 x 130 window (padding inside).
    kernels_alone(state, [](int) { return local_problem{16, 16, {batch, 16, 130, 130}, 0, 0, true}; });
}
void channel_kernels_2x2(benchmark::State& state) {
    // P_w 2x2x1x1, r = (co, ci): 8 -> 8 channels on the whole image, padded by the kernel.
    kernels_alone(state, [](int r) { return local_problem{8, 8, {batch, 8, height, width}, 1, 1, r % 2 == 0}; });
}
void batch_kernels_2x2(benchmark::State& state) {
    // The serial problem split over the batch, 2 images per worker: what running the serial
    // kernel on two cores at once costs this machine, with no split of channels or images.
    kernels_alone(state, [](int) { return local_problem{16, 16, {batch / 4, 16, height, width}, 1, 1, true}; });
}
void general_kernels_2x2(benchmark::State& state) {
    // P_w 1x2x2x1, r = (ci, h): 8 -> 16 channels on a 128-row output block, window padded inside.
    kernels_alone(state, [](int r) { return local_problem{8, 16, {batch, 8, 130, width + 2}, 0, 0, r / 2 == 0}; });
}

distdl::cartesian_partition grid(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& ranks,
                                 const shape_t& shape) {
    return distdl::partition::world(world).create_partition_inclusive(ranks).create_cartesian_topology_partition(shape);
}

// x and dy pieces of the balanced split over P_x and P_y.
void give_pieces(worker_setup& w, const distdl::cartesian_partition& P_x, const distdl::cartesian_partition& P_y) {
    const shape_t global{batch, channels, height, width};
    w.x = P_x.active() ? filled(piece_shape(P_x.shape(), P_x.index(), global)) : distdl::zero_volume<float>();
    w.dy = P_y.active() ? filled(piece_shape(P_y.shape(), P_y.index(), global)) : distdl::zero_volume<float>();
}

void feature_conv_2x2(benchmark::State& state) {
    run_distributed(state, [](const std::shared_ptr<distdl::communicator>& world) {
        const auto P_x = grid(world, {0, 1, 2, 3}, {1, 1, 2, 2});
        worker_setup w;
        w.layer = std::make_unique<distdl::feature_conv<float>>(2, P_x, channels, channels, layer_options);
        give_pieces(w, P_x, P_x);
        return w;
    });
}

void channel_conv_2x2(benchmark::State& state) {
    run_distributed(state, [](const std::shared_ptr<distdl::communicator>& world) {
        const auto P_x = grid(world, {0, 1}, {1, 2, 1, 1});
        const auto P_y = grid(world, {0, 2}, {1, 2, 1, 1});
        const auto P_w = grid(world, {0, 1, 2, 3}, {2, 2, 1, 1});
        worker_setup w;
        w.layer = std::make_unique<distdl::channel_conv<float>>(2, P_x, P_y, P_w, channels, channels, layer_options);
        give_pieces(w, P_x, P_y);
        return w;
    });
}

void general_conv_2x2(benchmark::State& state) {
    run_distributed(state, [](const std::shared_ptr<distdl::communicator>& world) {
        const auto P_x = grid(world, {0, 1, 2, 3}, {1, 2, 2, 1});
        // P_y on the workers of input-channel index 0 (P_w ranks are ci * 2 + h), so that each
        // sum along P_ci ends on one of its two terms (in place).
        const auto P_y = grid(world, {0, 1}, {1, 1, 2, 1});
        const auto P_w = grid(world, {0, 1, 2, 3}, {1, 2, 2, 1});
        worker_setup w;
        w.layer = std::make_unique<distdl::general_conv<float>>(2, P_x, P_y, P_w, channels, channels, layer_options);
        give_pieces(w, P_x, P_y);
        return w;
    });
}

}  // namespace

using distdl::bench::measured;
BENCHMARK(conv_serial)->Arg(0)->Arg(1)->Apply(measured);
// C_in, C_out, H, W, pad_h, pad_w, engine: the whole problem, then one worker's of feature,
// channel, general; engine 0 is automatic, told the input shape (on AVX-512 the direct engine for
// all four), 1 oneDNN, 2 direct (for comparison).
BENCHMARK(conv_local)
    ->Args({16, 16, 256, 256, 1, 1, 0})
    ->Args({16, 16, 130, 130, 0, 0, 0})
    ->Args({8, 8, 256, 256, 1, 1, 0})
    ->Args({8, 16, 130, 258, 0, 0, 0})
    ->Args({16, 16, 130, 130, 0, 0, 1})
    ->Args({8, 8, 256, 256, 1, 1, 1})
    ->Args({8, 16, 130, 258, 0, 0, 1})
    ->Apply(measured);
BENCHMARK(feature_conv_2x2)->Apply(measured);
BENCHMARK(channel_conv_2x2)->Apply(measured);
BENCHMARK(general_conv_2x2)->Apply(measured);
BENCHMARK(feature_kernels_2x2)->Apply(measured);
BENCHMARK(channel_kernels_2x2)->Apply(measured);
BENCHMARK(general_kernels_2x2)->Apply(measured);
BENCHMARK(batch_kernels_2x2)->Apply(measured);

int main(int argc, char** argv) {
    const char* about =
        "conv_bench: FeatureConv2d, ChannelConv2d and GeneralConv2d on 4 simulated workers against the\n"
        "serial convolution kernel on the whole problem (x 8x16x256x256 float32, 16 -> 16, 3x3,\n"
        "padding 1, forward + adjoint); conv_local: the kernel alone on each layer's per-worker\n"
        "problem; <layer>_kernels_2x2: the layer's local kernels alone on its 4 workers, without data\n"
        "movement; batch_kernels_2x2: the serial kernel on a quarter of the batch on each worker.\n"
        "CPU time summed over the workers; goal: each layer <= 1.2 x conv_serial/0.";
    // The layer of a layer benchmark (channel_conv_2x2 -> channel), empty for any other.
    const auto layer_of = [](const std::string& name) {
        const std::string suffix = "_conv_2x2";
        const bool is_layer =
            name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
        return is_layer ? name.substr(0, name.size() - suffix.size()) : std::string();
    };
    const auto compare = [layer_of](const std::string& name) {
        const std::string layer = layer_of(name);
        return layer.empty() ? distdl::bench::comparison{}
                             : distdl::bench::comparison{"conv_serial/0", 1.2, "conv_layer/sim/w4/" + layer};
    };
    const auto floor_of = [layer_of](const std::string& name) {  // channel_conv_2x2 -> channel_kernels_2x2
        const std::string layer = layer_of(name);
        return layer.empty() ? layer : layer + "_kernels_2x2";
    };
    distdl::bench::goal_summary::workload_filters filters;  // conv_layer/sim/w4/<layer>
    for (const std::string layer : {"feature", "channel", "general"})
        filters["conv_layer/sim/w4/" + layer] =
            "^(" + layer + "_conv_2x2|" + layer + "_kernels_2x2|conv_serial/0)(/|$)";
    return distdl::bench::run_layer_benchmarks(argc, argv, about, compare, filters, floor_of);
}
