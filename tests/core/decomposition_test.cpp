#include <gtest/gtest.h>

#include "core/decomposition.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"

using namespace distdl;

TEST(balanced, spec_examples) {
    EXPECT_EQ(balanced_sizes(77, 4), (std::vector<std::size_t>{20, 19, 19, 19}));
    EXPECT_EQ(balanced_sizes(77, 3), (std::vector<std::size_t>{26, 26, 25}));
    EXPECT_EQ(balanced_sizes(10, 4), (std::vector<std::size_t>{3, 3, 2, 2}));
}

TEST(balanced, fewer_elements_than_parts_leaves_last_parts_empty) {
    EXPECT_EQ(balanced_sizes(2, 5), (std::vector<std::size_t>{1, 1, 0, 0, 0}));
    EXPECT_EQ(balanced_sizes(0, 3), (std::vector<std::size_t>{0, 0, 0}));
    EXPECT_EQ(balanced_start(2, 5, 4), 2u);
    EXPECT_EQ(balanced_stop(2, 5, 4), 2u);
}

TEST(balanced, pieces_tile_the_range) {
    for (std::size_t n = 0; n < 40; ++n)
        for (std::size_t p = 1; p < 9; ++p) {
            std::size_t next = 0, total = 0;
            for (std::size_t i = 0; i < p; ++i) {
                EXPECT_EQ(balanced_start(n, p, i), next);
                next = balanced_stop(n, p, i);
                total += balanced_size(n, p, i);
                // sizes never differ by more than one, larger ones first
                if (i > 0) {
                    EXPECT_LE(balanced_size(n, p, i), balanced_size(n, p, i - 1));
                }
            }
            EXPECT_EQ(next, n);
            EXPECT_EQ(total, n);
        }
}

TEST(balanced, zero_parts_is_an_error) {
    EXPECT_THROW(balanced_size(5, 0, 0), invalid_argument);
    EXPECT_THROW(balanced_size(5, 2, 2), invalid_argument);
}

TEST(boxes, balanced_box_and_intersection) {
    const index_box b = balanced_box({10, 7}, {4, 2}, {1, 1});
    EXPECT_EQ(b.start, (shape_t{3, 4}));
    EXPECT_EQ(b.stop, (shape_t{6, 7}));
    EXPECT_EQ(b.volume(), 9u);
    const index_box c{{5, 0}, {9, 5}};
    const index_box i = intersect(b, c);
    EXPECT_EQ(i.start, (shape_t{5, 4}));
    EXPECT_EQ(i.stop, (shape_t{6, 5}));
    const index_box none = intersect(b, index_box{{0, 0}, {2, 2}});
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(relative_to(i, b).start, (shape_t{2, 0}));
    EXPECT_THROW(relative_to(c, b), invalid_argument);
    EXPECT_THROW(balanced_box({10}, {4, 2}, {1, 1}), invalid_argument);
}

TEST(indices, ravel_unravel_round_trip) {
    const shape_t shape{2, 3, 4};
    for (std::size_t f = 0; f < 24; ++f) EXPECT_EQ(ravel_index(unravel_index(f, shape), shape), f);
    EXPECT_EQ(unravel_index(23, shape), (shape_t{1, 2, 3}));
    EXPECT_THROW(unravel_index(24, shape), invalid_argument);
    EXPECT_THROW(ravel_index({0, 3, 0}, shape), invalid_argument);
}

TEST(dtypes, sizes_and_names) {
    EXPECT_EQ(size_of(dtype::float32), 4u);
    EXPECT_EQ(size_of(dtype::float64), 8u);
    EXPECT_EQ(to_string(dtype_of<double>()), "float64");
    EXPECT_FALSE(is_summable(dtype::byte));
}

TEST(errors, require_throws_typed_error_with_message) {
    try {
        DISTDL_REQUIRE_AS(1 + 1 == 3, partition_error, "shape " << format_list(shape_t{3, 3, 2}) << " bad");
        FAIL() << "no throw";
    } catch (const partition_error& e) {
        EXPECT_STREQ(e.what(), "shape [3,3,2] bad");
    }
    EXPECT_THROW(DISTDL_REQUIRE(false, "x"), invalid_argument);
    EXPECT_NO_THROW(DISTDL_REQUIRE(true, "x"));
}

// parts_meeting / balanced_parts_meeting against a scan of every part: every part that meets
// [start, stop) lies in the range, and every part in it either meets it or is empty.
TEST(meeting, ranges_agree_with_a_scan_of_every_part) {
    for (std::size_t n : {0u, 1u, 5u, 7u, 16u, 33u})
        for (std::size_t parts : {1u, 2u, 3u, 5u, 8u, 40u})
            for (std::size_t start = 0; start <= n; ++start)
                for (std::size_t stop = start; stop <= n; ++stop) {
                    const auto [first, last] = balanced_parts_meeting(n, parts, start, stop);
                    ASSERT_LE(first, last);
                    ASSERT_LE(last, parts);
                    for (std::size_t i = 0; i < parts; ++i) {
                        const std::size_t a = balanced_start(n, parts, i), b = balanced_stop(n, parts, i);
                        const bool meets = std::max(a, start) < std::min(b, stop);
                        const bool inside = i >= first && i < last;
                        if (meets) {
                            ASSERT_TRUE(inside) << n << " over " << parts << ", part " << i << ", [" << start << ","
                                                << stop << ")";
                        }
                        if (inside) {
                            ASSERT_TRUE(meets || a == b) << n << " over " << parts << ", part " << i;
                        }
                    }
                }
    // Arbitrary offsets, empty parts included.
    const shape_t offsets{0, 3, 3, 4, 9, 9, 12};
    EXPECT_EQ(parts_meeting(offsets, 0, 3), (std::pair<std::size_t, std::size_t>{0, 1}));
    EXPECT_EQ(parts_meeting(offsets, 2, 5), (std::pair<std::size_t, std::size_t>{0, 4}));
    EXPECT_EQ(parts_meeting(offsets, 3, 4), (std::pair<std::size_t, std::size_t>{2, 3}));
    EXPECT_EQ(parts_meeting(offsets, 9, 12), (std::pair<std::size_t, std::size_t>{5, 6}));
    EXPECT_EQ(parts_meeting(offsets, 5, 5).first, parts_meeting(offsets, 5, 5).second);  // empty interval
}

TEST(meeting, grid_indices_in_increasing_order) {
    std::vector<std::size_t> seen;
    for_each_grid_index({1, 0, 2}, {3, 2, 4}, {3, 2, 5}, [&](std::size_t flat) { seen.push_back(flat); });
    std::vector<std::size_t> want;
    for (std::size_t a = 1; a < 3; ++a)
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t c = 2; c < 4; ++c) want.push_back(ravel_index({a, b, c}, {3, 2, 5}));
    EXPECT_EQ(seen, want);
    seen.clear();
    for_each_grid_index({1, 0}, {1, 2}, {3, 2}, [&](std::size_t flat) { seen.push_back(flat); });
    EXPECT_TRUE(seen.empty());
}
