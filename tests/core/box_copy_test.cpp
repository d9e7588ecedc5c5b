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

// Element (i0, ..., i_{n-1}) of a row-major array of `shape`, by plain index arithmetic.
static std::size_t flat_of(const std::vector<std::size_t>& shape, const std::vector<std::size_t>& index) {
    std::size_t f = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + index[d];
    return f;
}

// Walks every multi-index of `extent` (odometer), calling f(index).
template <class F>
static void for_each_index(const std::vector<std::size_t>& extent, F f) {
    std::vector<std::size_t> i(extent.size(), 0);
    for (std::size_t n = 0, total = volume(extent); n < total; ++n) {
        f(i);
        for (std::size_t d = extent.size(); d-- > 0;) {
            if (++i[d] < extent[d]) break;
            i[d] = 0;
        }
    }
}

// Boxes whose inner dimensions span both arrays (copied as one run per outer index), columns
// and short runs (the element loop), extents of 1 beside the run, and boxes of more dimensions
// than the walker keeps on the stack, against element-by-element copies.
TEST(box_copy, matches_an_element_by_element_copy_for_merged_and_high_rank_boxes) {
    struct box_case {
        shape_t src_shape, src_start, dst_shape, dst_start, extent;
    };
    const std::vector<box_case> cases{
        {{3, 4, 5}, {1, 0, 0}, {2, 4, 5}, {0, 0, 0}, {2, 4, 5}},          // inner two dims full: one run
        {{3, 4, 5}, {0, 1, 0}, {3, 2, 5}, {0, 0, 0}, {3, 2, 5}},          // last dim full: runs of 10
        {{3, 2, 5}, {0, 0, 0}, {4, 3, 5}, {1, 1, 0}, {3, 2, 5}},          // dim 1 full in src, not in dst
        {{2, 3, 4, 5}, {0, 1, 0, 4}, {2, 2, 4, 1}, {0, 0, 0, 0}, {2, 2, 4, 1}},  // a column: runs of 1
        {{2, 3, 4, 20}, {0, 1, 2, 2}, {3, 3, 3, 20}, {1, 0, 1, 0}, {2, 2, 1, 17}},  // extent 1 beside a long run
        {{2, 3, 4, 20}, {1, 0, 3, 0}, {1, 3, 1, 20}, {0, 0, 0, 0}, {1, 3, 1, 20}},  // rows, one per channel
        {{2, 3, 4}, {1, 2, 3}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},                    // one element
        {{2, 1, 2, 1, 2, 1, 2, 1, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1},
         {1, 1, 2, 1, 1, 1, 2, 1, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 2}, {1, 1, 2, 1, 1, 1, 2, 1, 2}}};  // rank 9
    for (const auto& c : cases) {
        std::vector<double> src(volume(c.src_shape));
        std::iota(src.begin(), src.end(), 1.0);
        std::vector<double> dst(volume(c.dst_shape), -1.0), want(dst);
        const auto at = [](const shape_t& start, const std::vector<std::size_t>& i) {
            std::vector<std::size_t> g(i.size());
            for (std::size_t d = 0; d < i.size(); ++d) g[d] = start[d] + i[d];
            return g;
        };
        for_each_index(c.extent, [&](const std::vector<std::size_t>& i) {
            want[flat_of(c.dst_shape, at(c.dst_start, i))] = src[flat_of(c.src_shape, at(c.src_start, i))];
        });
        copy_box(src.data(), c.src_shape, c.src_start, dst.data(), c.dst_shape, c.dst_start, c.extent, box_op::assign);
        EXPECT_EQ(dst, want);
        // Adding the same box again doubles it.
        for_each_index(c.extent, [&](const std::vector<std::size_t>& i) {
            want[flat_of(c.dst_shape, at(c.dst_start, i))] *= 2;
        });
        copy_box(src.data(), c.src_shape, c.src_start, dst.data(), c.dst_shape, c.dst_start, c.extent, box_op::add);
        EXPECT_EQ(dst, want);
        // Pack then unpack into a fresh array gives the box back, in row-major box order.
        std::vector<double> packed(volume(c.extent));
        pack_box(src.data(), c.src_shape, c.src_start, c.extent, packed.data());
        std::size_t k = 0;
        for_each_index(c.extent, [&](const std::vector<std::size_t>& i) {
            EXPECT_EQ(packed[k++], src[flat_of(c.src_shape, at(c.src_start, i))]);
        });
        std::vector<double> back(volume(c.src_shape), 0.0), back_want(back);
        for_each_index(c.extent, [&](const std::vector<std::size_t>& i) {
            const std::size_t f = flat_of(c.src_shape, at(c.src_start, i));
            back_want[f] = src[f];
        });
        unpack_box(packed.data(), back.data(), c.src_shape, c.src_start, c.extent, box_op::assign);
        EXPECT_EQ(back, back_want);
        // Filling the box touches exactly its elements.
        std::vector<double> filled(volume(c.src_shape), 1.0), filled_want(filled);
        for_each_index(c.extent, [&](const std::vector<std::size_t>& i) {
            filled_want[flat_of(c.src_shape, at(c.src_start, i))] = 5.0;
        });
        fill_box(filled.data(), c.src_shape, c.src_start, c.extent, 5.0);
        EXPECT_EQ(filled, filled_want);
    }
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
