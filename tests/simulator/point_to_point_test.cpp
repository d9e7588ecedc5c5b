// Nonblocking send/receive: tag matching, non-overtaking order, buffering, posting order,
// size checks, bit-exact copies.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using namespace sim_test;
namespace sim = distdl::sim;

TEST(sim_point_to_point, tags_select_the_message) {
    sim::run(2, [](const comm_ptr& world) {
        if (world->rank() == 0) {
            const double a = 1.5, b = 2.5;
            std::vector<request> reqs;
            reqs.push_back(world->isend(&a, 1, 1, 1));
            reqs.push_back(world->isend(&b, 1, 1, 2));
            world->wait_all(reqs);
        } else {
            double b = 0, a = 0;
            wait_one(world, world->irecv(&b, 1, 0, 2));  // tag 2 first, although sent second
            wait_one(world, world->irecv(&a, 1, 0, 1));
            EXPECT_EQ(a, 1.5);
            EXPECT_EQ(b, 2.5);
        }
    });
}

TEST(sim_point_to_point, sources_select_the_message) {
    sim::run(3, [](const comm_ptr& world) {
        const int me = world->rank();
        if (me != 0) {
            const int v = me * 10;
            wait_one(world, world->isend(&v, 1, 0, 0));
        } else {
            int from2 = 0, from1 = 0;
            wait_one(world, world->irecv(&from2, 1, 2, 0));
            wait_one(world, world->irecv(&from1, 1, 1, 0));
            EXPECT_EQ(from1, 10);
            EXPECT_EQ(from2, 20);
        }
    });
}

TEST(sim_point_to_point, messages_do_not_overtake_per_source_and_tag) {
    constexpr int per_sender = 200;
    sim::run(4, [](const comm_ptr& world) {
        const int me = world->rank();
        if (me != 0) {
            std::vector<std::int64_t> values(per_sender);
            std::vector<request> reqs;
            for (int i = 0; i < per_sender; ++i) {
                values[static_cast<std::size_t>(i)] = me * 100000 + i;
                reqs.push_back(world->isend(&values[static_cast<std::size_t>(i)], 1, 0, i % 3));
            }
            world->wait_all(reqs);
        } else {
            std::vector<std::int64_t> got(3 * per_sender, -1);
            std::vector<request> reqs;
            // Post per (source, tag) in order; wait for all at once.
            for (int src = 1; src < 4; ++src)
                for (int i = 0; i < per_sender; ++i)
                    reqs.push_back(world->irecv(&got[static_cast<std::size_t>((src - 1) * per_sender + i)], 1, src, i % 3));
            world->wait_all(reqs);
            for (int src = 1; src < 4; ++src)
                for (int i = 0; i < per_sender; ++i)
                    EXPECT_EQ(got[static_cast<std::size_t>((src - 1) * per_sender + i)], src * 100000 + i);
        }
    });
}

TEST(sim_point_to_point, receives_match_in_posting_order_not_waiting_order) {
    sim::run(2, [](const comm_ptr& world) {
        if (world->rank() == 0) {
            const int first = 1, second = 2;
            std::vector<request> reqs;
            reqs.push_back(world->isend(&first, 1, 1, 9));
            reqs.push_back(world->isend(&second, 1, 1, 9));
            world->wait_all(reqs);
        } else {
            int a = 0, b = 0;
            request ra = world->irecv(&a, 1, 0, 9);
            request rb = world->irecv(&b, 1, 0, 9);
            wait_one(world, std::move(rb));  // waited first, but posted second
            wait_one(world, std::move(ra));
            EXPECT_EQ(a, 1);
            EXPECT_EQ(b, 2);
        }
    });
}

TEST(sim_point_to_point, sends_are_buffered_and_never_block) {
    sim::run(2, [](const comm_ptr& world) {
        const int me = world->rank(), other = 1 - me;
        std::vector<double> buf = {me + 0.25, me + 0.5};
        // Both ranks complete their send before posting any receive: fine only if buffered.
        wait_one(world, world->isend(buf.data(), 2, other, 4));
        buf = {-1, -1};  // reusing the buffer must not change what was sent
        std::vector<double> got(2);
        wait_one(world, world->irecv(got.data(), 2, other, 4));
        EXPECT_EQ(got, (std::vector<double>{other + 0.25, other + 0.5}));
    });
}

