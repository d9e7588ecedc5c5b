#pragma once
// Times a step on every worker of a world: warm-up runs, then timed runs, each started after a
// barrier; an iteration's time is the slowest worker's, or its span (worker_kind). Collective
// over the world.
#include <cstdint>
#include <memory>
#include <vector>

#include "bench/step.hpp"
#include "core/communicator.hpp"

namespace distdl::bench {

// What a worker is: a process (MPI: one per rank) or a thread of one process (the simulator).
// It decides whose minor page faults getrusage counts, and what an iteration's time is:
//   - processes: each worker times its own step (processes need not share a clock), and the
//     iteration's time is the slowest worker's;
//   - threads: they share one clock, and the cores (more ranks than cores here), so the
//     iteration's time is its span, from the first worker's start to the last worker's end.
//     A thread's own window leaves out the work of threads the scheduler ran before or after
//     it: 16 threads each copying 8 MiB on 2 cores take ~10.8 ms in all, while the largest
//     window of one of them measured ~5 ms, which made the memcpy baseline look twice as fast
//     as moving those bytes is. Steps whose workers wait for each other (every primitive)
//     have windows about as long as the span anyway.
enum class worker_kind { process, thread };

struct measurement {
    std::vector<double> seconds;     // per timed iteration (see worker_kind)
    double messages_per_iteration;   // distdl traffic counters, summed over workers (0 for baselines)
    double bytes_sent_per_iteration;
    double faults_per_iteration;     // minor page faults, the maximum over workers
};

measurement measure(communicator& world, step& s, int warmup, int iterations, worker_kind workers);

}  // namespace distdl::bench
