#pragma once
// Raw Open MPI baselines: what a hand-written MPI program does for the same workload on the
// same ranks and data. The world must be an MPI transport communicator.
#include <memory>

#include "bench/step.hpp"

namespace distdl::bench {

std::unique_ptr<step> make_mpi_step(const workload& w, const std::shared_ptr<communicator>& world);

}  // namespace distdl::bench
