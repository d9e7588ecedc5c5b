#include "mpi_backend/run.hpp"

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

#include "mpi_backend/environment.hpp"

namespace distdl::mpi {

int run(int& argc, char**& argv, const std::function<void(const std::shared_ptr<communicator>&)>& body) {
    std::optional<environment> env;
    try {
        env.emplace(argc, argv);
    } catch (const std::exception& e) {  // MPI cannot start (or was finalised by an earlier run)
        std::fprintf(stderr, "distdl::mpi::run: %s\n", e.what());
        return 1;
    }
    std::string failure;
    int rank = -1;
    try {
        const auto world = world_communicator();  // destroyed before env finalises MPI
        rank = world->rank();
        body(world);
    } catch (const std::exception& e) {
        failure = e.what();
    } catch (...) {
        failure = "an exception not derived from std::exception";
    }
    if (failure.empty()) return 0;
    if (rank >= 0) std::fprintf(stderr, "distdl::mpi::run: rank %d: %s\n", rank, failure.c_str());
    else std::fprintf(stderr, "distdl::mpi::run: %s\n", failure.c_str());
    env->abort(1);
}

}  // namespace distdl::mpi
