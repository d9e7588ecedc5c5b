#pragma once
// What the model examples (conv_model, linear_model, train_model) share: test data, partitions,
// the block of a global tensor (or of a Linear layer's parameter) that a worker holds, how they
// compare a result with the serial model's, and their main: the same model code on 4 simulated
// workers or on 4 Open MPI ranks.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/decomposition.hpp"
#include "core/error.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "mpi_backend/environment.hpp"
#include "simulator/run.hpp"

namespace examples {

// Relative difference allowed between a distributed result and the serial one (float64).
constexpr double tolerance = 1e-12;

// Deterministic values without ties (max pooling's choice is then unambiguous).
inline distdl::tensor<double> filled(const distdl::shape_t& shape, double salt) {
    distdl::tensor<double> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = std::sin(salt + 0.37 * static_cast<double>(i));
    return t;
}

// The block of a global tensor that the worker at `at` of a partition of shape `grid` holds
// (the balanced split).
inline distdl::tensor<double> block_of(const distdl::tensor<double>& global, const distdl::shape_t& grid,
                                       const distdl::shape_t& at) {
    const auto box = distdl::balanced_box(distdl::shape_of(global), grid, at);
    xt::xstrided_slice_vector slices;
    for (std::size_t d = 0; d < box.rank(); ++d) slices.push_back(xt::range(box.start[d], box.stop[d]));
    return xt::strided_view(global, slices);
}

// The Cartesian partition of `shape` on the listed world ranks, in that order.
inline distdl::cartesian_partition partition_of(const distdl::partition& world, const std::vector<int>& workers,
                                                const distdl::shape_t& shape) {
    return world.create_partition_inclusive(workers).create_cartesian_topology_partition(shape);
}

// The block of a DistributedLinear parameter ("weight" or "bias") that the worker at `at` of its
// P_W (shape `grid`) owns: rows at[0] and columns at[1] of the weight's balanced blocks; rows at[0]
// of the bias (owned on column 0).
inline distdl::tensor<double> linear_block(const std::string& name, const distdl::tensor<double>& weight,
                                           const distdl::tensor<double>& bias, const distdl::shape_t& grid,
                                           const distdl::shape_t& at) {
    return name == "weight" ? block_of(weight, grid, at) : block_of(bias, {grid[0]}, {at[0]});
}

// max |a - b| / max |b| (0 for two empty tensors; infinite for other shapes).
inline double relative_difference(const distdl::tensor<double>& a, const distdl::tensor<double>& b) {
    if (a.shape() != b.shape()) return INFINITY;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(a.data()[i] - b.data()[i]));
        scale = std::max(scale, std::abs(b.data()[i]));
    }
    return scale > 0 ? diff / scale : diff;
}

// One worker's checks against the serial model, each printed; total() gathers them over the
// world.
class worker_checks {
  public:
    explicit worker_checks(const distdl::partition& world) : world_(world) {}

    void check(const std::string& what, const distdl::tensor<double>& got, const distdl::tensor<double>& want) {
        const double d = relative_difference(got, want);
        std::printf("worker %d: %-12s relative difference %.1e\n", world_.rank(), what.c_str(), d);
        failed_ += !(d <= tolerance);
    }
    // A check of a parameter (or its gradient), also counted: total() wants every one of the
    // model's, each on the worker that owns it.
    void check_parameter(const std::string& what, const distdl::tensor<double>& got,
                         const distdl::tensor<double>& want) {
        check(what, got, want);
        ++parameters_;
    }
    // A property that must hold (`what` says which).
    void require(bool holds, const std::string& what) {
        std::printf("worker %d: %s: %s\n", world_.rank(), what.c_str(), holds ? "yes" : "NO");
        failed_ += !holds;
    }
    // The failed checks of all the workers (the same on every worker), one more when the
    // parameters checked are not the `parameters` of the model (`which`: what they are).
    int total(int parameters, const char* which) const {
        int failures = 0, found = 0;
        for (const auto& r : world_.allgather_data(std::array<int, 2>{failed_, parameters_}))
            failures += r[0], found += r[1];
        if (found == parameters) return failures;
        if (world_.rank() == 0)
            std::printf("%d parameters checked on the workers, expected %d (%s)\n", found, parameters, which);
        return failures + 1;
    }

  private:
    const distdl::partition& world_;
    int failed_ = 0, parameters_ = 0;
};

// A model example's main: parses [--transport sim|mpi] (usage: `about`, what the example runs
// and checks; -h and --help print it), runs `worker` (the model on one worker; it returns the
// failed checks of all the workers, the same on every worker) on 4 simulated workers or, under
// mpiexec -n 4, on the Open MPI ranks, and prints PASS or FAIL. Exit status 0 when every check
// passed (or for -h, --help), 1 when one failed or a worker threw, 2 on a usage error (on stderr,
// naming the argument) or another number of ranks.
inline int run_model_example(int argc, char** argv, const char* about,
                             const std::function<int(const std::shared_ptr<distdl::communicator>&)>& worker) {
    const auto usage = [&](std::FILE* to) {
        std::fprintf(to,
                     "usage: %s [--transport sim|mpi]\n%s\nsim (default): 4 simulated workers; mpi: run as "
                     "mpiexec -n 4 %s --transport mpi.\n",
                     argv[0], about, argv[0]);
    };
    std::string transport = "sim";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i], next = i + 1 < argc ? argv[i + 1] : "";
        if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        }
        if (a == "--transport" && (next == "sim" || next == "mpi")) {
            transport = argv[++i];
            continue;
        }
        const std::string error = a != "--transport" ? "unknown argument '" + a + "'"
                                  : i + 1 < argc     ? "--transport takes sim or mpi, not '" + next + "'"
                                                     : "--transport needs sim or mpi";
        std::fprintf(stderr, "%s: %s\n", argv[0], error.c_str());
        usage(stderr);
        return 2;
    }
    int failures = 0;
    try {
        if (transport == "mpi") {
            distdl::mpi::environment env(argc, argv);
            const auto world = distdl::mpi::world_communicator();
            if (world->size() != 4) {
                if (world->rank() == 0) std::printf("FAIL run me on 4 ranks (mpiexec -n 4), not %d\n", world->size());
                return 2;
            }
            // A layer's refusal reaches every worker of it: each says why and MPI ends normally (an
            // exception leaving the environment would abort the job before any message).
            try {
                failures = worker(world);
            } catch (const distdl::error& e) {
                std::printf("FAIL rank %d: %s\n", world->rank(), e.what());
                failures = 1;
            }
            if (world->rank() != 0) return failures == 0 ? 0 : 1;  // rank 0 gives the verdict
        } else {
            std::atomic<int> total{0};
            distdl::sim::run(4, [&](const std::shared_ptr<distdl::communicator>& world) {
                const int f = worker(world);
                if (world->rank() == 0) total = f;
            });
            failures = total;
        }
    } catch (const std::exception& e) {
        std::printf("FAIL %s\n", e.what());
        return 1;
    }
    std::printf("%s\n", failures == 0 ? "PASS" : "FAIL");
    return failures == 0 ? 0 : 1;
}

}  // namespace examples
