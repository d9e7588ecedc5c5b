// Argument agreement on a large simulated world: agreeing costs one small reduction, and a
// single odd worker among thousands is named in a short message on every worker.
#include <atomic>

#include <gtest/gtest.h>

#include "core/all_sum_reduce.hpp"
#include "core/partition.hpp"
#include "simulator/run.hpp"

namespace {

using namespace distdl;

TEST(large_world, one_odd_worker_among_4096) {
    constexpr int n = 4096;
    std::atomic<int> refused{0}, agreed{0};
    sim::run(n, [&](const std::shared_ptr<communicator>& world) {
        const auto P = partition::world(world).create_cartesian_topology_partition({static_cast<std::size_t>(n)});
        all_sum_reduce<float> fine(P, {0});
        ++agreed;
        try {
            all_sum_reduce<float> odd(P, world->rank() == 1234 ? std::vector<std::size_t>{} : std::vector<std::size_t>{0});
        } catch (const invalid_argument& e) {
            if (std::string(e.what()) ==
                "AllSumReduce: workers disagree on axes_reduce: [0] on world ranks [0-1233,1235-4095], [] on world "
                "ranks [1234]")
                ++refused;
        }
    });
    EXPECT_EQ(agreed.load(), n);
    EXPECT_EQ(refused.load(), n);
}

}  // namespace
