// Deferred sends: a large send whose receive is not posted yet keeps its data in the send
// buffer; the sender moves it straight into the receive buffer once that is posted, whenever
// the sender is in a blocking call (a wait_all, a collective, create_sub), and into pooled
// storage only at the end of its wait_all if the receive is still not posted. The data must
// arrive exactly, no wait may block on a send, and the send-buffer check must still catch a
// buffer changed before the send completed, whichever call moves the data.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "simulator/errors.hpp"
#include "simulator/run.hpp"
#include "simulator/sim_communicator.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::dtype;
using distdl::request;
using sim_test::comm_ptr;
using sim_test::same_bits;
namespace sim = distdl::sim;

constexpr std::size_t large = 40'000;  // 320 KB of f64: deferred when its receive is not posted

std::vector<double> pattern(int seed) {
    std::vector<double> v(large);
    std::iota(v.begin(), v.end(), 0.5 + seed * 1e6);
    return v;
}

// How the world's deferred messages moved (read after sim::run returned: every rank is done).
sim::deferred_moves moves_of(const comm_ptr& world) {
    return dynamic_cast<const sim::sim_communicator&>(*world).deferred_moves_so_far();
}

// Long enough for the other rank to be blocked in its collective by then (only the check
// that nothing went through pooled storage relies on it; correctness does not).
void let_the_other_rank_block() { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }

// Rank 0 tells rank 1 that its large isend is made; rank 1 posts the receive only after
// hearing it (so the send is deferred) and after letting rank 0 block.
void tell_sent(const comm_ptr& world) {
    int token = 1;
    sim_test::wait_one(world, world->isend(&token, 1, dtype::int32, 1, 99));
}
void hear_sent_then_let_block(const comm_ptr& world) {
    int token = 0;
    sim_test::wait_one(world, world->irecv(&token, 1, dtype::int32, 0, 99));
    let_the_other_rank_block();
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

TEST(sim_deferred_send, a_rank_in_a_collective_moves_it_straight_into_a_receive_posted_meanwhile) {
    // Rank 1 waits for the data before it joins the barrier, so rank 0 must serve the send
    // from inside the barrier, and the data must not go through pooled storage on the way.
    comm_ptr kept;
    sim::run(2, [&](const comm_ptr& world) {
        if (world->rank() == 0) {
            kept = world;
            const auto out = pattern(11);
            auto sent = world->isend(out.data(), large, dtype::float64, 1, 3);
            tell_sent(world);
            world->barrier();
            sim_test::wait_one(world, std::move(sent));
        } else {
            hear_sent_then_let_block(world);
            std::vector<double> in(large);
            sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, 0, 3));
            EXPECT_TRUE(same_bits(in, pattern(11)));
            world->barrier();
        }
    });
    const auto moves = moves_of(kept);
    EXPECT_EQ(moves.straight, 1u);
    EXPECT_EQ(moves.buffered, 0u);
}

TEST(sim_deferred_send, a_rank_in_create_sub_serves_its_deferred_sends) {
    comm_ptr kept;
    sim::run(2, [&](const comm_ptr& world) {
        if (world->rank() == 0) {
            kept = world;
            const auto out = pattern(12);
            auto sent = world->isend(out.data(), large, dtype::float64, 1, 3);
            tell_sent(world);
            auto pair = world->create_sub({0, 1});
            pair->barrier();
            sim_test::wait_one(world, std::move(sent));
        } else {
            hear_sent_then_let_block(world);
            std::vector<double> in(large);
            sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, 0, 3));
            EXPECT_TRUE(same_bits(in, pattern(12)));
            auto pair = world->create_sub({0, 1});
            pair->barrier();
        }
    });
    const auto moves = moves_of(kept);
    EXPECT_EQ(moves.straight, 1u);
    EXPECT_EQ(moves.buffered, 0u);
}

TEST(sim_deferred_send, a_send_still_deferred_after_a_collective_moves_straight_in_its_wait) {
    // Every isend comes before the collective and every receive after it: all are still
    // deferred when the collective (a large all-reduce, moved in shares) ends, and each moves
    // in its sender's wait_all, straight into the receive: the wait also needs a token that
    // the receiver sends only after posting it (as box_exchange's status words).
    comm_ptr kept;
    constexpr int n = 3;
    sim::run(n, [&](const comm_ptr& world) {
        const int me = world->rank();
        if (me == 0) kept = world;
        const auto out = pattern(20 + me);
        std::vector<request> reqs;
        reqs.push_back(world->isend(out.data(), large, dtype::float64, (me + 1) % n, 8));
        std::vector<double> ones(large, 1.0), sum(large);
        world->all_reduce_sum(ones.data(), sum.data(), large, dtype::float64);
        EXPECT_TRUE(same_bits(sum, std::vector<double>(large, 3.0)));
        std::vector<double> in(large);
        int token_out = me, token_in = -1;
        reqs.push_back(world->irecv(in.data(), large, dtype::float64, (me + n - 1) % n, 8));
        reqs.push_back(world->isend(&token_out, 1, dtype::int32, (me + n - 1) % n, 9));
        reqs.push_back(world->irecv(&token_in, 1, dtype::int32, (me + 1) % n, 9));
        world->wait_all(reqs);
        EXPECT_EQ(token_in, (me + 1) % n);
        EXPECT_TRUE(same_bits(in, pattern(20 + (me + n - 1) % n)));
    });
    const auto moves = moves_of(kept);
    EXPECT_EQ(moves.straight, 3u);
    EXPECT_EQ(moves.buffered, 0u);
}

