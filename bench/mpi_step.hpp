#pragma once
// Raw Open MPI baselines: what a hand-written MPI program does for the same workload on the
// same ranks and data. The world must be an MPI transport communicator.
#include <memory>

#include "bench/step.hpp"

namespace distdl::bench {

std::unique_ptr<step> make_mpi_step(const workload& w, const std::shared_ptr<communicator>& world);

// Broadcast and SumReduce of a small tensor: MPI_Allreduce of the words distdl's fused path
// all-reduces (the copy: the data as 64-bit words plus one status word, summed as uint64; the
// sum: the data plus two status elements), one for each direction. Its outputs are empty.
std::unique_ptr<step> make_mpi_allreduce_step(const workload& w, const std::shared_ptr<communicator>& world);

}  // namespace distdl::bench
