#pragma once
// The benchmark workloads: which primitive, on how many workers, with which tensors. Every
// workload uses all `workers` ranks of its world, so under `mpiexec -n N` the program runs the
// workloads with workers == N, and the simulator runs any of them in one process.
#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::bench {

enum class primitive_kind { broadcast, sum_reduce, all_sum_reduce, repartition, halo_exchange };

struct workload {
    primitive_kind kind;
    int workers;
    std::string size;  // size class: "small" (~1 KiB per worker), "large" (8 MiB), "issue" (issue 7's small shapes)
    // broadcast, sum_reduce, all_sum_reduce: the local piece each source worker holds;
    // repartition, halo_exchange: the global tensor.
    shape_t shape;

    std::string primitive_name() const;
    // "<primitive>/<transport>/w<workers>/<size>": the part of a benchmark name after its role.
    std::string name(const std::string& transport) const;
    // A readable description of partitions and shapes (the benchmark's label).
    std::string describe() const;
    // Bytes of the largest local tensor a worker holds: the data a worker moves per direction
    // (the memcpy baseline copies this many bytes forward and again for the adjoint).
    std::size_t bytes_per_worker() const;
    // Partition shapes: grid of the workers for this primitive.
    shape_t worker_grid() const;
};

// Every workload, in registration order (the same on every rank).
std::vector<workload> all_workloads();

}  // namespace distdl::bench
