// Local kernel benchmarks, single-threaded (kernels/threads.hpp):
//   gemm/*        sgemm and dgemm 64×2048 · 2048×2048: the rate every convolution is compared with
//   conv2d/*      [8,16,130,130], 16→16 channels, 3×3, padding 1: forward, backward data,
//                 backward weights, and all three; counters GF/s and vs_gemm (conv rate / GEMM
//                 rate of the same element type, measured first in this run). Targets on this
//                 problem: float32 ≥ 0.75, float64 ≥ 0.55.
//   pool2d/*      max and avg pooling 2×2 on the same input: bytes read + written per second,
//                 and vs_memcpy (rate / memcpy rate of the same byte count)
// Run: kernels_bench [--benchmark_filter=REGEX] (Google Benchmark options; --help lists them).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/convolution.hpp"
#include "kernels/pooling.hpp"
#include "kernels/threads.hpp"

using namespace distdl;

namespace {

template <class T>
tensor<T> random_tensor(const shape_t& shape, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    tensor<T> t(shape);
    for (auto& v : t) v = T(u(gen));
    return t;
}

// Rates measured by the baselines, for the ratios (0 until they ran).
double gemm_rate[2] = {0, 0};  // [float, double], flop/s
double memcpy_rate = 0;        // bytes/s

template <class T>
constexpr int type_index() {
    return sizeof(T) == 4 ? 0 : 1;
}

template <class T>
void bench_gemm(benchmark::State& state) {
    kernels::apply_thread_policy();
    const int m = 64, n = 2048, k = 2048;
    std::vector<T> a(std::size_t(m) * k, T(0.5)), b(std::size_t(k) * n, T(0.25)), c(std::size_t(m) * n);
    const double flops = 2.0 * m * n * k;
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        if constexpr (sizeof(T) == 4)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f,
                        c.data(), n);
        else
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a.data(), k, b.data(), n, 0.0,
                        c.data(), n);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        benchmark::DoNotOptimize(c.data());
    }
    gemm_rate[type_index<T>()] = flops * double(state.iterations()) / seconds;
    state.counters["GF/s"] = gemm_rate[type_index<T>()] / 1e9;
}

enum pass { forward = 1, backward_data = 2, backward_weights = 4, all = 7 };

template <class T>
void bench_conv(benchmark::State& state, kernels::conv_engine engine) {
    const int passes = int(state.range(0));
    const std::size_t N = 8, C = 16, L = 130;
    kernels::convolution<T> conv({.in_channels = C, .out_channels = C, .kernel_size = {3, 3}, .padding = {1}},
                                 engine);
    const auto x = random_tensor<T>({N, C, L, L}, 1);
    const auto w = random_tensor<T>(conv.weight_shape(), 2);
    const shape_t y_shape = conv.output_shape(shape_of(x));
    const auto dy = random_tensor<T>(y_shape, 3);
    tensor<T> y, dx;
    tensor<T> dw = xt::zeros<T>(conv.weight_shape());
    const double flops_per_pass = 2.0 * double(N * C * C * 9 * y_shape[2] * y_shape[3]);
    const int pass_count = ((passes & 1) != 0) + ((passes & 2) != 0) + ((passes & 4) != 0);
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        if (passes & forward) conv.forward(x, w, nullptr, y);
        if (passes & backward_data) conv.backward_data(dy, w, shape_of(x), dx);
        if (passes & backward_weights) conv.backward_weights(x, dy, dw, nullptr);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double rate = flops_per_pass * pass_count * double(state.iterations()) / seconds;
    state.counters["GF/s"] = rate / 1e9;
    if (gemm_rate[type_index<T>()] > 0) state.counters["vs_gemm"] = rate / gemm_rate[type_index<T>()];
    state.SetLabel(conv.last_engine());
}

void bench_memcpy(benchmark::State& state) {
    const std::size_t bytes = 8 * 16 * 130 * 130 * sizeof(float) * 5 / 4;  // what 2×2 max pooling reads + writes
    std::vector<char> a(bytes, 1), b(bytes);
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        std::memcpy(b.data(), a.data(), bytes);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        benchmark::DoNotOptimize(b.data());
    }
    memcpy_rate = double(bytes) * double(state.iterations()) / seconds;
    state.counters["GB/s"] = memcpy_rate / 1e9;
}

template <class Pool>
void bench_pool(benchmark::State& state) {
    const Pool pool({.kernel_size = {2, 2}});
    const auto x = random_tensor<float>({8, 16, 130, 130}, 4);
    tensor<float> y;
    pool.forward(x, y);
    const double bytes = double((x.size() + y.size()) * sizeof(float));
    double seconds = 0;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        pool.forward(x, y);
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        benchmark::DoNotOptimize(y.data());
    }
    const double rate = bytes * double(state.iterations()) / seconds;
    state.counters["GB/s"] = rate / 1e9;
    if (memcpy_rate > 0) state.counters["vs_memcpy"] = rate / memcpy_rate;
}

void conv_float_onednn(benchmark::State& state) { bench_conv<float>(state, kernels::conv_engine::automatic); }
void conv_float_im2col(benchmark::State& state) { bench_conv<float>(state, kernels::conv_engine::im2col); }
void conv_double_im2col(benchmark::State& state) { bench_conv<double>(state, kernels::conv_engine::automatic); }

}  // namespace

// Baselines first: the ratios read their rates.
BENCHMARK(bench_gemm<float>)->Name("gemm/sgemm_64x2048x2048")->Unit(benchmark::kMillisecond);
BENCHMARK(bench_gemm<double>)->Name("gemm/dgemm_64x2048x2048")->Unit(benchmark::kMillisecond);
BENCHMARK(conv_float_onednn)
    ->Name("conv2d/float32_onednn")->ArgName("passes")->Arg(forward)->Arg(backward_data)->Arg(backward_weights)->Arg(all)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(conv_float_im2col)
    ->Name("conv2d/float32_im2col")->ArgName("passes")->Arg(forward)->Arg(backward_data)->Arg(backward_weights)->Arg(all)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(conv_double_im2col)
    ->Name("conv2d/float64_im2col")->ArgName("passes")->Arg(forward)->Arg(backward_data)->Arg(backward_weights)->Arg(all)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(bench_memcpy)->Name("pool2d/memcpy_baseline")->Unit(benchmark::kMillisecond);
BENCHMARK(bench_pool<kernels::max_pool<float>>)->Name("pool2d/max_2x2_float32")->Unit(benchmark::kMillisecond);
BENCHMARK(bench_pool<kernels::avg_pool<float>>)->Name("pool2d/avg_2x2_float32")->Unit(benchmark::kMillisecond);

namespace {
void print_help() {
    std::printf(
        "kernels_bench: the local kernels single-threaded. gemm/*: sgemm and dgemm 64x2048 . 2048x2048,\n"
        "the rate the convolutions are compared with; conv2d/*: [8,16,130,130], 16 -> 16, 3x3, padding 1,\n"
        "forward, backward data, backward weights and all three, with GF/s and vs_gemm (targets on this\n"
        "problem: float32 >= 0.75, float64 >= 0.55); pool2d/*: max and avg pooling 2x2 on the same input,\n"
        "bytes per second and vs_memcpy.\n\n");
    benchmark::PrintDefaultHelp();
}
}  // namespace

int main(int argc, char** argv) {
    static char help_flag[] = "--help";  // -h too, as every other program of the project takes it
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-h") == 0) argv[i] = help_flag;
    benchmark::Initialize(&argc, argv, print_help);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
