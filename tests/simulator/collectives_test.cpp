// Collectives: results, rank-order reductions, synchronisation, and mismatch detection.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <functional>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::communicator;
using distdl::dtype;
using comm_ptr = std::shared_ptr<communicator>;
using sim_test::contribution;
namespace sim = distdl::sim;

TEST(sim_collectives, broadcast_from_every_root) {
    for (int n : {1, 2, 5}) {
        sim::run(n, [](const comm_ptr& world) {
            for (int root = 0; root < world->size(); ++root) {
                std::vector<double> buf(6, -1.0);
                if (world->rank() == root) std::iota(buf.begin(), buf.end(), root * 10.0);
                world->broadcast(buf.data(), buf.size(), root);
                for (std::size_t i = 0; i < buf.size(); ++i) EXPECT_EQ(buf[i], root * 10.0 + static_cast<double>(i));
            }
        });
    }
}

TEST(sim_collectives, sums_fold_in_rank_order_and_reduce_equals_all_reduce) {
    constexpr std::size_t count = 64;
    constexpr int n = 7;
    std::vector<double> in_order = contribution<double>(0, count), reversed = contribution<double>(n - 1, count);
    for (int r = 1; r < n; ++r) {
        const auto c = contribution<double>(r, count);
        for (std::size_t i = 0; i < count; ++i) in_order[i] += c[i];
    }
    for (int r = n - 2; r >= 0; --r) {
        const auto c = contribution<double>(r, count);
        for (std::size_t i = 0; i < count; ++i) reversed[i] += c[i];
    }
    ASSERT_NE(std::memcmp(in_order.data(), reversed.data(), count * sizeof(double)), 0)
        << "test data does not depend on the summation order";

    for (int root : {0, 3, 6}) {
        sim::run(n, [&](const comm_ptr& world) {
            const auto mine = contribution<double>(world->rank(), count);
            std::vector<double> reduced(count, 0.0), all(count, 0.0);
            world->reduce_sum(mine.data(), world->rank() == root ? reduced.data() : nullptr, count, dtype::float64, root);
            world->all_reduce_sum(mine.data(), all.data(), count, dtype::float64);
            EXPECT_EQ(std::memcmp(all.data(), in_order.data(), count * sizeof(double)), 0);
            if (world->rank() == root) {
                EXPECT_EQ(std::memcmp(reduced.data(), all.data(), count * sizeof(double)), 0);
            }
        });
    }
}

TEST(sim_collectives, sums_of_every_summable_type) {
    sim::run(4, [](const comm_ptr& world) {
        const int me = world->rank();
        EXPECT_EQ(world->all_reduce_sum(static_cast<float>(me) + 0.5f), 8.0f);
        EXPECT_EQ(world->all_reduce_sum(static_cast<std::int32_t>(me)), 6);
        EXPECT_EQ(world->all_reduce_sum(static_cast<std::int64_t>(me) << 40), std::int64_t{6} << 40);
        EXPECT_EQ(world->all_reduce_sum(static_cast<std::uint64_t>(me)), 6u);
    });
}

TEST(sim_collectives, all_gather_places_each_block_by_rank) {
    sim::run(5, [](const comm_ptr& world) {
        const int me = world->rank();
        const std::int64_t mine[2] = {me, -me};
        std::vector<std::int64_t> all(10, 99);
        world->all_gather(mine, all.data(), 2, dtype::int64);
        for (int r = 0; r < 5; ++r) {
            EXPECT_EQ(all[static_cast<std::size_t>(2 * r)], r);
            EXPECT_EQ(all[static_cast<std::size_t>(2 * r + 1)], -r);
        }
        EXPECT_EQ(world->all_gather(me * 3), (std::vector<int>{0, 3, 6, 9, 12}));
    });
}

// Buffers that alias (here each rank's send and receive are the same row of one shared matrix)
// still get the result of a real transfer: the sources as they were before any was written.
TEST(sim_collectives, all_to_all_v_over_aliased_buffers_moves_the_data_as_it_was) {
    constexpr std::size_t n = 5;
    std::vector<double> shared(n * n);
    std::iota(shared.begin(), shared.end(), 0.0);  // element (i, j) = n * i + j
    sim::run(static_cast<int>(n), [&](const comm_ptr& world) {
        const auto me = static_cast<std::size_t>(world->rank());
        std::vector<std::size_t> counts(n, 1), displs(n);
        std::iota(displs.begin(), displs.end(), std::size_t{0});
        world->all_to_all_v(&shared[me * n], counts, displs, &shared[me * n], counts, displs, dtype::float64);
    });
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) EXPECT_EQ(shared[i * n + j], static_cast<double>(n * j + i)) << i << "," << j;
}

TEST(sim_collectives, all_to_all_v_moves_each_block_and_leaves_gaps_alone) {
    constexpr int n = 4;
    // Rank i sends (i + j) % 3 values to rank j, each value 100 * i + j; receive blocks are laid
    // out in source order with one untouched element between blocks.
    sim::run(n, [](const comm_ptr& world) {
        const int me = world->rank();
        std::vector<std::size_t> send_counts(n), send_displs(n), recv_counts(n), recv_displs(n);
        std::vector<double> send;
        std::size_t recv_extent = 0;
        for (int j = 0; j < n; ++j) {
            send_counts[static_cast<std::size_t>(j)] = static_cast<std::size_t>((me + j) % 3);
            send_displs[static_cast<std::size_t>(j)] = send.size();
            send.insert(send.end(), send_counts[static_cast<std::size_t>(j)], 100.0 * me + j);
            recv_counts[static_cast<std::size_t>(j)] = static_cast<std::size_t>((j + me) % 3);
            recv_displs[static_cast<std::size_t>(j)] = recv_extent;
            recv_extent += recv_counts[static_cast<std::size_t>(j)] + 1;
        }
        std::vector<double> recv(recv_extent, -7.0);
        world->all_to_all_v(send.data(), send_counts, send_displs, recv.data(), recv_counts, recv_displs,
                            dtype::float64);
        for (int i = 0; i < n; ++i) {
            const auto at = recv_displs[static_cast<std::size_t>(i)];
            for (std::size_t k = 0; k < recv_counts[static_cast<std::size_t>(i)]; ++k) EXPECT_EQ(recv[at + k], 100.0 * i + me);
            EXPECT_EQ(recv[at + recv_counts[static_cast<std::size_t>(i)]], -7.0) << "gap after block from rank " << i;
        }
    });
}

