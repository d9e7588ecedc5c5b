#pragma once
// One benchmarked operation on one worker: everything is set up (partitions, buffers) when the
// step is made, so run() is what a steady-state user repeats: a forward and an adjoint.
#include <memory>

#include "bench/workload.hpp"
#include "core/communicator.hpp"

namespace distdl::bench {

class step {
  public:
    virtual ~step() = default;
    // Forward, then adjoint, reusing this step's outputs.
    virtual void run() = 0;
};

// distdl's primitive for the workload (collective over `world`, which has w.workers ranks).
std::unique_ptr<step> make_distdl_step(const workload& w, const std::shared_ptr<communicator>& world);

// memcpy of w.bytes_per_worker() bytes forward and again back, on every worker: the physical
// limit of one machine.
std::unique_ptr<step> make_memcpy_step(const workload& w);

}  // namespace distdl::bench
