#pragma once
// One benchmarked operation on one worker: everything is set up (partitions, buffers) when the
// step is made, so run() is what a steady-state user repeats: a forward and an adjoint.
#include <memory>
#include <vector>

#include "bench/workload.hpp"
#include "core/communicator.hpp"

namespace distdl::bench {

class step {
  public:
    virtual ~step() = default;
    // Forward, then adjoint, reusing this step's outputs.
    virtual void run() = 0;
    // After run(): this worker's forward output, then its adjoint output, flattened row-major
    // (what --check compares between distdl and the raw-MPI baseline).
    virtual std::vector<double> outputs() const = 0;
};

// The value every input starts with: element `flat` of the global tensor (repartition, halo
// exchange; rank 0), or element `flat` of worker `rank`'s piece (the others). Integers far
// below 2^53, so every sum is exact whatever order a reduction adds in.
inline double input_value(std::size_t flat, int rank) { return static_cast<double>(flat) + 1e8 * rank; }
// The f32 inputs (the layer halos): small integers, so that a float sum of a few of them is exact.
inline float layer_halo_input_value(std::size_t flat) { return static_cast<float>(flat % 4096); }

// distdl's primitive for the workload (collective over `world`, which has w.workers ranks).
std::unique_ptr<step> make_distdl_step(const workload& w, const std::shared_ptr<communicator>& world);

// memcpy of w.bytes_per_worker() bytes forward and again back, on every worker: the physical
// limit of one machine.
std::unique_ptr<step> make_memcpy_step(const workload& w);

}  // namespace distdl::bench
