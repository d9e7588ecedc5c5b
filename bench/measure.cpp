#include "bench/measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace distdl::bench {

namespace {

double minor_faults(fault_scope scope) {
    rusage usage{};
    getrusage(scope == fault_scope::thread ? RUSAGE_THREAD : RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_minflt);
}

}  // namespace

measurement measure(communicator& world, step& s, int warmup, int iterations, fault_scope faults) {
    using clock = std::chrono::steady_clock;
    for (int i = 0; i < warmup; ++i) s.run();

    const auto n = static_cast<std::size_t>(iterations);
    std::vector<double> mine(n);
    const traffic_totals before = world.traffic().total();
    double fault_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
        world.barrier();
        // Barriers fault nothing in steady state, but count only the step itself.
        const double f0 = minor_faults(faults);
        const auto t0 = clock::now();
        s.run();
        const auto t1 = clock::now();
        fault_count += minor_faults(faults) - f0;
        mine[i] = std::chrono::duration<double>(t1 - t0).count();
    }
    const traffic_totals after = world.traffic().total();

    // Everyone's times, then the counters: [messages, bytes, faults] per worker.
    const auto P = static_cast<std::size_t>(world.size());
    std::vector<double> all(n * P);
    world.all_gather(mine.data(), all.data(), n, dtype::float64);
    const std::vector<double> counters{static_cast<double>(after.messages - before.messages),
                                       static_cast<double>(after.bytes - before.bytes), fault_count};
    std::vector<double> all_counters(3 * P);
    world.all_gather(counters.data(), all_counters.data(), 3, dtype::float64);

    measurement m{std::vector<double>(n, 0.0), 0, 0, 0};
    for (std::size_t r = 0; r < P; ++r) {
        for (std::size_t i = 0; i < n; ++i) m.seconds[i] = std::max(m.seconds[i], all[r * n + i]);
        m.messages_per_iteration += all_counters[3 * r] / iterations;
        m.bytes_sent_per_iteration += all_counters[3 * r + 1] / iterations;
        m.faults_per_iteration = std::max(m.faults_per_iteration, all_counters[3 * r + 2] / iterations);
    }
    return m;
}

}  // namespace distdl::bench
