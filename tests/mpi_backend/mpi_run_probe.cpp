// distdl::mpi::run under mpiexec: `mpi_run_probe` meets every rank in a barrier and returns 0;
// `mpi_run_probe --throw-on R` throws on rank R while the others wait in the barrier, and the
// job must end (not hang) with rank R's message on stderr.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "mpi_backend/run.hpp"

int main(int argc, char** argv) {
    const std::string usage = "usage: mpi_run_probe [--throw-on RANK]   (a test of distdl::mpi::run, under mpiexec)\n";
    if (argc == 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::printf("%s", usage.c_str());
        return 0;
    }
    if (argc != 1 && !(argc == 3 && std::string(argv[1]) == "--throw-on")) {
        std::fprintf(stderr, "%s", usage.c_str());
        return 2;
    }
    const int throw_on = argc == 3 ? std::atoi(argv[2]) : -1;
    return distdl::mpi::run(argc, argv, [&](const std::shared_ptr<distdl::communicator>& world) {
        if (world->rank() == throw_on) throw std::runtime_error("rank " + std::to_string(throw_on) + " refuses");
        world->barrier();
        std::printf("rank %d: through the barrier\n", world->rank());
    });
}
