// Deadlock detection: every program that cannot progress ends promptly with sim::deadlock
// naming what each rank waits for; programs that can progress are never reported.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using namespace sim_test;
namespace sim = distdl::sim;

// Runs sim::run(n, body) on a helper thread and returns the deadlock message. If the run does
// not finish within the guard the test binary stops (a hung world cannot be cancelled), and a
// run that does not end in sim::deadlock fails the test.
std::string deadlock_message(int n, std::function<void(const comm_ptr&)> body, double* seconds = nullptr) {
    auto task = std::make_shared<std::packaged_task<std::string()>>([n, body] {
        try {
            sim::run(n, body);
        } catch (const sim::deadlock& e) {
            return std::string(e.what());
        }
        return std::string("no deadlock reported");
    });
    auto result = task->get_future();
    const auto start = std::chrono::steady_clock::now();
    std::thread runner([task] { (*task)(); });
    if (result.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
        std::fprintf(stderr, "deadlock_test: a deadlocked world was not detected within 20 s\n");
        std::abort();
    }
    runner.join();
    if (seconds != nullptr) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result.get();  // rethrows anything other than sim::deadlock
}

TEST(sim_deadlock, a_receive_from_a_finished_rank_is_reported_within_a_second) {
    double seconds = 0;
    const auto what = deadlock_message(
        2,
        [](const comm_ptr& world) {
            if (world->rank() == 0) {
                double x;
                wait_one(world, world->irecv(&x, 1, 1, 7));
            }
        },
        &seconds);
    expect_contains(what, {"deadlock", "rank 0 waits in wait_all for a message from rank 1 with tag 7 on context 0",
                           "rank 1 has finished"});
    EXPECT_LT(seconds, 1.0);
}

// A wait on many receives is described by its first few and a count: a report stays readable.
TEST(sim_deadlock, a_wait_on_many_receives_is_described_briefly) {
    const auto what = deadlock_message(2, [](const comm_ptr& world) {
        if (world->rank() == 1) return;
        std::vector<double> x(20);
        std::vector<distdl::request> never;
        for (int tag = 0; tag < 20; ++tag) never.push_back(world->irecv(&x[std::size_t(tag)], 1, 1, tag));
        world->wait_all(never);
    });
    expect_contains(what, {"rank 0 waits in wait_all for a message from rank 1 with tag 0", "with tag 7 on context 0",
                           "and 12 more receives"});
    EXPECT_EQ(what.find("with tag 8 "), std::string::npos) << what;
}

TEST(sim_deadlock, two_ranks_receiving_first) {
    const auto what = deadlock_message(2, [](const comm_ptr& world) {
        int x = 0;
        const int other = 1 - world->rank();
        wait_one(world, world->irecv(&x, 1, other, 3));
        wait_one(world, world->isend(&x, 1, other, 3));
    });
    expect_contains(what, {"(all 2 ranks blocked)", "rank 0 waits in wait_all for a message from rank 1 with tag 3",
                           "rank 1 waits in wait_all for a message from rank 0 with tag 3"});
}

// Legal under MPI, a deadlock here (ibroadcast runs at its call): the report says so.
TEST(sim_deadlock, an_ibroadcast_waiting_for_a_late_member_is_named_as_one) {
    const auto what = deadlock_message(2, [](const comm_ptr& world) {
        double x = 1, y = 0;
        if (world->rank() == 0) {
            auto pending = world->ibroadcast(&x, 1, 0);
            wait_one(world, world->isend(&x, 1, 1, 7));
            wait_one(world, std::move(pending));
        } else {
            wait_one(world, world->irecv(&y, 1, 0, 7));  // before its own ibroadcast
            wait_one(world, world->ibroadcast(&x, 1, 0));
        }
    });
    expect_contains(what, {"rank 0 waits in ibroadcast(1 x float64, root 0) (run at its call by the simulator",
                           "rank 1 waits in wait_all for a message from rank 0 with tag 7"});
}

TEST(sim_deadlock, a_message_with_the_wrong_tag_does_not_help) {
    const auto what = deadlock_message(2, [](const comm_ptr& world) {
        int x = 0;
        if (world->rank() == 1) wait_one(world, world->isend(&x, 1, 0, 1));
        else wait_one(world, world->irecv(&x, 1, 1, 2));
    });
    expect_contains(what, {"(1 of 2 ranks blocked, the others finished)",
                           "rank 0 waits in wait_all for a message from rank 1 with tag 2", "rank 1 has finished"});
}

TEST(sim_deadlock, a_barrier_missing_a_rank) {
    const auto what = deadlock_message(3, [](const comm_ptr& world) {
        if (world->rank() == 2) {
            int x;
            wait_one(world, world->irecv(&x, 1, 0, 0));
        } else {
            world->barrier();
        }
    });
    expect_contains(what, {"ranks [0,1] (2 ranks) wait in barrier() (collective call #0) on context 0",
                           "arrived: ranks [0,1], missing: ranks [2]",
                           "rank 2 waits in wait_all for a message from rank 0 with tag 0"});
}

