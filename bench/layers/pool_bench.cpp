// MaxPool2d and AvgPool2d on 4 simulated workers (P_x 1x1x2x2), x [8,16,256,256] float32, one
// forward + one adjoint per iteration, against the same step done by the pooling kernels on
// the whole tensor in one thread. Two geometries: kernel 2 stride 2 (windows never cross a
// piece: nothing moves) and kernel 3 stride 2 padding 1 (overlapping windows: a one-row halo
// and the boundary padding).
//
// All figures are CPU time of the whole process (MeasureProcessCPUTime), i.e. summed over the
// simulated workers: the distribution overhead is pool_sim_2x2 / pool_serial (goal <= 1.2).
// halo_bytes is what the HaloExchange moved per step, summed over the workers (forward and
// adjoint), halo_rate the same per second of process CPU time.
//
//   pool_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]   (see --help)
#include <benchmark/benchmark.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include "core/partition.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "simulator/run.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

const shape_t x_shape{8, 16, 256, 256};

enum class kind { max, avg };
enum class geometry { k2_s2, k3_s2_p1 };

distdl::pool_options options_of(geometry g) {
    // Two entries each: the serial kernel takes its number of spatial dimensions from them.
    if (g == geometry::k2_s2) return {.kernel_size = {2, 2}};
    return {.kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}};
}
distdl::kernels::pool_geometry kernel_geometry_of(geometry g) {
    const auto o = options_of(g);
    return {o.kernel_size, o.stride, o.padding, {}};
}

// Deterministic data with many distinct values (and some ties).
tensor<float> filled(const shape_t& shape, std::size_t salt) {
    tensor<float> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i)
        t.data()[i] = static_cast<float>(((i + salt) * 2654435761u) % 1000) / 1000.0f - 0.5f;
    return t;
}

// The serial step with the kernels the layers use.
template <kind K, geometry G>
void pool_serial(benchmark::State& state) {
    const auto g = kernel_geometry_of(G);
    const tensor<float> x = filled(x_shape, 1);
    tensor<float> y, dx;
    if constexpr (K == kind::max) {
        const distdl::kernels::max_pool<float> pool(g);
        const tensor<float> dy = filled(pool.output_shape(x_shape), 2);
        for (auto _ : state) {
            pool.forward(x, y);
            pool.backward(x, dy, dx);
            benchmark::DoNotOptimize(y.data());
            benchmark::DoNotOptimize(dx.data());
        }
    } else {
        const distdl::kernels::avg_pool<float> pool(g);
        const tensor<float> dy = filled(pool.output_shape(x_shape), 2);
        for (auto _ : state) {
            pool.forward(x, y);
            pool.backward(dy, x_shape, dx);
            benchmark::DoNotOptimize(y.data());
            benchmark::DoNotOptimize(dx.data());
        }
    }
}

// The simulated world runs on a helper thread for the whole benchmark; each iteration of the
// benchmark loop releases one step on every worker and waits for it to finish (the workers
// block in between, so the process CPU time is the workers' work).
template <kind K, geometry G>
void pool_sim_2x2(benchmark::State& state) {
    std::mutex m;
    std::condition_variable cv;
    long requested = 0, completed = 0;
    bool ready = false, stop = false;
    std::uint64_t halo_bytes = 0;  // summed over the workers, over the measured steps

    std::thread world_thread([&] {
        distdl::sim::run(4, [&](const std::shared_ptr<distdl::communicator>& world) {
            const auto P_x = distdl::partition::world(world).create_cartesian_topology_partition({1, 1, 2, 2});
            std::unique_ptr<distdl::module<float>> layer;
            if constexpr (K == kind::max)
                layer = std::make_unique<distdl::distributed_max_pool<float>>(P_x, x_shape, options_of(G));
            else
                layer = std::make_unique<distdl::distributed_avg_pool<float>>(P_x, x_shape, options_of(G));
            const shape_t piece{8, 16, 128, 128};
            const tensor<float> x = filled(piece, std::size_t(world->rank()));
            tensor<float> y, dx;
            layer->forward(x, y);  // warm-up: buffers reach their steady-state shapes
            const tensor<float> dy = filled(distdl::shape_of(y), 7 + std::size_t(world->rank()));
            layer->adjoint(dy, dx);
            world->traffic().clear();
            long done = 0;
            for (;;) {
                int go = 0;
                if (world->rank() == 0) {
                    std::unique_lock<std::mutex> lock(m);
                    if (!ready) {
                        ready = true;
                        cv.notify_all();
                    }
                    cv.wait(lock, [&] { return stop || requested > done; });
                    go = stop ? 0 : 1;
                }
                world->broadcast(&go, 1, 0);
                if (!go) break;
                layer->forward(x, y);
                layer->adjoint(dy, dx);
                world->barrier();
                if (world->rank() == 0) {
                    std::lock_guard<std::mutex> lock(m);
                    completed = ++done;
                    cv.notify_all();
                }
            }
            const auto& labels = world->traffic().by_label();
            const auto halo = labels.find("halo_exchange");
            std::lock_guard<std::mutex> lock(m);
            if (halo != labels.end()) halo_bytes += halo->second.bytes;
        });
    });
    {
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return ready; });
    }
    for (auto _ : state) {
        std::unique_lock<std::mutex> lock(m);
        ++requested;
        cv.notify_all();
        cv.wait(lock, [&] { return completed == requested; });
    }
    {
        std::lock_guard<std::mutex> lock(m);
        stop = true;
        cv.notify_all();
    }
    world_thread.join();
    state.counters["halo_bytes"] = benchmark::Counter(double(halo_bytes), benchmark::Counter::kAvgIterations);
    state.counters["halo_rate"] = benchmark::Counter(double(halo_bytes), benchmark::Counter::kIsRate);
}

}  // namespace

#define DISTDL_POOL_BENCH(fn, K, G)                                                      \
    BENCHMARK_TEMPLATE(fn, K, G)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();
DISTDL_POOL_BENCH(pool_serial, kind::max, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::max, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_serial, kind::avg, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::avg, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_serial, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_serial, kind::avg, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::avg, geometry::k3_s2_p1)
#undef DISTDL_POOL_BENCH

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    std::printf("MaxPool2d / AvgPool2d on x [8,16,256,256] float32, P_x 1x1x2x2 (4 simulated workers), forward + "
                "adjoint;\nCPU time summed over workers. Goal: pool_sim_2x2 <= 1.2 x pool_serial for the same "
                "kind and geometry.\n");
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
