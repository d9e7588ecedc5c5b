// The private box helpers of core/detail: bounds checked once per box (a planning error throws
// instead of touching memory), contiguity, filling around a box, and the plan checks of the
// box-exchange engine.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/detail/box_copy.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/error.hpp"

using namespace distdl;
using namespace distdl::detail;

TEST(box_copy, copies_a_sub_box_row_by_row) {
    std::vector<double> src(4 * 5), dst(3 * 3, -1.0);
    std::iota(src.begin(), src.end(), 0.0);
    copy_box(src.data(), {4, 5}, {1, 2}, dst.data(), {3, 3}, {1, 0}, {2, 3}, box_op::assign);
    EXPECT_EQ(dst, (std::vector<double>{-1, -1, -1, 7, 8, 9, 12, 13, 14}));
    copy_box(src.data(), {4, 5}, {0, 0}, dst.data(), {3, 3}, {0, 0}, {1, 2}, box_op::add);
    EXPECT_EQ(dst[0], -1.0);
    EXPECT_EQ(dst[1], 0.0);
}

TEST(box_copy, refuses_boxes_outside_their_arrays) {
    std::vector<double> src(4 * 5), dst(3 * 3);
    // Source box rows 3..4 of a 4-row array; destination box past the end; rank mismatch.
    EXPECT_THROW(copy_box(src.data(), {4, 5}, {3, 0}, dst.data(), {3, 3}, {0, 0}, {2, 3}, box_op::assign), error);
    EXPECT_THROW(copy_box(src.data(), {4, 5}, {0, 0}, dst.data(), {3, 3}, {2, 1}, {1, 3}, box_op::add), error);
    EXPECT_THROW(copy_box(src.data(), {4, 5}, {0}, dst.data(), {3, 3}, {0, 0}, {1, 1}, box_op::assign), error);
    EXPECT_THROW(fill_box(dst.data(), {3, 3}, {0, 2}, {3, 2}, 0.0), error);
    try {
        copy_box(src.data(), {4, 5}, {0, 0}, dst.data(), {3, 3}, {2, 1}, {1, 3}, box_op::assign);
    } catch (const error& e) {
        EXPECT_NE(std::string(e.what()).find("destination box at [2,1] of extent [1,3] does not lie inside an array "
                                             "of shape [3,3]"),
                  std::string::npos)
            << e.what();
    }
}

TEST(box_copy, tells_contiguous_boxes) {
    EXPECT_TRUE(box_is_contiguous({4, 5}, {1, 0}, {2, 5}));   // whole rows
    EXPECT_TRUE(box_is_contiguous({4, 5}, {1, 2}, {1, 3}));   // part of one row
    EXPECT_FALSE(box_is_contiguous({4, 5}, {1, 1}, {2, 4}));  // parts of two rows
    EXPECT_TRUE(box_is_contiguous({2, 4, 5}, {1, 2, 0}, {1, 2, 5}));
    EXPECT_FALSE(box_is_contiguous({2, 4, 5}, {0, 2, 0}, {2, 2, 5}));
    EXPECT_EQ(box_offset({2, 4, 5}, {1, 2, 3}), 20u + 10u + 3u);
}

TEST(box_copy, fills_only_outside_the_kept_box) {
    std::vector<int> a(4 * 5, 7);
    fill_outside_box(a.data(), {4, 5}, {1, 1}, {2, 3}, 0);
    const std::vector<int> want{0, 0, 0, 0, 0, 0, 7, 7, 7, 0, 0, 7, 7, 7, 0, 0, 0, 0, 0, 0};
    EXPECT_EQ(a, want);
    std::vector<int> b(6, 7);
    fill_outside_box(b.data(), {2, 3}, {1, 3}, {1, 0}, 0);  // empty kept box: everything
    EXPECT_EQ(b, std::vector<int>(6, 0));
}

TEST(box_exchange, refuses_a_plan_with_a_box_outside_its_array_or_out_of_order) {
    box_exchange_plan plan;
    plan.source_shape = {4, 5};
    plan.dest_shape = {3, 3};
    plan.sends = {{1, {3, 0}, {2, 5}}};
    EXPECT_THROW(box_exchange<double>(plan, 1, 2), error);
    plan.sends = {{2, {0, 0}, {1, 5}}, {1, {1, 0}, {1, 5}}};
    EXPECT_THROW(box_exchange<double>(plan, 1, 2), error);
    plan.sends = {{1, {0, 0}, {1, 5}}, {2, {1, 0}, {1, 5}}};
    plan.has_self = true;
    plan.self = {{0, 0}, {0, 1}, {3, 3}};
    EXPECT_THROW(box_exchange<double>(plan, 1, 2), error);
    plan.self = {{0, 0}, {0, 0}, {3, 3}};
    EXPECT_NO_THROW(box_exchange<double>(plan, 1, 2));
}
