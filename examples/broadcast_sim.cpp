// Broadcast and its adjoint on 14 simulated workers (threads of this process).
//
// P_x: workers 0..2 as a 1x3x1 partition, each holding one piece x_j (2x3x4) of a tensor.
// P_y: workers 2..13 as a 2x3x2 partition. Forward copies x_j to the four P_y workers with
// middle index j; the adjoint sums those four copies back onto the P_x worker of column j.
// With dy = y, dx = 4 x_j exactly. Workers 0 and 1 are not in P_y: their y is zero-volume,
// of shape {0} because the options drop the batch dimension.
// Prints each check; exits 1 if any fails.
#include <atomic>
#include <cstdio>
#include <exception>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "no_options.hpp"
#include "core/broadcast.hpp"
#include "simulator/run.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

// Piece j of the input: distinct whole numbers, so sums of four copies are exact.
tensor<double> piece(std::size_t j) {
    tensor<double> x(shape_t{2, 3, 4});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 100.0 * static_cast<double>(j + 1) + static_cast<double>(i);
    return x;
}

void require(bool ok, int rank, const std::string& what) {
    if (!ok) throw std::runtime_error("worker " + std::to_string(rank) + ": " + what);
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage =
        "usage: %s\n"
        "Runs a Broadcast and its adjoint on 14 simulated workers and checks the results.\n";
    if (const auto status = answer_arguments(argc, argv, usage)) return *status;
    std::atomic<int> copies{0}, sums{0}, empties{0};
    try {
        distdl::sim::run(14, [&](const std::shared_ptr<distdl::communicator>& world) {
            const auto W = distdl::partition::world(world);
            const auto P_x = W.create_partition_inclusive({0, 1, 2}).create_cartesian_topology_partition({1, 3, 1});
            const auto P_y = W.create_partition_inclusive({2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
                                 .create_cartesian_topology_partition({2, 3, 2});
            distdl::broadcast<double> layer(P_x, P_y, {.preserve_batch = false});

            const tensor<double> x = P_x.active() ? piece(P_x.index()[1]) : distdl::zero_volume<double>();
            const tensor<double> y = layer.forward(x);
            if (P_y.active()) {
                require(y == piece(P_y.index()[1]), world->rank(), "forward: y is not a copy of x_j");
                ++copies;
            } else {
                require(y.dimension() == 1 && y.size() == 0, world->rank(), "forward: y is not of shape {0}");
                ++empties;
            }

            const tensor<double> dx = layer.adjoint(y);
            if (P_x.active()) {
                require(dx == 4.0 * piece(P_x.index()[1]), world->rank(), "adjoint: dx is not 4 x_j");
                ++sums;
            } else {
                require(dx.size() == 0, world->rank(), "adjoint: dx is not zero-volume");
            }
        });
    } catch (const std::exception& e) {
        std::printf("FAIL %s\n", e.what());
        return 1;
    }
    std::printf("broadcast forward: %d of 12 P_y workers hold a copy of their x_j\n", copies.load());
    std::printf("broadcast forward: %d of 2 workers outside P_y got y of shape {0}\n", empties.load());
    std::printf("broadcast adjoint: %d of 3 P_x workers got dx = 4 x_j (the sum of their copies)\n", sums.load());
    const bool ok = copies == 12 && empties == 2 && sums == 3;
    std::printf("%s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