TEST(sim_point_to_point, irecv_does_not_block_and_completes_in_wait_all) {
    sim::run(2, [](const comm_ptr& world) {
        int v = 0;
        request r;
        if (world->rank() == 1) r = world->irecv(&v, 1, 0, 0);  // posted before anything was sent
        world->barrier();
        if (world->rank() == 0) {
            v = 77;
            wait_one(world, world->isend(&v, 1, 1, 0));
        } else {
            wait_one(world, std::move(r));
            EXPECT_EQ(v, 77);
        }
    });
}

TEST(sim_point_to_point, a_rank_can_message_itself) {
    sim::run(1, [](const comm_ptr& world) {
        const float out[3] = {1, 2, 3};
        float in[3] = {};
        std::vector<request> reqs;
        reqs.push_back(world->irecv(in, 3, 0, 0));
        reqs.push_back(world->isend(out, 3, 0, 0));
        world->wait_all(reqs);
        EXPECT_EQ(std::memcmp(in, out, sizeof out), 0);
        EXPECT_TRUE(reqs.empty());
    });
}

TEST(sim_point_to_point, data_is_copied_bit_exactly) {
    sim::run(2, [](const comm_ptr& world) {
        std::vector<double> v = {-0.0, std::numeric_limits<double>::denorm_min(), std::nan("0x5a5a"),
                                 std::numeric_limits<double>::infinity(), 1.0 / 3.0};
        if (world->rank() == 0) {
            wait_one(world, world->isend(v.data(), v.size(), 1, 0));
        } else {
            std::vector<double> got(v.size(), 7.0);
            wait_one(world, world->irecv(got.data(), got.size(), 0, 0));
            EXPECT_EQ(std::memcmp(got.data(), v.data(), v.size() * sizeof(double)), 0);
        }
    });
}

TEST(sim_point_to_point, empty_messages_travel) {
    sim::run(2, [](const comm_ptr& world) {
        if (world->rank() == 0) {
            wait_one(world, world->isend(static_cast<const double*>(nullptr), 0, 1, 0));
        } else {
            wait_one(world, world->irecv(static_cast<double*>(nullptr), 0, 0, 0));
        }
    });
}

TEST(sim_point_to_point, a_size_mismatch_names_both_ranks) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            double buf[4] = {};
            if (world->rank() == 0) wait_one(world, world->isend(buf, 4, 1, 7));
            else wait_one(world, world->irecv(buf, 3, 0, 7));
        });
        FAIL() << "run did not throw";
    } catch (const sim::message_mismatch& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 1 receives 3 x float64 from rank 0 with tag 7"), std::string::npos) << what;
        EXPECT_NE(what.find("rank 0 sent 4 x float64"), std::string::npos) << what;
    }
}

TEST(sim_point_to_point, a_dtype_mismatch_is_an_error) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            if (world->rank() == 0) {
                const float f[2] = {};
                wait_one(world, world->isend(f, 2, 1, 0));
            } else {
                std::int32_t i[2];
                wait_one(world, world->irecv(i, 2, 0, 0));
            }
        });
        FAIL() << "run did not throw";
    } catch (const sim::message_mismatch& e) {
        EXPECT_NE(std::string(e.what()).find("2 x int32"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("2 x float32"), std::string::npos) << e.what();
    }
}

TEST(sim_point_to_point, foreign_requests_are_refused) {
    struct foreign_request : distdl::request_state {};
    sim::run(1, [](const comm_ptr& world) {
        std::vector<request> reqs;
        reqs.push_back(std::make_unique<foreign_request>());
        EXPECT_THROW(world->wait_all(reqs), distdl::invalid_argument);
    });
}

}  // namespace
