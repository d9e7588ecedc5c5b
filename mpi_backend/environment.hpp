#pragma once
// Entry point of the MPI transport (does not need <mpi.h>):
//
//     int main(int argc, char** argv) {
//         distdl::mpi::environment env(argc, argv);       // MPI_Init_thread ... MPI_Finalize
//         auto world = distdl::mpi::world_communicator(); // a duplicate of MPI_COMM_WORLD
//         ...                                             // (destroy it before env)
//     }
#include <memory>

#include "core/communicator.hpp"
#include "mpi_backend/error.hpp"

namespace distdl::mpi {

// Initialises MPI (MPI_THREAD_FUNNELED: only the thread that built the environment calls MPI)
// and finalises it on destruction. If MPI is already initialised, it neither initialises nor
// finalises. Leaving the environment's scope because of an exception aborts the job
// (MPI_Abort) instead of finalising, since the other ranks may be waiting for this one in a
// collective and MPI_Finalize would then hang; its message is lost there, so a program whose
// errors should be read runs its body with mpi::run (mpi_backend/run.hpp), which prints it.
class environment {
  public:
    environment(int& argc, char**& argv);
    ~environment();
    environment(const environment&) = delete;
    environment& operator=(const environment&) = delete;

    // MPI_Abort on MPI_COMM_WORLD: ends every rank of the job with exit status `code`.
    [[noreturn]] void abort(int code);

    // Whether this object initialised MPI (and so will finalise it).
    bool owns_mpi() const noexcept { return owns_mpi_; }
    // The thread support level MPI provided (MPI_THREAD_* value).
    int thread_level() const noexcept { return thread_level_; }

  private:
    bool owns_mpi_ = false;
    int thread_level_ = 0;
    int uncaught_at_start_ = 0;
};

// A communicator over a new duplicate of MPI_COMM_WORLD (collective over all ranks). MPI must
// be initialised. Destroy it before the environment (if it outlives MPI_Finalize, its
// destructor skips freeing the MPI communicator).
std::shared_ptr<distdl::communicator> world_communicator();

// Whether MPI is initialised and not yet finalised.
bool is_active();

}  // namespace distdl::mpi
