// strided_layout of a box: dimensions that continue a run merge into it, outer dimensions that
// continue each other merge, empty boxes have no bytes, and copy_layout moves element i of one
// box to element i of the other.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "core/array_box.hpp"
#include "core/error.hpp"

namespace {

using distdl::array_box;
using distdl::strided_layout;

strided_layout layout_of(const array_box& box, std::size_t element_size = 8) {
    strided_layout l;
    EXPECT_TRUE(distdl::make_layout(box, element_size, l));
    return l;
}

}  // namespace

TEST(array_box, whole_rows_are_one_run) {
    const auto l = layout_of({{4, 5, 6}, {1, 0, 0}, {2, 5, 6}});
    EXPECT_TRUE(l.contiguous());
    EXPECT_EQ(l.offset, 30u * 8);
    EXPECT_EQ(l.run, 60u * 8);
    EXPECT_EQ(l.bytes(), 60u * 8);
}

TEST(array_box, a_partial_last_dimension_walks_the_others_as_one) {
    // [4,5] x 3 of [4,5,6] from [0,0,1]: 20 runs of 3, 6 elements apart (rows continue rows).
    const auto l = layout_of({{4, 5, 6}, {0, 0, 1}, {4, 5, 3}});
    EXPECT_EQ(l.offset, 8u);
    EXPECT_EQ(l.run, 24u);
    ASSERT_EQ(l.dims, 1u);
    EXPECT_EQ(l.count[0], 20u);
    EXPECT_EQ(l.stride[0], 48u);
}

TEST(array_box, an_inner_box_has_two_outer_dimensions) {
    const auto l = layout_of({{4, 5, 6}, {1, 1, 1}, {2, 3, 4}}, 4);
    EXPECT_EQ(l.offset, (30u + 6 + 1) * 4);
    EXPECT_EQ(l.run, 16u);
    ASSERT_EQ(l.dims, 2u);
    EXPECT_EQ(l.count[0], 2u);
    EXPECT_EQ(l.stride[0], 120u);
    EXPECT_EQ(l.count[1], 3u);
    EXPECT_EQ(l.stride[1], 24u);
    EXPECT_EQ(l.bytes(), 24u * 4);
}

TEST(array_box, empty_and_scalar_boxes) {
    EXPECT_EQ(layout_of({{4, 5}, {1, 2}, {3, 0}}).bytes(), 0u);
    const auto scalar = layout_of({{}, {}, {}});
    EXPECT_EQ(scalar.bytes(), 8u);
    EXPECT_TRUE(scalar.contiguous());
}

TEST(array_box, a_box_outside_its_array_is_refused) {
    strided_layout l;
    EXPECT_THROW(distdl::make_layout({{4, 5}, {2, 0}, {3, 5}}, 8, l), distdl::invalid_argument);
    EXPECT_THROW(distdl::make_layout({{4, 5}, {0, 0}, {3}}, 8, l), distdl::invalid_argument);
}

TEST(array_box, too_many_strided_dimensions_are_reported) {
    // 10 dimensions of 3, each box of 2 from 0: nothing merges, 9 outer dimensions.
    array_box box{std::vector<std::size_t>(10, 3), std::vector<std::size_t>(10, 0), std::vector<std::size_t>(10, 2)};
    strided_layout l;
    EXPECT_FALSE(distdl::make_layout(box, 8, l));
}

TEST(array_box, copy_between_boxes_of_different_extents) {
    // A 4x3 box of a 6x7 array into a 3x4 box of a 5x5 array: row-major box order on both sides.
    std::vector<int> src(42), dst(25, -1);
    std::iota(src.begin(), src.end(), 0);
    distdl::copy_layout(dst.data(), layout_of({{5, 5}, {1, 1}, {3, 4}}, 4), src.data(),
                        layout_of({{6, 7}, {1, 2}, {4, 3}}, 4));
    std::vector<int> sent;
    for (int i = 1; i < 5; ++i)
        for (int j = 2; j < 5; ++j) sent.push_back(i * 7 + j);
    std::size_t k = 0;
    for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 5; ++j) {
            const bool inside = i >= 1 && i < 4 && j >= 1 && j < 5;
            EXPECT_EQ(dst[i * 5 + j], inside ? sent[k++] : -1) << i << "," << j;
        }
}
