// MaxPool2d and AvgPool2d on 4 simulated workers (P_x 1x1x2x2), x [8,16,256,256] float32, one
// forward + one adjoint per iteration, against the same step done by the pooling kernels on
// the whole tensor in one thread. Two geometries: kernel 2 stride 2 (windows never cross a
// piece: nothing moves) and kernel 3 stride 2 padding 1 (overlapping windows: a one-row halo
// and the boundary padding).
//
// All figures are CPU time of the whole process (MeasureProcessCPUTime), i.e. summed over the
// simulated workers: the distribution overhead is pool_sim_2x2 / pool_serial (goal <= 1.2).
// pool_quarters (3x3 only) runs the serial kernels on the four pieces in turn: the cost of the
// split alone, without the halo; pool_kernels_2x2 (both geometries) the serial kernels on the
// four pieces on 4 simulated workers at once (the floor of the layer's decomposition: a second
// closing table splits each layer's overhead into the kernels' and the halo's).
// halo_bytes is what the HaloExchange moved per step, summed over the workers (forward and
// adjoint), halo_rate the same per second of process CPU time. The closing table gives each
// pool_sim_2x2 over its pool_serial from 5 interleaved repetitions (bench/layers/goal_summary.hpp).
//
//   pool_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]   (see --help)
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/layers/goal_summary.hpp"
#include "bench/layers/stepped_world.hpp"
#include "core/partition.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::bench::measure_steps;

const shape_t x_shape{8, 16, 256, 256};

enum class kind { max, avg };
enum class geometry { k2_s2, k3_s2_p1 };

distdl::pool_options options_of(geometry g) {
    // Two entries each: the serial kernel takes its number of spatial dimensions from them.
    if (g == geometry::k2_s2) return {.kernel_size = {2, 2}};
    return {.kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}};
}
distdl::pool_options shaped(distdl::pool_options o) {
    o.input_shape = x_shape;
    return o;
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

// One serial step, forward + adjoint, with the kernels the layers use, on an input of `shape`
// (max: the adjoint routes dy to the maxima the forward saved, as the layer does). salt: of x;
// dy's is salt + 1.
template <kind K, geometry G>
struct serial_step {
    using kernel =
        std::conditional_t<K == kind::max, distdl::kernels::max_pool<float>, distdl::kernels::avg_pool<float>>;

    serial_step(const shape_t& shape, std::size_t salt)
        : x_shape(shape), x(filled(shape, salt)), dy(filled(pool.output_shape(shape), salt + 1)) {}

    void run() {
        if constexpr (K == kind::max) {
            pool.forward(x, y, argmax);
            pool.backward(argmax, dy, x_shape, dx);
        } else {
            pool.forward(x, y);
            pool.backward(dy, x_shape, dx);
        }
        benchmark::DoNotOptimize(y.data());
        benchmark::DoNotOptimize(dx.data());
    }

    kernel pool{kernel_geometry_of(G)};  // first: dy's shape comes from it
    shape_t x_shape;
    tensor<float> x, dy, y, dx;
    distdl::kernels::pool_argmax argmax;
};

// Each worker's piece of x on P_x 1x1x2x2.
const shape_t quarter{8, 16, 128, 128};

// The serial step on the whole tensor: the baseline.
template <kind K, geometry G>
void pool_serial(benchmark::State& state) {
    serial_step<K, G> step(x_shape, 1);
    measure_steps(state, [&] { step.run(); });
}

// The serial step on the four [8,16,128,128] quarters in turn, each padded as a whole tensor
// (a cost reference, not a result: no halo): what the smaller arrays alone cost, without any
// distribution, so pool_sim_2x2 / pool_quarters is the price of the data movement.
template <kind K, geometry G>
void pool_quarters(benchmark::State& state) {
    std::vector<serial_step<K, G>> steps;
    for (std::size_t i = 0; i < 4; ++i) steps.emplace_back(quarter, 1 + i);
    measure_steps(state, [&] {
        for (auto& step : steps) step.run();
    });
}

// The steps of pool_quarters on 4 simulated workers at once, one quarter each, with no data
// movement: the floor of the layer's decomposition on this machine (four workers on two cores
// share the memory bandwidth, which a memory-bound kernel feels). pool_sim_2x2 / pool_kernels_2x2
// is the price of the halo, pool_kernels_2x2 / pool_serial that of the split and the machine.
template <kind K, geometry G>
void pool_kernels_2x2(benchmark::State& state) {
    distdl::bench::run_stepped_world(state, 4, [](const std::shared_ptr<distdl::communicator>& world) {
        auto step = std::make_shared<serial_step<K, G>>(quarter, 1 + std::size_t(world->rank()));
        return [step] { step->run(); };
    });
}

// One forward + adjoint per step on 4 simulated workers (bench/layers/stepped_world.hpp).
template <kind K, geometry G>
void pool_sim_2x2(benchmark::State& state) {
    // Bytes the HaloExchange moved per worker, counted from the first measured step.
    std::vector<std::uint64_t> halo(4, 0);
    distdl::bench::run_stepped_world(state, 4, [&](const std::shared_ptr<distdl::communicator>& world) {
        struct worker {
            std::unique_ptr<distdl::module<float>> layer;
            tensor<float> x, y, dy, dx;
            bool warm = false;
        };
        const auto P_x = distdl::partition::world(world).create_cartesian_topology_partition({1, 1, 2, 2});
        auto self = std::make_shared<worker>();
        if constexpr (K == kind::max)
            self->layer = std::make_unique<distdl::distributed_max_pool<float>>(P_x, shaped(options_of(G)));
        else
            self->layer = std::make_unique<distdl::distributed_avg_pool<float>>(P_x, shaped(options_of(G)));
        self->x = filled(quarter, std::size_t(world->rank()));
        std::uint64_t& my_halo = halo[static_cast<std::size_t>(world->rank())];
        return [self, world, &my_halo] {
            const auto halo_bytes = [&] {
                const auto& labels = world->traffic().by_label();
                const auto found = labels.find("halo_exchange");
                return found == labels.end() ? std::uint64_t{0} : std::uint64_t(found->second.bytes);
            };
            const std::uint64_t before = halo_bytes();
            self->layer->forward(self->x, self->y);
            if (!self->warm) self->dy = filled(distdl::shape_of(self->y), 7 + std::size_t(world->rank()));
            self->layer->adjoint(self->dy, self->dx);
            if (self->warm) my_halo += halo_bytes() - before;
            self->warm = true;
        };
    });
    std::uint64_t halo_bytes = 0;
    for (auto v : halo) halo_bytes += v;
    state.counters["halo_bytes"] = benchmark::Counter(double(halo_bytes), benchmark::Counter::kAvgIterations);
    state.counters["halo_rate"] = benchmark::Counter(double(halo_bytes), benchmark::Counter::kIsRate);
}

}  // namespace

