#pragma once
// The benchmark workloads: which primitive, on how many workers, with which tensors. Every
// workload uses all `workers` ranks of its world, so under `mpiexec -n N` the program runs the
// workloads with workers == N, and the simulator runs any of them in one process.
#include <cstddef>
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::bench {

// pool_halo, conv_halo: HaloExchange with the geometry of the layers' benchmarks (issue 10),
// f32 4-d tensors: MaxPool2d(3, stride 2, padding 1) and FeatureConv2d's 3x3 with padding 1.
enum class primitive_kind { broadcast, sum_reduce, all_sum_reduce, repartition, halo_exchange, pool_halo, conv_halo };

bool is_layer_halo(primitive_kind kind);

// A layer halo's geometry per tensor dimension (batch, channels, height, width): a 3x3 kernel,
// padding 1 in the spatial dimensions, stride 2 (pool_halo) or 1 (conv_halo); dilation 1.
struct layer_halo_geometry {
    shape_t kernel_size{1, 1, 3, 3};
    shape_t stride{1, 1, 1, 1};
    shape_t padding{0, 0, 1, 1};
};
layer_halo_geometry layer_halo_geometry_of(primitive_kind kind);

struct workload {
    primitive_kind kind;
    int workers;
    std::string size;  // size class: "small" (~1 KiB per worker), "large" (8 MiB), "issue" (issue 7's small shapes)
    // broadcast, sum_reduce, all_sum_reduce: the local piece each source worker holds;
    // repartition and the halo exchanges: the global tensor.
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
    // Bytes of one element (8: f64; 4 for the layer halos, f32).
    std::size_t element_bytes() const;
};

// Every workload, in registration order (the same on every rank).
std::vector<workload> all_workloads();

}  // namespace distdl::bench
