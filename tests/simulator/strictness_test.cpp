// Stricter than MPI at the end of a world and around sends and receives: messages never
// received, requests never waited on, a send buffer changed before its send completed, two
// pending receives into the same bytes, and calls on a world that has ended are each reported
// as what they are.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using namespace sim_test;
namespace sim = distdl::sim;

// The what() of the sim::unfinished_communication that run(n, body) throws ("" if none).
std::string unfinished_message(int n, const std::function<void(const comm_ptr&)>& body) {
    try {
        sim::run(n, body);
    } catch (const sim::unfinished_communication& e) {
        return e.what();
    }
    return "";
}

TEST(sim_strict, a_message_never_received_fails_the_run_naming_ranks_tag_and_count) {
    const auto what = unfinished_message(3, [](const comm_ptr& world) {
        if (world->rank() != 0) return;
        const double x[2] = {1, 2};
        wait_one(world, world->isend(x, 2, 2, 9));
        wait_one(world, world->isend(x, 2, 2, 9));
        wait_one(world, world->isend(x, 1, 1, 4));
    });
    expect_contains(what, {"message(s) sent and never received",
                           "2 message(s) from rank 0 to rank 2 with tag 9 on context 0", "(the first: 2 x float64)",
                           "1 message(s) from rank 0 to rank 1 with tag 4"});
}

TEST(sim_strict, a_message_left_on_a_sub_communicator_names_its_context) {
    const auto what = unfinished_message(3, [](const comm_ptr& world) {
        if (world->rank() == 0) return;
        auto sub = world->create_sub({2, 1});
        if (sub->rank() == 0) {
            const int v = 5;
            wait_one(sub, sub->isend(&v, 1, 1, 3));
        }
    });
    expect_contains(what, {"1 message(s) from rank 0 (world rank 2) to rank 1 (world rank 1) with tag 3 on context 1"});
}

TEST(sim_strict, requests_never_waited_on_fail_the_run) {
    const auto what = unfinished_message(2, [](const comm_ptr& world) {
        double x = 1;
        if (world->rank() == 0) {
            auto dropped = world->isend(&x, 1, 1, 3);  // sent, but never waited on
            wait_one(world, world->isend(&x, 1, 1, 3));
        } else {
            wait_one(world, world->irecv(&x, 1, 0, 3));
            wait_one(world, world->irecv(&x, 1, 0, 3));
            auto never = world->irecv(&x, 1, 0, 8);  // posted, never waited on
        }
    });
    expect_contains(what, {"2 request(s) never waited on",
                           "rank 0: 1 x a send of 1 x float64 to rank 1 with tag 3 on context 0",
                           "rank 1: 1 x a message from rank 0 with tag 8 on context 0"});
    EXPECT_EQ(what.find("never received"), std::string::npos) << what;
}

TEST(sim_strict, a_request_still_held_when_the_world_ends_is_reported) {
    std::vector<distdl::request> kept;
    const auto what = unfinished_message(2, [&](const comm_ptr& world) {
        if (world->rank() == 1) {
            static double x;
            kept.push_back(world->irecv(&x, 1, 0, 0));
        }
    });
    expect_contains(what, {"1 request(s) still held after the world ended"});
    kept.clear();  // destroyed after the end: nothing more to report, and no crash
}

TEST(sim_strict, an_earlier_failure_stays_the_error_of_the_world) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            if (world->rank() == 0) {
                const double x = 1;
                wait_one(world, world->isend(&x, 1, 1, 0));
            } else {
                throw std::runtime_error("rank 1 gave up");
            }
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        EXPECT_STREQ(e.what(), "rank 1: rank 1 gave up");
    }
}

TEST(sim_strict, complete_communication_passes) {
    EXPECT_NO_THROW(sim::run(4, [](const comm_ptr& world) {
        const int me = world->rank(), n = world->size();
        double out = me, in = -1;
        std::vector<distdl::request> reqs;
        reqs.push_back(world->irecv(&in, 1, (me + n - 1) % n, 1));
        reqs.push_back(world->isend(&out, 1, (me + 1) % n, 1));
        world->wait_all(reqs);
        EXPECT_EQ(in, (me + n - 1) % n);
    }));
}

