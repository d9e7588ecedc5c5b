// Runs every registered check that accepts the MPI world size, under mpiexec. A failing rank
// prints its failure and aborts the job (the other ranks could otherwise wait forever in a
// collective); when every rank passes, rank 0 prints the verdicts.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "mpi_backend/environment.hpp"
#include "tests/common/checks.hpp"

int main(int argc, char** argv) {
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::printf("usage: mpiexec -n N %s [FILTER]\n\nRuns every registered check that accepts a world of N ranks (and whose name\n"
                    "contains FILTER) on MPI_COMM_WORLD. A failing rank prints its failure and aborts the\n"
                    "job; otherwise rank 0 prints one line per check and a closing count.\n",
                    argv[0]);
        return EXIT_SUCCESS;
    }
    distdl::mpi::environment env(argc, argv);
    auto world = distdl::mpi::world_communicator();
    const int n = world->size();
    const std::string filter = argc > 1 ? argv[1] : "";
    int ran = 0;
    for (const auto& check : distdl::testing::check_registry()) {
        if (!check.accepts_world_size(n)) continue;
        if (!filter.empty() && check.name.find(filter) == std::string::npos) continue;
        try {
            check.body(world);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "[rank %d] FAILED %s on %d MPI ranks: %s\n", world->rank(), check.name.c_str(), n,
                         e.what());
            std::fflush(stderr);
            env.abort(1);
        }
        world->barrier();
        if (world->rank() == 0) std::printf("[ OK ] %s on %d MPI ranks\n", check.name.c_str(), n);
        ++ran;
    }
    if (world->rank() == 0) std::printf("%d passed, 0 failed\n", ran);
    return ran > 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
