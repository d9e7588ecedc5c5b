// The serial pooling oracle: hand-worked examples and dot-product (adjoint) tests.
#include <gtest/gtest.h>

#include <limits>

#include "reference/pool.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

using namespace distdl;
using distdl::ref::pool_geometry;

namespace {

template <class T>
tensor<T> make(const shape_t& shape, std::vector<double> values) {
    tensor<T> t(shape);
    EXPECT_EQ(values.size(), t.size());
    for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = T(values[i]);
    return t;
}

constexpr double inf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(ref_max_pool, by_hand_1d) {
    const auto x = make<double>({1, 1, 5}, {1, 3, 2, 5, 4});
    EXPECT_EQ(ref::max_pool(x, pool_geometry{{2}}), make<double>({1, 1, 2}, {3, 5}));  // stride = kernel
    // padded [-inf,1,3,2,5,4,-inf]
    EXPECT_EQ(ref::max_pool(x, pool_geometry{{2}, {}, {1}}), make<double>({1, 1, 3}, {1, 3, 5}));
    // dilation 2, stride 1: windows (0,2), (1,3), (2,4)
    const auto xd = make<double>({1, 1, 5}, {1, 9, 2, 8, 3});
    const pool_geometry dil{{2}, {1}, {}, {2}};
    EXPECT_EQ(ref::max_pool(xd, dil), make<double>({1, 1, 3}, {2, 9, 3}));
    EXPECT_EQ(ref::max_pool_adjoint(xd, make<double>({1, 1, 3}, {1, 10, 100}), dil),
              make<double>({1, 1, 5}, {0, 10, 1, 0, 100}));
}

TEST(ref_max_pool, gradient_goes_to_first_maximum) {
    const auto x = make<float>({1, 1, 3}, {2, 2, 1});
    EXPECT_EQ(ref::max_pool_adjoint(x, make<float>({1, 1, 1}, {5}), pool_geometry{{3}}),
              make<float>({1, 1, 3}, {5, 0, 0}));
    // 2-d: ties at (0,1) and (1,0); row-major window order picks (0,1).
    const auto x2 = make<double>({1, 1, 2, 2}, {0, 7, 7, 1});
    EXPECT_EQ(ref::max_pool_adjoint(x2, make<double>({1, 1, 1, 1}, {3}), pool_geometry{{2}}),
              make<double>({1, 1, 2, 2}, {0, 3, 0, 0}));
    // overlapping windows (stride 1) add their gradients
    const auto x3 = make<double>({1, 1, 3}, {0, 5, 0});
    EXPECT_EQ(ref::max_pool_adjoint(x3, make<double>({1, 1, 2}, {1, 2}), pool_geometry{{2}, {1}}),
              make<double>({1, 1, 3}, {0, 3, 0}));
}

TEST(ref_max_pool, by_hand_2d_3d_and_padding_only_windows) {
    const auto x = make<double>({1, 2, 2, 2}, {1, 2, 3, 4, 8, 7, 6, 5});
    EXPECT_EQ(ref::max_pool(x, pool_geometry{{2}}), make<double>({1, 2, 1, 1}, {4, 8}));
    EXPECT_EQ(ref::max_pool_adjoint(x, make<double>({1, 2, 1, 1}, {7, 9}), pool_geometry{{2}}),
              make<double>({1, 2, 2, 2}, {0, 0, 0, 7, 9, 0, 0, 0}));
    const auto x3 = make<double>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 8, 7});
    // window j2 = 0 holds {1,3,5,8}, j2 = 1 holds {2,4,6,7}
    EXPECT_EQ(ref::max_pool(x3, pool_geometry{{2, 2, 1}}), make<double>({1, 1, 1, 1, 2}, {8, 7}));
    // kernel 1, padding 1: the outer windows see only padding
    EXPECT_EQ(ref::max_pool(make<double>({1, 1, 1}, {1}), pool_geometry{{1}, {1}, {1}}),
              make<double>({1, 1, 3}, {-inf, 1, -inf}));
}

TEST(ref_avg_pool, by_hand) {
    // padded [0,1,2,3,4,0], kernel 2, stride 2; the padding counts in the divisor
    const auto x = make<double>({1, 1, 4}, {1, 2, 3, 4});
    const pool_geometry g{{2}, {}, {1}};
    EXPECT_EQ(ref::avg_pool(x, g), make<double>({1, 1, 3}, {0.5, 2.5, 2}));
    EXPECT_EQ(ref::avg_pool_adjoint(make<double>({1, 1, 3}, {2, 4, 6}), {1, 1, 4}, g),
              make<double>({1, 1, 4}, {1, 2, 2, 3}));
    EXPECT_EQ(ref::avg_pool(make<double>({1, 1, 2, 2}, {1, 2, 3, 4}), pool_geometry{{2}}),
              make<double>({1, 1, 1, 1}, {2.5}));
    // 3-d, kernel (1,2,2) over a 2×2×2 input with padding (0,0,1): windows cover columns {pad,0} and {1,pad}
    EXPECT_EQ(ref::avg_pool(make<double>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}),
                            pool_geometry{{1, 2, 2}, {}, {0, 0, 1}}),
              make<double>({1, 1, 2, 1, 2}, {1, 1.5, 3, 3.5}));
}

TEST(ref_pool, refuses_bad_geometry) {
    const tensor<double> x = xt::zeros<double>(shape_t{1, 1, 4});
    EXPECT_THROW(ref::avg_pool(x, pool_geometry{{2}, {}, {}, {2}}), invalid_argument);  // avg: no dilation
    EXPECT_THROW(ref::max_pool(x, pool_geometry{{5}}), invalid_argument);               // does not fit
    EXPECT_THROW(ref::max_pool(x, pool_geometry{}), invalid_argument);                  // no kernel
}

TEST(ref_pool, dot_product_tests) {
    const std::vector<std::pair<shape_t, pool_geometry>> problems = {
        {{2, 3, 11}, {{3}, {2}, {1}, {2}}},
        {{1, 2, 7, 6}, {{2, 3}, {1, 2}, {1, 1}, {2, 1}}},
        {{1, 2, 5, 4, 6}, {{2}, {1}, {1}, {1}}},
    };
    std::uint64_t seed = 7;
    for (const auto& [x_shape, g] : problems) {
        const auto x = verify::random_tensor<double>(x_shape, seed++);
        const auto dy = verify::random_tensor<double>(ref::pool_output_shape(x_shape, g), seed++);
        // Max pooling is linear on the piece containing x (it selects x at fixed positions), so
        // its derivative at x applied to x is max_pool(x) itself.
        EXPECT_LT(verify::adjoint_error(x, ref::max_pool(x, g), dy, ref::max_pool_adjoint(x, dy, g)), 1e-13);
        pool_geometry avg = g;
        avg.dilation.clear();
        EXPECT_LT(verify::adjoint_error(x, ref::avg_pool(x, avg),
                                         verify::random_tensor<double>(ref::pool_output_shape(x_shape, avg), 99),
                                         ref::avg_pool_adjoint(
                                             verify::random_tensor<double>(ref::pool_output_shape(x_shape, avg), 99),
                                             x_shape, avg)),
                  1e-13);
    }
}