TEST(sim_deferred_send, a_large_all_reduce_serves_a_send_whose_receiver_waits_before_joining) {
    comm_ptr kept;
    sim::run(2, [&](const comm_ptr& world) {
        std::vector<double> ones(large, 1.0), sum(large);
        if (world->rank() == 0) {
            kept = world;
            const auto out = pattern(13);
            auto sent = world->isend(out.data(), large, dtype::float64, 1, 3);
            tell_sent(world);
            world->all_reduce_sum(ones.data(), sum.data(), large, dtype::float64);
            sim_test::wait_one(world, std::move(sent));
        } else {
            hear_sent_then_let_block(world);
            std::vector<double> in(large);
            sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, 0, 3));
            EXPECT_TRUE(same_bits(in, pattern(13)));
            world->all_reduce_sum(ones.data(), sum.data(), large, dtype::float64);
        }
        EXPECT_TRUE(same_bits(sum, std::vector<double>(large, 2.0)));
    });
    const auto moves = moves_of(kept);
    EXPECT_EQ(moves.straight, 1u);
    EXPECT_EQ(moves.buffered, 0u);
}

TEST(sim_deferred_send, sends_served_while_collectives_run_arrive_exactly) {
    // Receives posted before or after the collective, which is by turns a small all-reduce
    // (the last arrival moves it while the others wait, some of them serving sends) and a
    // large one (every member moves its share): the data must arrive exactly every time.
    constexpr int n = 3, rounds = 12;
    sim::run(n, [](const comm_ptr& world) {
        const int me = world->rank(), next = (me + 1) % n, prev = (me + n - 1) % n;
        std::vector<double> in(large), ones(large, 1.0), sum(large);
        for (int round = 0; round < rounds; ++round) {
            const auto out = pattern(100 * round + me);
            std::vector<request> reqs;
            const bool posted_first = (round + me) % 3 != 0;
            if (posted_first) reqs.push_back(world->irecv(in.data(), large, dtype::float64, prev, round));
            reqs.push_back(world->isend(out.data(), large, dtype::float64, next, round));
            const std::size_t count = round % 2 == 0 ? 1 : large;
            world->all_reduce_sum(ones.data(), sum.data(), count, dtype::float64);
            if (!posted_first) reqs.push_back(world->irecv(in.data(), large, dtype::float64, prev, round));
            world->wait_all(reqs);
            EXPECT_TRUE(same_bits(in, pattern(100 * round + prev))) << "round " << round;
            EXPECT_EQ(sum[count - 1], 3.0) << "round " << round;
        }
    });
}

TEST(sim_deferred_send, a_wait_buffers_only_its_own_deferred_sends) {
    // The wait on the first send alone must free its buffer (pooled storage: its receive is
    // posted only after the barrier); the second send is not waited on there and stays
    // deferred until its receive is posted.
    comm_ptr kept;
    sim::run(2, [&](const comm_ptr& world) {
        if (world->rank() == 0) {
            kept = world;
            const auto first = pattern(16), second = pattern(17);
            auto sent_first = world->isend(first.data(), large, dtype::float64, 1, 1);
            auto sent_second = world->isend(second.data(), large, dtype::float64, 1, 2);
            sim_test::wait_one(world, std::move(sent_first));
            world->barrier();
            int token = 0;
            std::vector<request> reqs;
            reqs.push_back(std::move(sent_second));
            reqs.push_back(world->irecv(&token, 1, dtype::int32, 1, 3));
            world->wait_all(reqs);
        } else {
            world->barrier();
            std::vector<double> first(large), second(large);
            int token = 1;
            std::vector<request> reqs;
            reqs.push_back(world->irecv(first.data(), large, dtype::float64, 0, 1));
            reqs.push_back(world->irecv(second.data(), large, dtype::float64, 0, 2));
            reqs.push_back(world->isend(&token, 1, dtype::int32, 0, 3));
            world->wait_all(reqs);
            EXPECT_TRUE(same_bits(first, pattern(16)));
            EXPECT_TRUE(same_bits(second, pattern(17)));
        }
    });
    const auto moves = moves_of(kept);
    EXPECT_EQ(moves.straight, 1u);
    EXPECT_EQ(moves.buffered, 1u);
}

