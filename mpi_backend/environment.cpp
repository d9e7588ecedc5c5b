#include "mpi_backend/environment.hpp"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "mpi_backend/communicator.hpp"

namespace distdl::mpi {

bool is_active() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    return initialised != 0 && finalised == 0;
}

environment::environment(int& argc, char**& argv) : uncaught_at_start_(std::uncaught_exceptions()) {
    int initialised = 0, finalised = 0;
    detail::check(MPI_Initialized(&initialised), "MPI_Initialized");
    detail::check(MPI_Finalized(&finalised), "MPI_Finalized");
    if (finalised != 0) throw communication_error("distdl::mpi::environment: MPI has already been finalised");
    if (initialised != 0) {
        detail::check(MPI_Query_thread(&thread_level_), "MPI_Query_thread");
        return;
    }
    detail::check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &thread_level_), "MPI_Init_thread");
    owns_mpi_ = true;
    // Errors of calls that concern no particular communicator (groups, ...) are raised on
    // MPI_COMM_WORLD: make them return codes too, so they become mpi_error.
    detail::check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
}

environment::~environment() {
    if (!owns_mpi_ || !is_active()) return;
    if (std::uncaught_exceptions() > uncaught_at_start_) {
        std::fprintf(stderr,
                     "distdl::mpi::environment: left by an exception, whose message is not known here (catch it "
                     "inside the environment's scope, or run the program's body with distdl::mpi::run, which "
                     "prints it); aborting the MPI job\n");
        std::fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Finalize();
}

void environment::abort(int code) {
    std::fflush(stdout);
    std::fflush(stderr);
    if (is_active()) MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

std::shared_ptr<distdl::communicator> world_communicator() {
    if (!is_active())
        throw communication_error(
            "distdl::mpi::world_communicator: MPI is not active (construct a distdl::mpi::environment first)");
    return mpi_communicator::duplicate(MPI_COMM_WORLD);
}

}  // namespace distdl::mpi
