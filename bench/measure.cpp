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
    return measure_interleaved(world, {&s}, warmup, iterations, faults).front();
}

std::vector<measurement> measure_interleaved(communicator& world, const std::vector<step*>& steps, int warmup,
                                             int iterations, fault_scope faults, bool prime) {
    using clock = std::chrono::steady_clock;
    for (int i = 0; i < warmup; ++i)
        for (step* s : steps) s->run();

    const auto n = static_cast<std::size_t>(iterations);
    const std::size_t S = steps.size();
    std::vector<double> mine(S * n);       // step k's iteration i at k * n + i
    std::vector<double> counters(3 * S);   // step k's [messages, bytes, faults] at 3 * k
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t k = 0; k < S; ++k) {
            if (prime && S > 1) steps[k]->run();
            world.barrier();
            // Barriers fault and send nothing that counts here: only the step itself.
            const traffic_totals before = world.traffic().total();
            const double f0 = minor_faults(faults);
            const auto t0 = clock::now();
            steps[k]->run();
            const auto t1 = clock::now();
            const double f1 = minor_faults(faults);
            const traffic_totals after = world.traffic().total();
            mine[k * n + i] = std::chrono::duration<double>(t1 - t0).count();
            counters[3 * k] += static_cast<double>(after.messages - before.messages);
            counters[3 * k + 1] += static_cast<double>(after.bytes - before.bytes);
            counters[3 * k + 2] += f1 - f0;
        }
    }

    // Everyone's times, then everyone's counters.
    const auto P = static_cast<std::size_t>(world.size());
    std::vector<double> all(S * n * P);
    world.all_gather(mine.data(), all.data(), S * n, dtype::float64);
    std::vector<double> all_counters(3 * S * P);
    world.all_gather(counters.data(), all_counters.data(), 3 * S, dtype::float64);

    std::vector<measurement> out(S, measurement{std::vector<double>(n, 0.0), 0, 0, 0});
    for (std::size_t k = 0; k < S; ++k) {
        measurement& m = out[k];
        for (std::size_t r = 0; r < P; ++r) {
            const double* times = &all[r * S * n + k * n];
            const double* c = &all_counters[r * 3 * S + 3 * k];
            for (std::size_t i = 0; i < n; ++i) m.seconds[i] = std::max(m.seconds[i], times[i]);
            m.messages_per_iteration += c[0] / iterations;
            m.bytes_sent_per_iteration += c[1] / iterations;
            m.faults_per_iteration = std::max(m.faults_per_iteration, c[2] / iterations);
        }
    }
    return out;
}

}  // namespace distdl::bench
