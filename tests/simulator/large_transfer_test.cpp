// Large transfers take the simulator's fast paths: collectives whose members move their own
// share in parallel, and messages copied straight into an already posted receive or through
// reused storage. The results must equal the serial definitions bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "simulator/errors.hpp"
#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::dtype;
using sim_test::comm_ptr;
using sim_test::contribution;
using sim_test::rank_order_sum;
using sim_test::same_bits;
namespace sim = distdl::sim;

constexpr std::size_t large = 40'000;  // 320 KB of f64: above the parallel threshold

TEST(sim_large_transfer, broadcast_reduce_and_all_reduce_match_the_serial_fold) {
    for (int n : {2, 3, 5}) {
        const auto expected = rank_order_sum<double>(n, large);
        sim::run(n, [&](const comm_ptr& world) {
            const int me = world->rank();
            for (int iteration = 0; iteration < 2; ++iteration) {
                std::vector<double> buf = me == 1 ? contribution<double>(1, large) : std::vector<double>(large, -1.0);
                world->broadcast(buf.data(), buf.size(), 1);
                EXPECT_TRUE(same_bits(buf, contribution<double>(1, large))) << "broadcast on rank " << me;

                const auto mine = contribution<double>(me, large);
                std::vector<double> all(large, -1.0), at_root(large, -1.0);
                world->all_reduce_sum(mine.data(), all.data(), large, dtype::float64);
                EXPECT_TRUE(same_bits(all, expected)) << "all_reduce_sum on rank " << me;
                const int root = n - 1;
                world->reduce_sum(mine.data(), me == root ? at_root.data() : nullptr, large, dtype::float64, root);
                if (me == root) EXPECT_TRUE(same_bits(at_root, expected)) << "reduce_sum at root";
                else EXPECT_EQ(at_root[0], -1.0);

                // In place: the receive buffer is the member's own send buffer.
                std::vector<double> in_place = contribution<double>(me, large);
                world->all_reduce_sum(in_place.data(), in_place.data(), large, dtype::float64);
                EXPECT_TRUE(same_bits(in_place, expected)) << "in-place all_reduce_sum on rank " << me;
            }
        });
    }
}

TEST(sim_large_transfer, messages_arrive_exactly_whether_or_not_the_receive_was_posted_first) {
    sim::run(2, [](const comm_ptr& world) {
        const int me = world->rank(), peer = 1 - me;
        for (int iteration = 0; iteration < 3; ++iteration) {
            const auto out = contribution<double>(10 * iteration + me, large);
            std::vector<double> in(large, -1.0);
            std::vector<distdl::request> reqs;
            // Iteration 0: both post the receive before a barrier, so the send finds it posted.
            // Iteration 1: both send before a barrier, so the message waits in storage.
            if (iteration == 0) {
                reqs.push_back(world->irecv(in.data(), large, dtype::float64, peer, 7));
                world->barrier();
                reqs.push_back(world->isend(out.data(), large, dtype::float64, peer, 7));
            } else if (iteration == 1) {
                reqs.push_back(world->isend(out.data(), large, dtype::float64, peer, 7));
                world->barrier();
                reqs.push_back(world->irecv(in.data(), large, dtype::float64, peer, 7));
            } else {
                reqs.push_back(world->isend(out.data(), large, dtype::float64, peer, 7));
                reqs.push_back(world->irecv(in.data(), large, dtype::float64, peer, 7));
            }
            world->wait_all(reqs);
            EXPECT_TRUE(same_bits(in, contribution<double>(10 * iteration + peer, large))) << "iteration " << iteration;
        }
    });
}

TEST(sim_large_transfer, a_posted_receive_of_another_size_is_still_a_mismatch) {
    EXPECT_THROW(sim::run(2,
                          [](const comm_ptr& world) {
                              std::vector<double> buf(large, 1.0);
                              if (world->rank() == 1) {
                                  auto r = world->irecv(buf.data(), large - 1, dtype::float64, 0, 3);
                                  world->barrier();
                                  sim_test::wait_one(world, std::move(r));
                              } else {
                                  world->barrier();
                                  sim_test::wait_one(world, world->isend(buf.data(), large, dtype::float64, 1, 3));
                              }
                          }),
                 sim::message_mismatch);
}

}  // namespace
