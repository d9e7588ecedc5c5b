// What only the Open MPI transport has: RAII over MPI_Comm, count limits of MPI's int
// interface, MPI error codes turned into typed exceptions, in-place collectives.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "mpi_backend/communicator.hpp"
#include "mpi_backend/environment.hpp"

using namespace distdl;

namespace {

std::shared_ptr<communicator> world() {
    static auto w = mpi::world_communicator();
    return w;
}

}  // namespace

TEST(mpi_environment, a_nested_environment_does_not_own_mpi) {
    int argc = 0;
    char** argv = nullptr;
    mpi::environment nested(argc, argv);
    EXPECT_FALSE(nested.owns_mpi());
    EXPECT_TRUE(mpi::is_active());
    // It reports the level MPI was initialized with, by the outer environment.
    int provided = -1;
    MPI_Query_thread(&provided);
    EXPECT_EQ(nested.thread_level(), provided);
    EXPECT_GE(provided, MPI_THREAD_FUNNELED);
}

TEST(mpi_communicator, counts_beyond_int_are_refused_before_mpi_sees_them) {
    std::vector<double> buf(1);
    try {
        world()->isend(buf.data(), std::size_t(INT_MAX) + 1, 0, 0);
        FAIL() << "no error";
    } catch (const invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("exceeds"), std::string::npos) << e.what();
    }
    EXPECT_THROW(world()->broadcast(buf.data(), std::size_t(1) << 40, 0), invalid_argument);
}

TEST(mpi_communicator, move_transfers_the_handle_and_nulls_the_source) {
    auto original = mpi::mpi_communicator::duplicate(MPI_COMM_WORLD);
    const MPI_Comm handle = original->native();
    mpi::mpi_communicator moved(std::move(*original));
    EXPECT_EQ(original->native(), MPI_COMM_NULL);
    EXPECT_EQ(moved.native(), handle);
    EXPECT_EQ(moved.rank(), world()->rank());
    EXPECT_THROW(original->rank(), communication_error);
    mpi::mpi_communicator assigned = std::move(moved);
    EXPECT_EQ(assigned.all_reduce_sum(1), world()->size());
}

TEST(mpi_error, carries_the_call_the_class_and_mpis_text) {
    try {
        mpi::detail::check(MPI_ERR_TRUNCATE, "MPI_Recv");
        FAIL() << "no error";
    } catch (const mpi::mpi_error& e) {
        EXPECT_EQ(e.call(), "MPI_Recv");
        EXPECT_EQ(e.code(), MPI_ERR_TRUNCATE);
        EXPECT_EQ(e.error_class(), MPI_ERR_TRUNCATE);
        EXPECT_NE(e.mpi_message().find("truncated"), std::string::npos) << e.mpi_message();
        EXPECT_NE(std::string(e.what()).find("MPI_Recv"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
}

TEST(mpi_communicator, a_longer_message_than_posted_is_an_mpi_error) {
    const int n = world()->size(), me = world()->rank();
    double out[3] = {1, 2, 3}, in[3] = {};
    std::vector<request> pending;
    pending.push_back(world()->irecv(in, 2, (me + n - 1) % n, 1));
    pending.push_back(world()->isend(out, 3, (me + 1) % n, 1));
    EXPECT_THROW(world()->wait_all(pending), mpi::mpi_error);
}

TEST(mpi_communicator, a_shorter_message_than_posted_is_an_error) {
    const int me = world()->rank();
    double out[3] = {1, 2, 3}, in[3] = {};
    std::vector<request> pending;
    pending.push_back(world()->irecv(in, 2, me, 2));
    pending.push_back(world()->isend(out, 1, me, 2));
    EXPECT_THROW(world()->wait_all(pending), communication_error);
}

TEST(mpi_communicator, a_dropped_receive_is_cancelled) {
    double in = -1.0;
    {
        std::vector<request> pending;
        pending.push_back(world()->irecv(&in, 1, world()->rank(), 3));
    }
    world()->barrier();
    EXPECT_EQ(in, -1.0);
}

// An ibroadcast request dropped unwaited (an exception unwinding its caller) still completes:
// its destructor waits, so no rank is left in the broadcast.
TEST(mpi_communicator, a_dropped_ibroadcast_completes) {
    std::vector<double> buf(3, world()->rank() == 0 ? 4.25 : 0.0);
    { const request dropped = world()->ibroadcast(buf.data(), buf.size(), 0); }
    for (double v : buf) EXPECT_EQ(v, 4.25);
    EXPECT_EQ(world()->all_reduce_sum<std::int64_t>(1), world()->size());
}

TEST(mpi_communicator, in_place_reductions_and_gathers) {
    const int n = world()->size(), me = world()->rank();
    double v[2] = {1.0 * me, 1.0};
    world()->all_reduce_sum(v, v, 2, dtype::float64);
    EXPECT_EQ(v[1], n);
    double w[2] = {1.0, 2.0};
    world()->reduce_sum(w, w, 2, dtype::float64, 0);
    if (me == 0) {
        EXPECT_EQ(w[1], 2.0 * n);
    }
    std::vector<std::int32_t> all(static_cast<std::size_t>(n), -1);
    all[static_cast<std::size_t>(me)] = me * 3;
    world()->all_gather(&all[static_cast<std::size_t>(me)], all.data(), 1, dtype::int32);
    for (int s = 0; s < n; ++s) EXPECT_EQ(all[static_cast<std::size_t>(s)], 3 * s);
}
