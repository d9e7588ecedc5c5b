// GoogleTest main for tests that need Open MPI itself (run under mpiexec): MPI lives for the
// whole run; rank 0 prints the usual output, other ranks print only their failures, and every
// rank returns the same verdict (failed anywhere = failed everywhere).
#include <gtest/gtest.h>

#include <cstdio>

#include "mpi_backend/environment.hpp"

namespace {

class failures_only : public ::testing::EmptyTestEventListener {
  public:
    explicit failures_only(int rank) : rank_(rank) {}
    void OnTestPartResult(const ::testing::TestPartResult& result) override {
        if (result.failed())
            std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                         result.line_number(), result.summary());
    }

  private:
    int rank_;
};

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    distdl::mpi::environment env(argc, argv);
    auto world = distdl::mpi::world_communicator();
    if (world->rank() != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
        listeners.Append(new failures_only(world->rank()));
    }
    const int failed_here = RUN_ALL_TESTS() != 0 ? 1 : 0;
    const int failed_anywhere = world->all_reduce_sum(failed_here);
    if (world->rank() == 0 && failed_anywhere > 0 && failed_here == 0)
        std::fprintf(stderr, "%d other rank(s) failed (see their [rank N] lines)\n", failed_anywhere);
    return failed_anywhere > 0 ? 1 : 0;
}
