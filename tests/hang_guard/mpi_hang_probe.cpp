// A deliberately deadlocked MPI job: rank 0 waits for a message nobody sends, the other ranks
// wait in a barrier rank 0 never reaches. Used only to prove that the test wrapper
// (distdl_add_mpi_test in tests/CMakeLists.txt) ends such a job.
#include <cstdio>
#include <cstring>

#include <mpi.h>

int main(int argc, char** argv) {
    if (argc > 1 && std::strcmp(argv[1], "--help") == 0) {
        std::printf("usage: mpiexec -n N %s\n\nNever returns: rank 0 waits for a message that is never sent.\n", argv[0]);
        return 0;
    }
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        int value = 0;
        MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