TEST(sim_strict, a_send_buffer_changed_before_the_wait_is_an_error) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::vector<float> data = {1, 2, 3};
            if (world->rank() == 0) {
                auto sent = world->isend(data.data(), 3, 1, 6);
                data[1] = 7;  // too early: the send has not completed
                wait_one(world, std::move(sent));
            } else {
                wait_one(world, world->irecv(data.data(), 3, 0, 6));
            }
        });
        FAIL() << "run did not throw";
    } catch (const sim::send_buffer_modified& e) {
        expect_contains(e.what(), {"rank 0 modified the buffer of its isend", "3 x float32 to rank 1 with tag 6",
                                   "before the send completed"});
    }
}

// Two pending receives into the same bytes: under MPI the messages would land there in either
// order. The second is refused, naming both, and changes nothing: the rank goes on with a
// buffer of its own and gets both messages where they belong. A box that is one run of its
// array counts as that run.
TEST(sim_strict, a_receive_into_bytes_a_pending_receive_writes_is_refused) {
    sim::run(2, [](const comm_ptr& world) {
        const double first[4] = {1, 2, 3, 4}, second[2] = {5, 6};
        if (world->rank() == 0) {
            wait_one(world, world->isend(first, 4, 1, 5));
            wait_one(world, world->isend(second, 2, 1, 6));
            return;
        }
        double buf[4] = {}, own[2] = {};
        std::vector<distdl::request> posted;
        posted.push_back(world->irecv(buf, 4, 0, 5));
        try {
            auto refused = world->irecv(buf + 3, 2, 0, 6);
            ADD_FAILURE() << "a receive into buf[3..4] while buf[0..3] is pending was not refused";
        } catch (const sim::overlapping_receives& e) {
            expect_contains(e.what(), {"rank 1 posts a receive of 2 x float64 from rank 0 with tag 6",
                                       "into bytes that its pending receive of a message from rank 0 with tag 5 on "
                                       "context 0",
                                       "complete the first receive (wait_all) before posting another"});
        }
        const distdl::array_box row{{2, 2}, {1, 0}, {1, 2}};  // buf[2..3] as a box: one run
        EXPECT_THROW(world->irecv_box(buf, row, distdl::dtype::float64, 0, 6), sim::overlapping_receives);
        posted.push_back(world->irecv(own, 2, 0, 6));
        world->wait_all(posted);
        EXPECT_EQ(std::vector<double>(buf, buf + 4), (std::vector<double>{1, 2, 3, 4}));
        EXPECT_EQ(std::vector<double>(own, own + 2), (std::vector<double>{5, 6}));
    });
}

// Left uncaught, it ends the run as itself (as the simulator's other findings), not wrapped
// in sim::rank_failure.
TEST(sim_strict, an_overlapping_receive_left_uncaught_ends_the_run_as_itself) {
    EXPECT_THROW(sim::run(1,
                          [](const comm_ptr& world) {
                              double buf[2];
                              auto first = world->irecv(buf, 2, 0, 1);
                              auto second = world->irecv(buf + 1, 1, 0, 2);
                          }),
                 sim::overlapping_receives);
}

// Neighbouring buffers may be pending at once, a completed receive's bytes may be received into
// again, and so may a dropped one's (which the end of the world then reports as dropped).
TEST(sim_strict, receives_into_neighbouring_or_freed_bytes_are_fine) {
    const auto what = unfinished_message(2, [](const comm_ptr& world) {
        double x[4] = {1, 2, 3, 4};
        if (world->rank() == 0) {
            for (int tag = 0; tag < 3; ++tag) wait_one(world, world->isend(x, 2, 1, tag));
            return;
        }
        std::vector<distdl::request> both;
        both.push_back(world->irecv(x, 2, 0, 0));
        both.push_back(world->irecv(x + 2, 2, 0, 1));
        world->wait_all(both);
        { auto dropped = world->irecv(x, 4, 0, 7); }
        wait_one(world, world->irecv(x + 1, 2, 0, 2));
        EXPECT_EQ(std::vector<double>(x, x + 4), (std::vector<double>{1, 1, 2, 2}));
    });
    expect_contains(what, {"1 request(s) never waited on", "rank 1: 1 x a message from rank 0 with tag 7"});
}

