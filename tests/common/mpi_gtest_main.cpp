// GoogleTest main for tests that need Open MPI itself (run under mpiexec): MPI lives for the
// whole run, and every rank's verdict becomes the job's exit status.
#include <gtest/gtest.h>

#include "mpi_backend/environment.hpp"

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    distdl::mpi::environment env(argc, argv);
    return RUN_ALL_TESTS();
}
