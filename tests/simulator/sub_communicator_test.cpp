// create_sub: membership and numbering, own message space and collective sequence, creation
// among some ranks only, concurrent creations, mismatched lists, shared traffic log.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using namespace sim_test;
namespace sim = distdl::sim;

TEST(sim_sub_communicator, ranks_are_positions_in_the_list) {
    sim::run(5, [](const comm_ptr& world) {
        const std::vector<int> members = {3, 1, 4};
        const int me = world->rank();
        if (me == 0 || me == 2) return;  // non-members take no part
        auto sub = world->create_sub(members);
        EXPECT_EQ(sub->size(), 3);
        const int expected = me == 3 ? 0 : me == 1 ? 1 : 2;
        EXPECT_EQ(sub->rank(), expected);
        // Gathered world ranks in sub order.
        EXPECT_EQ(sub->all_gather(me), members);
    });
}

TEST(sim_sub_communicator, has_its_own_message_space) {
    sim::run(2, [](const comm_ptr& world) {
        auto sub = world->create_sub({1, 0});  // world rank 0 is sub rank 1
        if (world->rank() == 0) {
            const int on_world = 1, on_sub = 2;
            wait_one(world, world->isend(&on_world, 1, 1, 5));
            wait_one(sub, sub->isend(&on_sub, 1, 0, 5));
        } else {
            int from_sub = 0, from_world = 0;
            wait_one(sub, sub->irecv(&from_sub, 1, 1, 5));  // same peer and tag, other context
            wait_one(world, world->irecv(&from_world, 1, 0, 5));
            EXPECT_EQ(from_sub, 2);
            EXPECT_EQ(from_world, 1);
        }
    });
}

TEST(sim_sub_communicator, has_its_own_collective_sequence) {
    sim::run(3, [](const comm_ptr& world) {
        if (world->rank() != 2) {
            auto sub = world->create_sub({0, 1});
            sub->barrier();
            EXPECT_EQ(sub->all_reduce_sum(1), 2);
        }
        // Had the sub's collectives counted on the world, rank 2 would be two calls behind.
        int v = world->rank() == 2 ? 9 : 0;
        world->broadcast(&v, 1, 2);
        EXPECT_EQ(v, 9);
    });
}

TEST(sim_sub_communicator, non_members_may_be_blocked_elsewhere) {
    sim::run(3, [](const comm_ptr& world) {
        int v = 0;
        if (world->rank() == 2) {
            wait_one(world, world->irecv(&v, 1, 0, 0));  // waits until rank 0 has its sub
            EXPECT_EQ(v, 2);
            return;
        }
        auto sub = world->create_sub({0, 1});
        if (world->rank() == 0) {
            v = sub->size();
            wait_one(world, world->isend(&v, 1, 2, 0));
        }
    });
}

TEST(sim_sub_communicator, disjoint_creations_proceed_at_once) {
    sim::run(4, [](const comm_ptr& world) {
        const int me = world->rank();
        auto sub = me < 2 ? world->create_sub({0, 1}) : world->create_sub({3, 2});
        EXPECT_EQ(sub->size(), 2);
        EXPECT_EQ(sub->all_reduce_sum(me), me < 2 ? 1 : 5);
        EXPECT_EQ(sub->rank(), me == 0 || me == 3 ? 0 : 1);
    });
}

TEST(sim_sub_communicator, overlapping_and_repeated_creations_in_a_consistent_order) {
    sim::run(3, [](const comm_ptr& world) {
        const int me = world->rank();
        // Each pair creates its communicator twice; every rank goes through its pairs in the
        // same global order, as MPI requires.
        const std::vector<std::vector<int>> pairs = {{0, 1}, {1, 2}, {0, 2}, {0, 1}, {1, 2}, {0, 2}};
        for (const auto& pair : pairs) {
            if (pair[0] != me && pair[1] != me) continue;
            auto sub = world->create_sub(pair);
            EXPECT_EQ(sub->all_reduce_sum(me), pair[0] + pair[1]);
        }
    });
}

TEST(sim_sub_communicator, subs_of_subs) {
    sim::run(6, [](const comm_ptr& world) {
        const int me = world->rank();
        if (me == 5) return;
        auto outer = world->create_sub({4, 3, 2, 1, 0});
        if (outer->rank() == 1 || outer->rank() >= 3) return;  // world ranks 3, 1 and 0
        auto inner = outer->create_sub({2, 0});  // world ranks 2 and 4
        EXPECT_EQ(inner->size(), 2);
        EXPECT_EQ(inner->all_gather(me), (std::vector<int>{2, 4}));
    });
}

TEST(sim_sub_communicator, one_wait_all_completes_requests_of_several_communicators) {
    sim::run(2, [](const comm_ptr& world) {
        auto sub = world->create_sub({1, 0});
        const int other = 1 - world->rank();
        const int mine[2] = {world->rank(), 10 + world->rank()};
        int got[2] = {-1, -1};
        std::vector<request> reqs;
        reqs.push_back(sub->irecv(&got[1], 1, sub->rank() == 0 ? 1 : 0, 0));
        reqs.push_back(world->irecv(&got[0], 1, other, 0));
        reqs.push_back(world->isend(&mine[0], 1, other, 0));
        reqs.push_back(sub->isend(&mine[1], 1, sub->rank() == 0 ? 1 : 0, 0));
        world->wait_all(reqs);
        EXPECT_EQ(got[0], other);
        EXPECT_EQ(got[1], 10 + other);
    });
}

TEST(sim_sub_communicator, lists_in_another_order_are_a_mismatch) {
    try {
        sim::run(3, [](const comm_ptr& world) {
            if (world->rank() == 0) world->create_sub({0, 1});
            if (world->rank() == 1) world->create_sub({1, 0});
        });
        FAIL() << "run did not throw";
    } catch (const sim::collective_mismatch& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 0 called create_sub([0,1])"), std::string::npos) << what;
        EXPECT_NE(what.find("rank 1 called create_sub([1,0])"), std::string::npos) << what;
    }
}

TEST(sim_sub_communicator, traffic_goes_to_the_ranks_log) {
    const auto report = sim::run(3, [](const comm_ptr& world) {
        if (world->rank() == 1) return;
        auto sub = world->create_sub({2, 0});
        const std::int64_t v = 1;
        std::int64_t got = 0;
        if (sub->rank() == 0) wait_one(sub, sub->isend(&v, 1, 1, 0));
        else wait_one(sub, sub->irecv(&got, 1, 0, 0));
    });
    EXPECT_EQ(report.traffic[2].total().messages, 1u);
    EXPECT_EQ(report.traffic[2].total().bytes, 8u);
    EXPECT_EQ(report.traffic[0].total().messages, 0u);
}

}  // namespace
