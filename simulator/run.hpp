#pragma once
// sim::run(n, body): runs `body` on n simulated ranks, each a thread of this process with its
// own world communicator, and joins them. An exception escaping one rank's body aborts the
// world (every blocked rank wakes with sim::aborted, every later communication call throws
// it); run then throws the first error: the simulator's own (sim::deadlock,
// sim::collective_mismatch, sim::message_mismatch, sim::send_buffer_modified,
// sim::overlapping_receives, sim::time_limit_exceeded) as it is, any other exception wrapped
// in sim::rank_failure ("rank R: <what>"). Several runs may go on at once in one process.
// A deadlock among ranks blocked in the communicator is found at once; a rank blocked
// elsewhere (a mutex, a join) counts as running, so such a program would hang: a time limit
// (run_options) ends it with a report instead.
#include <functional>
#include <memory>
#include <vector>

#include "core/communicator.hpp"
#include "simulator/errors.hpp"

namespace distdl::sim {

struct run_report {
    std::vector<traffic_log> traffic;  // per rank, as its world communicator logged it
};

struct run_options {
    // Seconds the ranks may take, at most 1000000; 0: no limit, unless the environment variable
    // DISTDL_SIM_TIME_LIMIT gives one (decimal seconds, 0 for none; so that a test suite can set
    // one for every run). Past it the world is aborted (ranks blocked in the communicator wake
    // with sim::aborted) and run throws sim::time_limit_exceeded, saying what each rank was
    // doing (after another rank's failure: that failure, as usual). Ranks that then do not
    // return within as long again (at least 1 s) cannot be stopped: run prints the report,
    // with the world's abort reason, on stderr and ends the process (std::abort) rather than
    // hang.
    double time_limit = 0;
};

run_report run(int nranks, const std::function<void(const std::shared_ptr<communicator>&)>& body,
               const run_options& options = {});

}  // namespace distdl::sim
