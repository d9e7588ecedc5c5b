// Argument agreement on a large simulated world: agreeing costs one small reduction, and a
// single odd worker among thousands is named in a short message on every worker.
#include <atomic>

#include <gtest/gtest.h>

#include "core/all_sum_reduce.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/halo_exchange.hpp"
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

// Above detail::status_in_messages_limit workers the call status goes to rank 0 and its OR
// comes back, instead of riding with the data to every worker: a wrong shape on one worker is
// still refused on every worker, and the next good call works.
TEST(large_world, halo_exchange_wrong_shape_refused_on_all_above_the_status_in_messages_limit) {
    constexpr int n = detail::status_in_messages_limit + 8;
    std::atomic<int> refused{0}, recovered{0};
    sim::run(n, [&](const std::shared_ptr<communicator>& world) {
        const auto P = partition::world(world).create_cartesian_topology_partition({static_cast<std::size_t>(n)});
        halo_exchange<double> H(P, {2 * static_cast<std::size_t>(n)}, kernel_geometry{{3}, {1}, {1}, {1}});
        const double first = 2.0 * world->rank();
        const tensor<double> x = tensor<double>::from_shape({2});
        tensor<double> good = x;
        good(0) = first;
        good(1) = first + 1;
        tensor<double> y;
        try {
            H.forward(world->rank() == 7 ? tensor<double>::from_shape({3}) : good, y);
        } catch (const invalid_argument& e) {
            const std::string expected =
                "HaloExchange: worker 7 (world rank 7) of P_x shape [" + std::to_string(n) + "]";
            if (std::string(e.what()).find(expected) == 0)
                ++refused;
        }
        H.forward(good, y);
        // Window of 4: the neighbours' edge elements around the own two (zero padding at the ends).
        const double left = world->rank() == 0 ? 0.0 : first - 1, right = world->rank() == n - 1 ? 0.0 : first + 2;
        if (y.size() == 4 && y(0) == left && y(1) == first && y(2) == first + 1 && y(3) == right) ++recovered;
    });
    EXPECT_EQ(refused.load(), n);
    EXPECT_EQ(recovered.load(), n);
}

}  // namespace