TEST(sim_collectives, barrier_holds_every_rank_until_all_arrive) {
    std::atomic<int> arrived{0};
    sim::run(6, [&](const comm_ptr& world) {
        for (int round = 1; round <= 20; ++round) {
            ++arrived;
            world->barrier();
            EXPECT_GE(arrived.load(), 6 * round);
            world->barrier();  // nobody starts the next round before everyone checked
        }
    });
}

TEST(sim_collectives, collectives_synchronise_memory) {
    // Written by rank 0 before the broadcast, read by the others after it: ThreadSanitizer
    // reports a race unless the collective orders the two.
    int shared = 0;
    sim::run(3, [&](const comm_ptr& world) {
        int token = 0;
        if (world->rank() == 0) shared = 42;
        world->broadcast(&token, 1, 0);
        EXPECT_EQ(shared, 42);
    });
}

// Runs `body` on n ranks, expects sim::run to throw collective_mismatch containing every text
// in `texts`, and that at least `participants` ranks threw collective_mismatch themselves (ranks
// that arrive after the world was aborted throw sim::aborted instead).
void expect_mismatch(int n, const std::function<void(const comm_ptr&)>& body, const std::vector<std::string>& texts,
                     int participants) {
    std::atomic<int> threw{0};
    try {
        sim::run(n, [&](const comm_ptr& world) {
            try {
                body(world);
            } catch (const sim::collective_mismatch&) {
                ++threw;
                throw;
            }
        });
        FAIL() << "run did not throw";
    } catch (const sim::collective_mismatch& e) {
        for (const auto& t : texts) EXPECT_NE(std::string(e.what()).find(t), std::string::npos) << e.what();
    }
    EXPECT_GE(threw.load(), participants);
}

TEST(sim_collectives, different_operations_are_a_mismatch) {
    expect_mismatch(
        2,
        [](const comm_ptr& world) {
            double x = 1;
            if (world->rank() == 0) world->broadcast(&x, 1, 0);
            else world->barrier();
        },
        {"collective mismatch", "rank 0 called broadcast(1 x float64, root 0)", "rank 1 called barrier()"}, 2);
}

TEST(sim_collectives, different_counts_are_a_mismatch) {
    expect_mismatch(
        3,
        [](const comm_ptr& world) {
            std::vector<double> buf(4);
            world->broadcast(buf.data(), world->rank() == 2 ? 3 : 4, 0);
        },
        {"rank 2 called broadcast(3 x float64, root 0)", "called broadcast(4 x float64, root 0)"}, 2);
}

TEST(sim_collectives, different_roots_are_a_mismatch) {
    expect_mismatch(
        2,
        [](const comm_ptr& world) {
            double x = 1, y = 0;
            world->reduce_sum(&x, &y, 1, dtype::float64, world->rank());
        },
        {"root 0", "root 1"}, 2);
}

TEST(sim_collectives, different_dtypes_are_a_mismatch) {
    expect_mismatch(
        2,
        [](const comm_ptr& world) {
            if (world->rank() == 0) world->all_reduce_sum(1.0);
            else world->all_reduce_sum(1.0f);
        },
        {"all_reduce_sum(1 x float64)", "all_reduce_sum(1 x float32)"}, 2);
}

TEST(sim_collectives, inconsistent_all_to_all_counts_are_a_mismatch) {
    expect_mismatch(
        2,
        [](const comm_ptr& world) {
            std::vector<double> send(4), recv(4);
            const std::vector<std::size_t> displs = {0, 2};
            std::vector<std::size_t> send_counts = {1, 1}, recv_counts = {1, 1};
            if (world->rank() == 1) send_counts[0] = 2;  // rank 0 expects 1 from rank 1
            world->all_to_all_v(send.data(), send_counts, displs, recv.data(), recv_counts, displs, dtype::float64);
        },
        {"rank 1 sends 2 to rank 0, which expects 1"}, 2);
}

TEST(sim_collectives, a_size_one_world_completes_every_collective) {
    sim::run(1, [](const comm_ptr& world) {
        double x = 2.5, y = 0;
        world->broadcast(&x, 1, 0);
        world->reduce_sum(&x, &y, 1, dtype::float64, 0);
        EXPECT_EQ(y, 2.5);
        EXPECT_EQ(world->all_reduce_sum(x), 2.5);
        EXPECT_EQ(world->all_gather(x), std::vector<double>{2.5});
        world->barrier();
    });
}

TEST(sim_collectives, many_collectives_in_sequence) {
    sim::run(9, [](const comm_ptr& world) {
        for (int i = 0; i < 300; ++i) {
            const int root = i % world->size();
            int v = world->rank() == root ? i : -1;
            world->broadcast(&v, 1, root);
            ASSERT_EQ(v, i);
            ASSERT_EQ(world->all_reduce_sum(1), world->size());
        }
    });
}

}  // namespace
