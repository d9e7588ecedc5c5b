// On the simulator, the box-exchange engine agrees on a call's status once every worker has
// posted its receives and before any worker sends (core/detail/box_exchange.hpp), so no large
// message of Repartition or HaloExchange finds its receive unposted: the simulator defers none
// (a deferred message's send buffer is read twice: for its fingerprint at isend, then as it
// moves). Whatever the scheduling of the threads, the count of deferred moves stays zero, and
// the data still arrive bit-exact.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <numeric>

#include "core/halo_exchange.hpp"
#include "core/repartition.hpp"
#include "simulator/run.hpp"
#include "simulator/sim_communicator.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace {

using distdl::communicator;
using distdl::shape_t;
using distdl::tensor;
namespace sim = distdl::sim;
namespace testing = distdl::testing;

// How the world's deferred messages moved (read once sim::run returned: every rank is done).
std::size_t deferred_moves(const std::shared_ptr<communicator>& world) {
    const auto moves = dynamic_cast<const sim::sim_communicator&>(*world).deferred_moves_so_far();
    return moves.straight + moves.buffered;
}

// A piece whose elements differ from every other worker's.
tensor<double> distinct_piece(const shape_t& shape, int rank) {
    tensor<double> x(shape);
    std::iota(x.begin(), x.end(), 0.5 + 1e8 * rank);
    return x;
}

bool same_bits(const tensor<double>& a, const tensor<double>& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(large_exchanges_on_the_simulator, repartition_defers_no_message) {
    for (const std::size_t workers : {4, 16}) {
        // [1, P] -> [P, 1] of an n x n tensor: boxes of (n/P)^2 doubles, 128 KiB (deferrable).
        const std::size_t n = 128 * workers;
        std::shared_ptr<communicator> kept;
        sim::run(static_cast<int>(workers), [&](const std::shared_ptr<communicator>& world) {
            const auto all = testing::rank_range(0, world->size());
            const auto P_x = testing::make_partition(world, all, {1, workers});
            const auto P_y = testing::make_partition(world, all, {workers, 1});
            distdl::repartition<double> R(P_x, P_y, {.global_shape = {n, n}});
            const auto x = distinct_piece({n, n / workers}, world->rank());
            tensor<double> y, dx;
            for (int call = 0; call < 3; ++call) {
                R.forward(x, y);
                R.adjoint(y, dx);
                EXPECT_TRUE(same_bits(dx, x)) << "rank " << world->rank() << ", call " << call;
            }
            if (world->rank() == 0) kept = world;
        });
        EXPECT_EQ(deferred_moves(kept), 0u) << workers << " workers";
    }
}

TEST(large_exchanges_on_the_simulator, halo_exchange_defers_no_message) {
    for (const std::size_t workers : {4, 16}) {
        // Split along the rows of 8192-element rows; a kernel of 5 rows: halos of two rows,
        // 128 KiB (deferrable).
        const shape_t global{16 * workers, 8192};
        const distdl::kernel_geometry geometry{{5, 1}, {1, 1}, {2, 0}, {1, 1}};
        std::shared_ptr<communicator> kept;
        sim::run(static_cast<int>(workers), [&](const std::shared_ptr<communicator>& world) {
            const auto P_x = testing::make_partition(world, testing::rank_range(0, world->size()), {workers, 1});
            distdl::halo_exchange<double> H(P_x, global, geometry);
            const auto x = distinct_piece({16, 8192}, world->rank());
            tensor<double> window, dx;
            for (int call = 0; call < 3; ++call) {
                H.forward(x, window);
                // The window is x with two rows of each neighbour (or of zero padding) around it.
                ASSERT_EQ(window.shape()[0], 20u);
                EXPECT_EQ(std::memcmp(window.data() + 2 * 8192, x.data(), x.size() * sizeof(double)), 0);
                H.adjoint(window, dx);
            }
            if (world->rank() == 0) kept = world;
        });
        EXPECT_EQ(deferred_moves(kept), 0u) << workers << " workers";
    }
}

}  // namespace