// An ibroadcast's data moves at its call, but the request is MPI's until its wait: one never
// waited on is reported, and so is a root's buffer written before the wait (MPI may still be
// reading it). (Another member's buffer is not checked.)
TEST(sim_strict, ibroadcast_requests_are_waited_and_the_root_buffer_left_alone_until_then) {
    const auto broadcast_then = [](int writer) {
        return [writer](const comm_ptr& world) {
            std::vector<double> data(4, world->rank() == 0 ? 2.5 : 0.0);
            auto pending = world->ibroadcast(data.data(), data.size(), 0);
            if (world->rank() == writer) data[2] = -1.0;
            wait_one(world, std::move(pending));
        };
    };
    EXPECT_NO_THROW(sim::run(3, broadcast_then(-1)));
    try {
        sim::run(3, broadcast_then(0));
        FAIL() << "run did not throw (the root wrote into its buffer)";
    } catch (const sim::send_buffer_modified& e) {
        expect_contains(e.what(), {"rank 0 modified the buffer of its ibroadcast of 4 x float64 from rank 0",
                                   "before the broadcast completed in wait_all"});
    }
    const auto what = unfinished_message(2, [](const comm_ptr& world) {
        double x = 1;
        auto dropped = world->ibroadcast(&x, 1, 0);  // the data arrives, but the request is never waited on
    });
    expect_contains(what, {"2 request(s) never waited on", "rank 1: 1 x ibroadcast of 1 x float64 from rank 0"});
}

// Each rank communicates from its own thread (MPI_THREAD_FUNNELED on Open MPI): a thread the
// body starts, or another rank, using its communicator or its requests is named as such,
// instead of a deadlock or a message left over that blames the wrong rank.
TEST(sim_strict, a_rank_communicates_from_its_own_thread_only) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::exception_ptr failed;
            std::thread helper([&] {
                try {
                    world->barrier();
                } catch (...) {
                    failed = std::current_exception();
                }
            });
            helper.join();
            if (failed) std::rethrow_exception(failed);
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        expect_contains(e.what(), {"the communicator of rank", "used from a thread that is no rank of its world",
                                   "each rank communicates from its own thread only"});
    }
    std::vector<distdl::request> made(1);
    try {
        sim::run(2, [&](const comm_ptr& world) {
            static double x = 0;
            if (world->rank() == 0) made[0] = world->isend(&x, 1, 1, 0);
            world->barrier();
            if (world->rank() == 1) world->wait_all(made);  // rank 0's request
        });
        FAIL() << "run did not throw";
    } catch (const sim::rank_failure& e) {
        expect_contains(e.what(), {"rank 1: sim: rank 1 waits on a request of rank 0"});
    }
    made.clear();
}

// A call refused for its thread leaves no trace: the rank's own calls after it still meet the
// others' (a collective's or a sub-communicator's number was once taken before the refusal).
TEST(sim_strict, a_call_refused_for_its_thread_changes_nothing) {
    EXPECT_NO_THROW(sim::run(2, [](const comm_ptr& world) {
        if (world->rank() == 0) {
            std::thread helper([&] {
                double x = 1;
                EXPECT_THROW(world->broadcast(&x, 1, 0), sim::wrong_thread);
                EXPECT_THROW(world->create_sub({0, 1}), sim::wrong_thread);
            });
            helper.join();
        }
        double x = world->rank() == 0 ? 7 : 0;
        world->broadcast(&x, 1, 0);
        EXPECT_EQ(x, 7);
        const auto sub = world->create_sub({0, 1});
        sub->barrier();
    }));
}

TEST(sim_strict, a_send_buffer_changed_after_the_wait_is_fine) {
    EXPECT_NO_THROW(sim::run(2, [](const comm_ptr& world) {
        std::vector<double> data = {1, 2};
        if (world->rank() == 0) {
            wait_one(world, world->isend(data.data(), 2, 1, 0));
            data[0] = 5;
        } else {
            wait_one(world, world->irecv(data.data(), 2, 0, 0));
            EXPECT_EQ(data[0], 1);
        }
    }));
}

TEST(sim_strict, a_call_on_a_world_that_has_ended_says_so) {
    comm_ptr kept;
    sim::run(2, [&](const comm_ptr& world) {
        if (world->rank() == 0) kept = world;
    });
    const std::vector<std::function<void()>> calls = {
        [&] { kept->barrier(); },
        [&] { kept->all_reduce_sum(1.0); },
        [&] {
            double x = 0;
            wait_one(kept, kept->irecv(&x, 1, 1, 0));
        },
        [&] {
            const double x = 0;
            auto r = kept->isend(&x, 1, 1, 0);
        },
        [&] { kept->create_sub({0, 1}); },
    };
    for (const auto& call : calls) {
        try {
            call();
            FAIL() << "a call on an ended world did not throw";
        } catch (const sim::world_ended& e) {
            expect_contains(e.what(), {"world of 2 ranks has ended"});
        }
    }
}

}  // namespace
