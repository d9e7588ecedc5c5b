// Deferred sends: a large send whose receive is not posted yet keeps its data in the send
// buffer until the sender's next blocking call moves it (straight into the receive buffer if
// that is posted by then, else into pooled storage). The data must arrive exactly, no wait may
// block on a send, and the send-buffer check must still catch a buffer changed before the send
// completed, whichever call moves the data.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "simulator/errors.hpp"
#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::dtype;
using distdl::request;
using sim_test::comm_ptr;
namespace sim = distdl::sim;

constexpr std::size_t large = 40'000;  // 320 KB of f64: deferred when its receive is not posted

std::vector<double> pattern(int seed) {
    std::vector<double> v(large);
    std::iota(v.begin(), v.end(), 0.5 + seed * 1e6);
    return v;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(sim_deferred_send, moves_into_a_receive_posted_while_the_sender_waits) {
    // Rank 1 posts its receive only after a token that rank 0 sends after the large isend, so
    // the large send is deferred; rank 0's wait also needs rank 1's reply, sent after its post.
    sim::run(2, [](const comm_ptr& world) {
        std::vector<request> reqs;
        if (world->rank() == 0) {
            const auto out = pattern(7);
            int token = 1, reply = 0;
            reqs.push_back(world->isend(out.data(), large, dtype::float64, 1, 5));
            reqs.push_back(world->isend(&token, 1, dtype::int32, 1, 6));
            reqs.push_back(world->irecv(&reply, 1, dtype::int32, 1, 7));
            world->wait_all(reqs);
            EXPECT_EQ(reply, 2);
        } else {
            std::vector<double> in(large, -1.0);
            int token = 0, reply = 2;
            sim_test::wait_one(world, world->irecv(&token, 1, dtype::int32, 0, 6));
            reqs.push_back(world->irecv(in.data(), large, dtype::float64, 0, 5));
            reqs.push_back(world->isend(&reply, 1, dtype::int32, 0, 7));
            world->wait_all(reqs);
            EXPECT_TRUE(same_bits(in, pattern(7)));
        }
    });
}

TEST(sim_deferred_send, a_wait_on_the_send_alone_does_not_block_on_the_receiver) {
    // The receive is posted only after a barrier that the sender reaches after its wait: the
    // wait must complete (the data goes to pooled storage), as with any buffered send.
    sim::run(3, [](const comm_ptr& world) {
        if (world->rank() == 0) {
            const auto out = pattern(3);
            sim_test::wait_one(world, world->isend(out.data(), large, dtype::float64, 2, 1));
            world->barrier();
        } else if (world->rank() == 1) {
            // A deferred send left behind by a collective: the barrier moves it first.
            const auto out = pattern(4);
            auto sent = world->isend(out.data(), large, dtype::float64, 2, 2);
            world->barrier();
            sim_test::wait_one(world, std::move(sent));
        } else {
            world->barrier();
            std::vector<double> from0(large), from1(large);
            std::vector<request> reqs;
            reqs.push_back(world->irecv(from1.data(), large, dtype::float64, 1, 2));
            reqs.push_back(world->irecv(from0.data(), large, dtype::float64, 0, 1));
            world->wait_all(reqs);
            EXPECT_TRUE(same_bits(from0, pattern(3)));
            EXPECT_TRUE(same_bits(from1, pattern(4)));
        }
    });
}

TEST(sim_deferred_send, a_buffer_changed_before_the_wait_is_caught) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::vector<double> data = pattern(1);
            if (world->rank() == 0) {
                auto sent = world->isend(data.data(), large, dtype::float64, 1, 4);
                data[large / 2] += 1.0;  // before the send completed
                sim_test::wait_one(world, std::move(sent));
                world->barrier();
            } else {
                world->barrier();
                sim_test::wait_one(world, world->irecv(data.data(), large, dtype::float64, 0, 4));
            }
        });
        FAIL() << "expected sim::send_buffer_modified";
    } catch (const sim::send_buffer_modified& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 0 modified the buffer of its isend"), std::string::npos) << what;
        EXPECT_NE(what.find("40000 x float64 to rank 1 with tag 4"), std::string::npos) << what;
    }
}

TEST(sim_deferred_send, a_buffer_changed_before_a_collective_moves_it_is_caught) {
    EXPECT_THROW(sim::run(2,
                          [](const comm_ptr& world) {
                              std::vector<double> data = pattern(2);
                              if (world->rank() == 0) {
                                  auto sent = world->isend(data.data(), large, dtype::float64, 1, 4);
                                  data[0] = -3.0;
                                  world->barrier();  // moves the deferred data: the change shows
                                  sim_test::wait_one(world, std::move(sent));
                              } else {
                                  world->barrier();
                                  sim_test::wait_one(world, world->irecv(data.data(), large, dtype::float64, 0, 4));
                              }
                          }),
                 sim::send_buffer_modified);
}

TEST(sim_deferred_send, a_dropped_deferred_send_still_arrives_and_is_reported) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            if (world->rank() == 0) {
                const auto out = pattern(5);
                { auto dropped = world->isend(out.data(), large, dtype::float64, 1, 9); }
                world->barrier();
            } else {
                world->barrier();
                std::vector<double> in(large);
                sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, 0, 9));
                EXPECT_TRUE(same_bits(in, pattern(5)));
            }
        });
        FAIL() << "expected sim::unfinished_communication";
    } catch (const sim::unfinished_communication& e) {
        EXPECT_NE(std::string(e.what()).find("1 request(s) never waited on"), std::string::npos) << e.what();
    }
}

}  // namespace