#define DISTDL_POOL_BENCH(fn, K, G) BENCHMARK_TEMPLATE(fn, K, G)->Apply(distdl::bench::measured);
DISTDL_POOL_BENCH(pool_serial, kind::max, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::max, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_serial, kind::avg, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::avg, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_serial, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_serial, kind::avg, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_sim_2x2, kind::avg, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_kernels_2x2, kind::max, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_kernels_2x2, kind::avg, geometry::k2_s2)
DISTDL_POOL_BENCH(pool_kernels_2x2, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_kernels_2x2, kind::avg, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_quarters, kind::max, geometry::k3_s2_p1)
DISTDL_POOL_BENCH(pool_quarters, kind::avg, geometry::k3_s2_p1)
#undef DISTDL_POOL_BENCH

int main(int argc, char** argv) {
    const char* about =
        "pool_bench: MaxPool2d and AvgPool2d on 4 simulated workers (P_x 1x1x2x2) against the pooling\n"
        "kernels on the whole tensor (x 8x16x256x256 float32, forward + adjoint), for kernel 2 stride 2\n"
        "and kernel 3 stride 2 padding 1; pool_quarters: the serial kernels on the four pieces in turn;\n"
        "pool_kernels_2x2: the same on 4 simulated workers at once, one piece each, without data movement.\n"
        "CPU time summed over the workers; goal: pool_sim_2x2 <= 1.2 x pool_serial of the same kind\n"
        "and geometry.";
    // Whether a benchmark is a layer's (pool_sim_2x2<K, G>), and its template arguments "<K, G>".
    const std::string layer = "pool_sim_2x2";
    const auto is_layer = [layer](const std::string& name) { return name.rfind(layer, 0) == 0; };
    // The report's name of <kind::max, geometry::k2_s2>: "max_k2_s2".
    const auto workload_of = [](const std::string& name) {
        const auto word_after = [&](const std::string& prefix) {
            const std::size_t at = name.find(prefix) + prefix.size();
            return name.substr(at, name.find_first_of(",>", at) - at);
        };
        return "pool_layer/sim/w4/" + word_after("kind::") + "_" + word_after("geometry::");
    };
    const auto compare = [=](const std::string& name) {  // pool_sim_2x2<K, G> -> pool_serial<K, G>
        return is_layer(name) ? distdl::bench::comparison{"pool_serial" + name.substr(layer.size()), 1.2,
                                                          workload_of(name)}
                              : distdl::bench::comparison{};
    };
    const auto floor_of = [=](const std::string& name) {  // pool_sim_2x2<K, G> -> pool_kernels_2x2<K, G>
        return is_layer(name) ? "pool_kernels_2x2" + name.substr(layer.size()) : std::string();
    };
    // pool_layer/sim/w4/<kind>_<geometry> -> pool_(sim_2x2|serial|kernels_2x2)<kind::K, geometry::G>
    distdl::bench::goal_summary::workload_filters filters;
    for (const std::string kind : {"max", "avg"})
        for (const std::string geometry : {"k2_s2", "k3_s2_p1"})
            filters["pool_layer/sim/w4/" + kind + "_" + geometry] =
                "^pool_(sim_2x2|serial|kernels_2x2)<kind::" + kind + ", geometry::" + geometry + ">(/|$)";
    return distdl::bench::run_layer_benchmarks(argc, argv, about, compare, filters, floor_of);
}
