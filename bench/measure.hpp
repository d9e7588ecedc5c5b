#pragma once
// Times a step on every worker of a world: warm-up runs, then timed runs, each started after a
// barrier; an iteration's time is the slowest worker's. Collective over the world.
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/step.hpp"
#include "core/communicator.hpp"

namespace distdl::bench {

// Whose minor page faults getrusage counts: the worker's process (MPI: one process per rank)
// or its thread (simulator: all ranks share one process, each rank is one thread).
enum class fault_scope { process, thread };

struct measurement {
    std::vector<double> seconds;     // per timed iteration: the maximum over workers
    double messages_per_iteration;   // distdl traffic counters, summed over workers (0 for baselines)
    double bytes_sent_per_iteration;
    double faults_per_iteration;     // minor page faults, the maximum over workers
};

measurement measure(communicator& world, step& s, int warmup, int iterations, fault_scope faults);

}  // namespace distdl::bench
