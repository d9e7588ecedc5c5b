#pragma once
// sim::run(n, body): runs `body` on n simulated ranks, each a thread of this process with its
// own world communicator, and joins them. An exception escaping one rank's body aborts the
// world (every blocked rank wakes with sim::aborted, every later communication call throws
// it); run then throws the first error: the simulator's own sim::deadlock,
// sim::collective_mismatch or sim::message_mismatch as it is, any other exception wrapped in
// sim::rank_failure ("rank R: <what>"). Several runs may go on at once in one process.
#include <functional>
#include <memory>
#include <vector>

#include "core/communicator.hpp"
#include "simulator/errors.hpp"

namespace distdl::sim {

struct run_report {
    std::vector<traffic_log> traffic;  // per rank, as its world communicator logged it
};

run_report run(int nranks, const std::function<void(const std::shared_ptr<communicator>&)>& body);

}  // namespace distdl::sim
