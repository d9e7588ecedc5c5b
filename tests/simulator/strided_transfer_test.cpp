// Strided sends and receives on the simulator (isend_box / irecv_box), where it is stricter
// than MPI: a volume mismatch is refused with both sides named, and the send-buffer check
// covers exactly the sent box, also for a large box whose send is deferred (context.hpp).
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/array_box.hpp"
#include "simulator/errors.hpp"
#include "simulator/run.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::array_box;
using distdl::request;
using sim_test::comm_ptr;
namespace sim = distdl::sim;

// A box of 200 x 48 f64 (75 KiB: deferred when its receive is not posted) in a 300 x 64 array.
const array_box large_box{{300, 64}, {10, 8}, {200, 48}};
constexpr std::size_t large_volume = 200 * 48;

std::vector<double> numbered(std::size_t n) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 + static_cast<double>(i);
    return v;
}

// Sends the large box from rank 0 to rank 1, whose receive is posted only after a barrier that
// rank 0 reaches after its isend (so the send is deferred); element `touch_index` of the sent
// array is overwritten between isend and wait.
void deferred_box_send(const comm_ptr& world, std::size_t touch_index, std::vector<double>* received) {
    if (world->rank() == 0) {
        auto data = numbered(300 * 64);
        auto sent = world->isend_box(data.data(), large_box, 1, 3);
        data[touch_index] = -7.0;
        world->barrier();  // moves the deferred data
        sim_test::wait_one(world, std::move(sent));
    } else {
        world->barrier();
        std::vector<double> in(large_volume, -1.0);
        sim_test::wait_one(world, world->irecv(in.data(), in.size(), 0, 3));
        if (received != nullptr) *received = in;
    }
}

}  // namespace

TEST(sim_strided, a_deferred_box_send_changed_inside_the_box_is_caught) {
    try {
        sim::run(2, [](const comm_ptr& world) { deferred_box_send(world, 50 * 64 + 20, nullptr); });
        FAIL() << "expected sim::send_buffer_modified";
    } catch (const sim::send_buffer_modified& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 0 modified the buffer of its isend"), std::string::npos) << what;
        EXPECT_NE(what.find("9600 x float64 to rank 1 with tag 3"), std::string::npos) << what;
    }
}

TEST(sim_strided, a_change_outside_the_sent_box_is_not_a_modified_send) {
    std::vector<double> got;
    // Row 50, column 2: left of the box's columns [8, 56).
    sim::run(2, [&](const comm_ptr& world) { deferred_box_send(world, 50 * 64 + 2, &got); });
    const auto all = numbered(300 * 64);
    ASSERT_EQ(got.size(), large_volume);
    for (std::size_t i = 0; i < 200; ++i)
        for (std::size_t j = 0; j < 48; ++j) ASSERT_EQ(got[i * 48 + j], all[(10 + i) * 64 + 8 + j]) << i << "," << j;
}

TEST(sim_strided, a_box_send_changed_before_its_wait_is_caught) {
    // Receive posted first: the data is copied at isend, the wait finds the box changed.
    EXPECT_THROW(sim::run(2,
                          [](const comm_ptr& world) {
                              if (world->rank() == 0) {
                                  auto data = numbered(300 * 64);
                                  world->barrier();
                                  auto sent = world->isend_box(data.data(), large_box, 1, 3);
                                  data[199 * 64 + 55] = 1e9;  // the box's last element
                                  sim_test::wait_one(world, std::move(sent));
                              } else {
                                  std::vector<double> in(300 * 64, 0.0);
                                  auto r = world->irecv_box(in.data(), large_box, 0, 3);
                                  world->barrier();
                                  sim_test::wait_one(world, std::move(r));
                              }
                          }),
                 sim::send_buffer_modified);
}

TEST(sim_strided, a_volume_mismatch_is_refused_naming_both_sides) {
    try {
        sim::run(2, [](const comm_ptr& world) {
            std::vector<double> data(12, 1.0);
            if (world->rank() == 0) {
                sim_test::wait_one(world, world->isend_box(data.data(), array_box{{3, 4}, {0, 1}, {3, 3}}, 1, 2));
            } else {
                sim_test::wait_one(world, world->irecv_box(data.data(), array_box{{3, 4}, {0, 0}, {2, 4}}, 0, 2));
            }
        });
        FAIL() << "expected sim::message_mismatch";
    } catch (const sim::message_mismatch& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("rank 1 receives 8 x float64 from rank 0 with tag 2, but rank 0 sent 9 x float64"),
                  std::string::npos)
            << what;
    }
}

TEST(sim_strided, a_type_mismatch_is_refused) {
    EXPECT_THROW(sim::run(2,
                          [](const comm_ptr& world) {
                              std::vector<float> f(12, 1.0f);
                              std::vector<std::int32_t> i(12, 1);
                              if (world->rank() == 0)
                                  sim_test::wait_one(world, world->isend_box(f.data(), array_box{{12}, {0}, {4}}, 1, 2));
                              else
                                  sim_test::wait_one(world, world->irecv_box(i.data(), array_box{{12}, {0}, {4}}, 0, 2));
                          }),
                 sim::message_mismatch);
}
