#include "bench/measure.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>

namespace distdl::bench {

namespace {

double minor_faults(worker_kind workers) {
    rusage usage{};
    getrusage(workers == worker_kind::thread ? RUSAGE_THREAD : RUSAGE_SELF, &usage);
    return static_cast<double>(usage.ru_minflt);
}

}  // namespace

measurement measure(communicator& world, step& s, int warmup, int iterations, worker_kind workers) {
    using clock = std::chrono::steady_clock;
    const auto seconds = [](clock::time_point t) {
        return std::chrono::duration<double>(t.time_since_epoch()).count();
    };
    for (int i = 0; i < warmup; ++i) s.run();

    const auto n = static_cast<std::size_t>(iterations);
    std::vector<double> starts(n), ends(n);
    const traffic_totals before = world.traffic().total();
    double fault_count = 0;
    for (std::size_t i = 0; i < n; ++i) {
        world.barrier();
        // Barriers fault nothing in steady state, but count only the step itself.
        const double f0 = minor_faults(workers);
        const auto t0 = clock::now();
        s.run();
        const auto t1 = clock::now();
        fault_count += minor_faults(workers) - f0;
        starts[i] = seconds(t0);
        ends[i] = seconds(t1);
    }
    const traffic_totals after = world.traffic().total();

    // Everyone's start and end times, then the counters: [messages, bytes, faults] per worker.
    const auto P = static_cast<std::size_t>(world.size());
    std::vector<double> all_starts(n * P), all_ends(n * P);
    world.all_gather(starts.data(), all_starts.data(), n, dtype::float64);
    world.all_gather(ends.data(), all_ends.data(), n, dtype::float64);
    const std::vector<double> counters{static_cast<double>(after.messages - before.messages),
                                       static_cast<double>(after.bytes - before.bytes), fault_count};
    std::vector<double> all_counters(3 * P);
    world.all_gather(counters.data(), all_counters.data(), 3, dtype::float64);

    measurement m{std::vector<double>(n, 0.0), 0, 0, 0};
    for (std::size_t i = 0; i < n; ++i) {
        double first_start = all_starts[i], last_end = all_ends[i], longest = 0;
        for (std::size_t r = 0; r < P; ++r) {
            first_start = std::min(first_start, all_starts[r * n + i]);
            last_end = std::max(last_end, all_ends[r * n + i]);
            longest = std::max(longest, all_ends[r * n + i] - all_starts[r * n + i]);
        }
        m.seconds[i] = workers == worker_kind::thread ? last_end - first_start : longest;
    }
    for (std::size_t r = 0; r < P; ++r) {
        m.messages_per_iteration += all_counters[3 * r] / iterations;
        m.bytes_sent_per_iteration += all_counters[3 * r + 1] / iterations;
        m.faults_per_iteration = std::max(m.faults_per_iteration, all_counters[3 * r + 2] / iterations);
    }
    return m;
}

}  // namespace distdl::bench
