// Repartition and its adjoint on Open MPI: run as `mpiexec -n 4 repartition_mpi`.
//
// A 6x8 tensor with g(i, j) = 100 i + j, first split by rows over a 4x1 partition, is moved
// to a split by columns over a 1x4 partition of the same workers (balanced: 2,2,1,1 rows;
// 2 columns each). The adjoint moves every piece back, so dx == x exactly.
// Rank 0 prints each check; every rank exits 1 if any worker's check failed.
#include <cstdio>
#include <memory>
#include <string>

#include "no_options.hpp"
#include "core/decomposition.hpp"
#include "core/repartition.hpp"
#include "mpi_backend/run.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

const shape_t global_shape{6, 8};

// This worker's piece of g on a partition of shape `parts`.
tensor<double> piece(const shape_t& parts, const shape_t& index) {
    const auto box = distdl::balanced_box(global_shape, parts, index);
    tensor<double> t(box.extent());
    for (std::size_t i = 0; i < t.shape()[0]; ++i)
        for (std::size_t j = 0; j < t.shape()[1]; ++j)
            t(i, j) = 100.0 * static_cast<double>(box.start[0] + i) + static_cast<double>(box.start[1] + j);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage =
        "usage: mpiexec -n 4 %s\n"
        "Runs a Repartition and its adjoint on Open MPI and checks the results.\n";
    if (const auto status = answer_arguments(argc, argv, usage)) return *status;
    // mpi::run initialises and finalises MPI; an error escaping the body is printed, naming the rank.
    int status = 0;
    distdl::mpi::run(argc, argv, [&](const std::shared_ptr<distdl::communicator>& world) {
        const int rank = world->rank();
        if (world->size() != 4) {
            if (rank == 0) std::printf("FAIL run me on 4 ranks (mpiexec -n 4), not %d\n", world->size());
            status = 2;
            return;
        }
        const auto W = distdl::partition::world(world);
        const auto P_x = W.create_partition_inclusive({0, 1, 2, 3}).create_cartesian_topology_partition({4, 1});
        const auto P_y = W.create_partition_inclusive({0, 1, 2, 3}).create_cartesian_topology_partition({1, 4});
        distdl::repartition<double> layer(P_x, P_y, {.preserve_batch = false});

        const tensor<double> x = piece(P_x.shape(), P_x.index());
        const tensor<double> y = layer.forward(x);
        const bool forward_ok = y == piece(P_y.shape(), P_y.index());
        const tensor<double> dx = layer.adjoint(y);
        const bool adjoint_ok = dx == x;
        if (!forward_ok) std::printf("FAIL rank %d: forward: y is not its column block of g\n", rank);
        if (!adjoint_ok) std::printf("FAIL rank %d: adjoint: dx differs from x\n", rank);

        const auto forward_results = W.allgather_data<int>(forward_ok ? 1 : 0);
        const auto adjoint_results = W.allgather_data<int>(adjoint_ok ? 1 : 0);
        int forward_passed = 0, adjoint_passed = 0;
        for (int r : forward_results) forward_passed += r;
        for (int r : adjoint_results) adjoint_passed += r;
        const int failures = 8 - forward_passed - adjoint_passed;
        if (rank == 0) {
            std::printf("repartition forward: %d of 4 workers hold their column block of the 6x8 tensor\n", forward_passed);
            std::printf("repartition adjoint: %d of 4 workers got their row block back exactly\n", adjoint_passed);
            std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
        }
        status = failures == 0 ? 0 : 1;
    });
    return status;
}
