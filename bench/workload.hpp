#pragma once
// The benchmark workloads: which primitive, on how many workers, with which tensors. Every
// workload uses all `workers` ranks of its world, so under `mpiexec -n N` the program runs the
// workloads with workers == N, and the simulator runs any of them in one process.
#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::bench {

// pool_halo: HaloExchange with the pooling layer's geometry (issue 10), f32 4-d tensors.
enum class primitive_kind { broadcast, sum_reduce, all_sum_reduce, repartition, halo_exchange, pool_halo };

// The pool_halo geometry per tensor dimension (batch, channels, height, width): a 3x3 kernel,
// stride 2, padding 1 in the spatial dimensions (MaxPool2d(3, 2, 1)); dilation 1.
struct pool_halo_geometry {
    shape_t kernel_size{1, 1, 3, 3};
    shape_t stride{1, 1, 2, 2};
    shape_t padding{0, 0, 1, 1};
};

struct workload {
    primitive_kind kind;
    int workers;
    std::string size;  // size class: "small" (~1 KiB per worker), "large" (8 MiB), "issue" (issue 7's small shapes)
    // broadcast, sum_reduce, all_sum_reduce: the local piece each source worker holds;
    // repartition, halo_exchange, pool_halo: the global tensor.
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
    // Bytes of one element (8: f64; 4 for pool_halo, f32).
    std::size_t element_bytes() const;
};

// Every workload, in registration order (the same on every rank).
std::vector<workload> all_workloads();

}  // namespace distdl::bench
