#pragma once
// Times steps on every worker of a world: warm-up runs, then timed runs, each started after a
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

// Several steps in alternation: iteration i runs each step once, in order, each after its own
// barrier, so that a slow spell of a shared machine falls on all of them alike rather than on
// whichever happened to run then. With `prime`, each timed run follows an untimed run of the
// same step, so that it finds the caches as a loop of that step alone leaves them (as measure()
// does), not as the other step left them: for tensors larger than the caches, which otherwise
// come out slower for being interleaved. One measurement per step, as measure() gives for one.
std::vector<measurement> measure_interleaved(communicator& world, const std::vector<step*>& steps, int warmup,
                                             int iterations, fault_scope faults, bool prime = false);

}  // namespace distdl::bench