TEST(sim_deferred_send, a_receive_dropped_while_its_sender_is_in_a_collective_is_reported) {
    // The receive is posted (the sender in the barrier is woken to serve it) and dropped at
    // once: the drop waits for a copy under way, and the world ends with the message
    // unreceived and the request never waited on.
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::vector<double> data = pattern(18);
            if (world->rank() == 0) {
                auto sent = world->isend(data.data(), large, dtype::float64, 1, 6);
                tell_sent(world);
                world->barrier();
                sim_test::wait_one(world, std::move(sent));
            } else {
                hear_sent_then_let_block(world);
                { auto dropped = world->irecv(data.data(), large, dtype::float64, 0, 6); }
                world->barrier();
            }
        });
        FAIL() << "expected sim::unfinished_communication";
    } catch (const sim::unfinished_communication& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("1 message(s) sent and never received"), std::string::npos) << what;
        EXPECT_NE(what.find("1 request(s) never waited on"), std::string::npos) << what;
    }
}

TEST(sim_deferred_send, an_abort_wakes_a_rank_that_serves_deferred_sends_in_a_collective) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            const auto out = pattern(14);
            if (world->rank() == 0) {
                auto sent = world->isend(out.data(), large, dtype::float64, 1, 3);
                world->barrier();
                sim_test::wait_one(world, std::move(sent));
            } else {
                let_the_other_rank_block();
                throw std::runtime_error("rank 1 gives up");
            }
        });
        FAIL() << "expected sim::rank_failure";
    } catch (const sim::rank_failure& e) {
        EXPECT_NE(std::string(e.what()).find("rank 1 gives up"), std::string::npos) << e.what();
    }
}

TEST(sim_deferred_send, a_collective_that_writes_a_deferred_send_buffer_is_caught) {
    // The all-reduce writes its sum over the buffer of a send not completed yet (erroneous under
    // MPI): the data leaves the buffer before the collective starts (the receiver gets what was
    // sent), and the send's wait finds the buffer changed.
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::vector<double> data = pattern(15);
            if (world->rank() == 0) {
                auto sent = world->isend(data.data(), large, dtype::float64, 1, 4);
                world->all_reduce_sum(data.data(), data.data(), large, dtype::float64);
                sim_test::wait_one(world, std::move(sent));
            } else {
                world->all_reduce_sum(data.data(), data.data(), large, dtype::float64);
                std::vector<double> in(large);
                sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, 0, 4));
                EXPECT_TRUE(same_bits(in, pattern(15)));
            }
        });
        FAIL() << "expected sim::send_buffer_modified";
    } catch (const sim::send_buffer_modified& e) {
        EXPECT_NE(std::string(e.what()).find("rank 0 modified the buffer of its isend"), std::string::npos) << e.what();
    }
}

// The common mistake "wait for the receives, reuse the send buffer, then wait for the sends":
// the data left the buffer in the first wait (the peer had posted its receive), but under MPI a
// large send may still read its buffer until its own wait completes.
TEST(sim_deferred_send, a_buffer_changed_after_its_data_moved_but_before_its_wait_is_caught) {
    for (const bool modify : {false, true}) {
        const auto body = [modify](const comm_ptr& world) {
            std::vector<double> out = pattern(20 + world->rank()), in(large);
            const int peer = 1 - world->rank();
            if (world->rank() == 0) {
                auto sent = world->isend(out.data(), large, dtype::float64, peer, 0);  // deferred: not posted yet
                world->barrier();
                sim_test::wait_one(world, world->irecv(in.data(), large, dtype::float64, peer, 1));
                if (modify) out[7] = -1.0;  // the data has moved, the send is not complete
                sim_test::wait_one(world, std::move(sent));
            } else {
                world->barrier();
                std::vector<request> reqs;
                reqs.push_back(world->irecv(in.data(), large, dtype::float64, peer, 0));  // before its own send
                reqs.push_back(world->isend(out.data(), large, dtype::float64, peer, 1));
                world->wait_all(reqs);
                EXPECT_TRUE(same_bits(in, pattern(20)));
            }
        };
        if (!modify) {
            sim::run(2, body);
            continue;
        }
        try {
            sim::run(2, body);
            FAIL() << "expected sim::send_buffer_modified";
        } catch (const sim::send_buffer_modified& e) {
            EXPECT_NE(std::string(e.what()).find("rank 0 modified the buffer of its isend"), std::string::npos)
                << e.what();
        }
    }
}

TEST(sim_deferred_send, a_buffer_changed_before_a_collective_moves_it_is_caught) {
    EXPECT_THROW(sim::run(2,
                          [](const comm_ptr& world) {
                              std::vector<double> data = pattern(2);
                              if (world->rank() == 0) {
                                  auto sent = world->isend(data.data(), large, dtype::float64, 1, 4);
                                  data[0] = -3.0;
                                  world->barrier();  // the receive is posted after it: the wait moves the data
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
