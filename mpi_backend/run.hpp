#pragma once
// mpi::run(argc, argv, body): the Open MPI counterpart of sim::run. It initialises MPI (an
// mpi::environment), runs `body` with a communicator over MPI_COMM_WORLD and finalises MPI;
// returns 0. An exception escaping `body` is printed on stderr as "distdl::mpi::run: rank R:
// <what>" (sim::run's rank_failure text) before the job is aborted with exit status 1: the other
// ranks may be waiting for this one, so MPI could not be finalised. (An exception that leaves
// an mpi::environment's scope aborts the job too, but there its message is lost.) Once per
// program: MPI cannot start again after it was finalised (a second run prints that and returns 1).
#include <functional>
#include <memory>

#include "core/communicator.hpp"

namespace distdl::mpi {

int run(int& argc, char**& argv, const std::function<void(const std::shared_ptr<communicator>&)>& body);

}  // namespace distdl::mpi
