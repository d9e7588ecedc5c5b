// kernels::copy_box and kernels::pad, element by element against index arithmetic.
#include <gtest/gtest.h>

#include "kernels/box_copy.hpp"

using namespace distdl;

TEST(kernel_box_copy, copies_and_adds_a_3d_box) {
    tensor<int> src(shape_t{4, 5, 6}), dst(shape_t{3, 7, 4});
    for (std::size_t i = 0; i < src.size(); ++i) src.data()[i] = int(i);
    for (std::size_t i = 0; i < dst.size(); ++i) dst.data()[i] = -int(i);
    const tensor<int> before = dst;
    // Box extent [2,3,4] from src [1,2,1] to dst [1,4,0].
    const shape_t extent{2, 3, 4};
    kernels::copy_box(src.data(), {4, 5, 6}, {1, 2, 1}, dst.data(), {3, 7, 4}, {1, 4, 0}, extent);
    for (std::size_t a = 0; a < 3; ++a)
        for (std::size_t b = 0; b < 7; ++b)
            for (std::size_t c = 0; c < 4; ++c) {
                const bool inside = a >= 1 && a < 3 && b >= 4 && b < 7 && c < 4;
                EXPECT_EQ(dst(a, b, c), inside ? src(a, b - 2, c + 1) : before(a, b, c)) << a << b << c;
            }
    kernels::copy_box(src.data(), {4, 5, 6}, {1, 2, 1}, dst.data(), {3, 7, 4}, {1, 4, 0}, extent,
                      kernels::copy_mode::add);
    EXPECT_EQ(dst(2, 6, 3), 2 * src(2, 4, 4));
    EXPECT_EQ(dst(0, 0, 0), before(0, 0, 0));
}

TEST(kernel_box_copy, rank_one_and_empty_boxes) {
    tensor<double> src = {1, 2, 3, 4, 5}, dst = xt::zeros<double>(shape_t{4});
    kernels::copy_box(src, {2}, dst, {1}, {3});
    EXPECT_EQ(dst, (tensor<double>{0, 3, 4, 5}));
    kernels::copy_box(src, {5}, dst, {4}, {0});  // empty: nothing, no error
    EXPECT_EQ(dst, (tensor<double>{0, 3, 4, 5}));
}

TEST(kernel_box_copy, pad_surrounds_with_zeros) {
    const tensor<float> x = {{1, 2}, {3, 4}};
    tensor<float> out;
    kernels::pad(x, {1, 0}, {0, 2}, out);
    EXPECT_EQ(out, (tensor<float>{{0, 0, 0, 0}, {1, 2, 0, 0}, {3, 4, 0, 0}}));
}

TEST(kernel_box_copy, refuses_boxes_outside_the_arrays) {
    tensor<double> src = xt::zeros<double>(shape_t{3, 3}), dst = xt::zeros<double>(shape_t{2, 2});
    EXPECT_THROW(kernels::copy_box(src, {2, 0}, dst, {0, 0}, {2, 2}), invalid_argument);
    EXPECT_THROW(kernels::copy_box(src, {0, 0}, dst, {1, 0}, {2, 2}), invalid_argument);
    EXPECT_THROW(kernels::copy_box(src, {0}, dst, {0}, {1}), invalid_argument);
}