TEST(sim_deadlock, a_collective_after_a_rank_finished) {
    const auto what = deadlock_message(4, [](const comm_ptr& world) {
        if (world->rank() != 3) world->all_reduce_sum(1.0);
    });
    expect_contains(what, {"ranks [0-2] (3 ranks) wait in all_reduce_sum(1 x float64)", "missing: ranks [3]", "rank 3 has finished"});
}

TEST(sim_deadlock, create_sub_in_a_cycle) {
    // Each rank creates its two pairs in an order that leaves every creation waiting for a rank
    // busy with another one (MPI would hang the same way).
    const auto what = deadlock_message(3, [](const comm_ptr& world) {
        const int me = world->rank();
        const std::vector<std::vector<int>> order = {{0, 1}, {0, 2}, {1, 2}, {0, 1}, {0, 2}, {1, 2}};
        world->create_sub(order[static_cast<std::size_t>(2 * me)]);
        world->create_sub(order[static_cast<std::size_t>(2 * me + 1)]);
    });
    expect_contains(what, {"rank 0 waits in create_sub([0,1]) on context 0 (world ranks [0-2]), arrived: ranks [0], "
                           "missing: ranks [1]",
                           "rank 1 waits in create_sub([1,2])", "rank 2 waits in create_sub([0,2])"});
}

TEST(sim_deadlock, names_the_sub_communicator_context) {
    const auto what = deadlock_message(3, [](const comm_ptr& world) {
        if (world->rank() == 0) return;
        auto sub = world->create_sub({2, 1});
        if (sub->rank() == 1) {
            int x;
            wait_one(sub, sub->irecv(&x, 1, 0, 4));
        }
    });
    expect_contains(what, {"rank 1 waits in wait_all for a message from rank 0 (world rank 2) with tag 4 on context 1 "
                           "(world ranks [2,1])",
                           "ranks [0,2] (2 ranks) have finished"});
}

TEST(sim_deadlock, a_rank_serving_deferred_sends_in_a_collective_is_still_part_of_a_deadlock) {
    // Rank 0 serves its large send from inside the barrier (rank 1's first wait completes),
    // then stays blocked there while rank 1 waits for a message never sent.
    const auto what = deadlock_message(2, [](const comm_ptr& world) {
        std::vector<double> data(40'000, 1.0);  // 320 KB: deferred until its receive is posted
        if (world->rank() == 0) {
            auto sent = world->isend(data.data(), data.size(), 1, 5);
            world->barrier();
            wait_one(world, std::move(sent));
        } else {
            wait_one(world, world->irecv(data.data(), data.size(), 0, 5));
            double x;
            wait_one(world, world->irecv(&x, 1, 0, 6));
        }
    });
    expect_contains(what, {"rank 0 waits in barrier() (collective call #0) on context 0",
                           "rank 1 waits in wait_all for a message from rank 0 with tag 6"});
}

TEST(sim_deadlock, every_deadlocked_rank_throws_deadlock) {
    std::atomic<int> deadlocked{0};
    const auto what = deadlock_message(5, [&](const comm_ptr& world) {
        try {
            world->barrier();
            if (world->rank() != 4) world->barrier();
        } catch (const sim::deadlock&) {
            ++deadlocked;
            throw;
        }
    });
    EXPECT_EQ(deadlocked.load(), 4);
    expect_contains(what, {"collective call #1", "rank 4 has finished"});
}

TEST(sim_deadlock, busy_programs_are_never_reported) {
    // Many short waits with ranks that block and wake in every order: a detector that trusted
    // a stale count would report a deadlock here sooner or later.
    for (int n : {2, 3, 8}) {
        sim::run(n, [](const comm_ptr& world) {
            const int me = world->rank(), size = world->size();
            for (int round = 0; round < 300; ++round) {
                int token = round, got = -1;
                std::vector<request> reqs;
                reqs.push_back(world->irecv(&got, 1, (me + size - 1) % size, round % 5));
                if (round % 7 == me % 7) std::this_thread::yield();
                reqs.push_back(world->isend(&token, 1, (me + 1) % size, round % 5));
                world->wait_all(reqs);
                ASSERT_EQ(got, round);
                if (round % 10 == 0) world->barrier();
                if (round % 25 == 0 && size > 2 && me < 2) {
                    auto pair = world->create_sub({1, 0});
                    pair->barrier();
                }
            }
        });
    }
}

TEST(sim_deadlock, blocked_ranks_with_a_running_rank_are_not_a_deadlock) {
    sim::run(3, [](const comm_ptr& world) {
        int x = 0;
        if (world->rank() == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the others wait meanwhile
            x = 5;
            std::vector<request> reqs;
            reqs.push_back(world->isend(&x, 1, 1, 0));
            reqs.push_back(world->isend(&x, 1, 2, 0));
            world->wait_all(reqs);
        } else {
            wait_one(world, world->irecv(&x, 1, 0, 0));
            EXPECT_EQ(x, 5);
        }
    });
}

}  // namespace
