// detail::check_balanced_split: the length pieces along one grid dimension are the balanced split
// of, and the worker named when they are not (the one whose piece differs).
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "layers/detail/balanced_split.hpp"

namespace {

using distdl::shape_t;
using distdl::detail::check_balanced_split;

distdl::detail::split_along along_line(const std::vector<std::size_t>& extents) {
    return check_balanced_split(shape_t{extents.size()}, 0, [&](std::size_t w) { return extents[w]; });
}

TEST(balanced_split, balanced_pieces_give_their_sum) {
    for (const auto& line : std::vector<std::vector<std::size_t>>{{3, 2, 2, 2}, {2, 2, 2, 1}, {0, 0, 0}, {1, 0, 0}, {5}}) {
        const auto s = along_line(line);
        EXPECT_TRUE(s.balanced());
        std::size_t sum = 0;
        for (auto e : line) sum += e;
        EXPECT_EQ(s.length, sum);
    }
}

TEST(balanced_split, names_the_worker_whose_piece_differs) {
    struct expectation {
        std::vector<std::size_t> line;
        std::size_t length, off, want;
    };
    for (const auto& e : std::vector<expectation>{{{2, 2, 3, 2}, 8, 2, 2},   // the sum 9 would blame worker 0
                                                  {{2, 3, 2, 2}, 8, 1, 2},
                                                  {{2, 2, 2, 5}, 8, 3, 2},
                                                  {{0, 0, 5, 0}, 0, 2, 0},
                                                  {{3, 3, 1, 3}, 12, 2, 3},
                                                  {{2, 2, 3, 3}, 8, 2, 2}}) {  // 8 and 12 tie: the smaller
        const auto s = along_line(e.line);
        EXPECT_EQ(s.length, e.length);
        EXPECT_EQ(s.off, e.off);
        EXPECT_EQ(s.want, e.want);
    }
}

// A 2 x 3 grid along dimension 1: the line is row 0; a worker of row 1 off it is named.
TEST(balanced_split, checks_every_worker_against_the_first_line) {
    const std::vector<std::size_t> extents{3, 3, 2, 3, 3, 3};  // row-major: worker 5 should have 2
    const auto s = check_balanced_split(shape_t{2, 3}, 1, [&](std::size_t w) { return extents[w]; });
    EXPECT_EQ(s.length, 8u);
    EXPECT_EQ(s.off, 5u);
    EXPECT_EQ(s.want, 2u);
}

// The odd piece on the first line: the majority of all the lines decides (that line alone would
// be a balanced split of another length, or, one worker long, any length).
TEST(balanced_split, the_majority_of_every_line_decides) {
    const std::vector<std::size_t> column{5, 4, 4, 4};  // grid 4 x 1 along dimension 1
    auto s = check_balanced_split(shape_t{4, 1}, 1, [&](std::size_t w) { return column[w]; });
    EXPECT_EQ(s.length, 4u);
    EXPECT_EQ(s.off, 0u);
    EXPECT_EQ(s.want, 4u);
    const std::vector<std::size_t> rows{6, 5, 5, 5, 5, 5, 5, 5, 5};  // grid 3 x 3 along dimension 1
    s = check_balanced_split(shape_t{3, 3}, 1, [&](std::size_t w) { return rows[w]; });
    EXPECT_EQ(s.length, 15u);
    EXPECT_EQ(s.off, 0u);
    EXPECT_EQ(s.want, 5u);
}

// The reason names the worker's line and the split of its sum, and the length most pieces fit
// where that differs: a user whose pieces [5,3] sum to 8 is told why 6 was expected.
TEST(balanced_split, the_reason_shows_the_line_and_the_split_most_pieces_fit) {
    const std::vector<std::size_t> extents{5, 5, 3, 3};  // grid 2 x 2 along dimension 0
    const auto s = check_balanced_split(shape_t{2, 2}, 0, [&](std::size_t w) { return extents[w]; });
    EXPECT_EQ(s.line, (std::vector<std::size_t>{5, 3}));
    EXPECT_EQ(distdl::detail::unbalanced_reason(s),
              "a balanced split: its line along that dimension has extents [5,3], and the balanced split of their sum "
              "8 over 2 is [4,4]; the most pieces fit the balanced split of 6, which gives it extent 3");
    // A line off the split of its own sum, which most pieces fit: no second length to name.
    const std::vector<std::size_t> lines{3, 2, 3, 2, 2, 3};  // grid 3 x 2 along dimension 1
    EXPECT_EQ(distdl::detail::unbalanced_reason(
                  check_balanced_split(shape_t{3, 2}, 1, [&](std::size_t w) { return lines[w]; })),
              "a balanced split: its line along that dimension has extents [2,3], and the balanced split of their sum "
              "5 over 2 is [3,2] (expected extent 3)");
    // A line balanced by itself beside lines of another length: the lines disagree.
    const std::vector<std::size_t> grid_2x3{4, 4, 3, 4, 4, 3};  // along dimension 0: lines [4,4], [4,4], [3,3]
    EXPECT_EQ(distdl::detail::unbalanced_reason(
                  check_balanced_split(shape_t{2, 3}, 0, [&](std::size_t w) { return grid_2x3[w]; })),
              "a balanced split: its line along that dimension has extents [3,3], the balanced split of 6, but every "
              "line along it must split the same length, and the most pieces fit the balanced split of 8, which "
              "gives it extent 4");
    // A sum beyond 64 bits: the line and the length most pieces fit.
    const std::size_t big = std::numeric_limits<std::size_t>::max() / 2 + 1;
    const auto huge = along_line({big, big});
    EXPECT_EQ(distdl::detail::unbalanced_reason(huge),
              "a balanced split: its line along that dimension has extents [" + std::to_string(big) + "," +
                  std::to_string(big) + "]; the most pieces fit the balanced split of " + std::to_string(huge.length) +
                  ", which gives it extent " + std::to_string(huge.want));
}

// Extents near the top of size_t (zero-volume pieces may have them): no candidate length wraps
// into a split they would match.
TEST(balanced_split, huge_extents_are_not_balanced) {
    const std::size_t big = std::numeric_limits<std::size_t>::max() / 2;
    EXPECT_FALSE(along_line({big, big, 1, big}).balanced());
    EXPECT_FALSE(along_line({big + 1, big + 1}).balanced());  // the sum wraps to 0
}

}  // namespace
