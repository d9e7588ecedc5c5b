// kernels::max_pool / avg_pool against the serial oracle (reference/pool.hpp) on a seeded
// random sweep of shapes and geometries, plus argument checks.
#include <gtest/gtest.h>

#include <sstream>

#include "kernels/pooling.hpp"
#include "reference/pool.hpp"
#include "tests/kernels/kernel_test_util.hpp"

using namespace distdl;

namespace {

struct pool_case {
    kernels::pool_geometry g;
    shape_t x_shape;
    std::string describe() const {
        std::ostringstream out;
        out << "x " << format_list(x_shape) << " kernel " << format_list(g.kernel_size) << " stride "
            << format_list(g.stride) << " padding " << format_list(g.padding) << " dilation "
            << format_list(g.dilation);
        return out.str();
    }
};

pool_case random_case(std::size_t dims, bool dilated, test::stream& gen) {
    pool_case c;
    c.x_shape = {test::pick(gen, 0, 9) == 0 ? 0 : test::pick(gen, 1, 2),
                 test::pick(gen, 0, 9) == 0 ? 0 : test::pick(gen, 1, 3)};
    const bool default_stride = test::pick(gen, 0, 3) == 0;
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t k = test::pick(gen, 1, 4), s = test::pick(gen, 1, 4), p = test::pick(gen, 0, 4),
                          d = dilated ? test::pick(gen, 1, 3) : 1;
        const std::size_t span = d * (k - 1) + 1;
        c.g.kernel_size.push_back(k);
        if (!default_stride) c.g.stride.push_back(s);
        c.g.padding.push_back(p);
        c.g.dilation.push_back(d);
        c.x_shape.push_back(std::max<std::size_t>(1, span > 2 * p ? span - 2 * p : 1) + test::pick(gen, 0, 7));
    }
    return c;
}

// Small integers, so windows often hold ties (the first maximum must win).
template <class T>
tensor<T> tied_tensor(const shape_t& shape, test::stream& gen) {
    tensor<T> t(shape);
    for (auto& v : t) v = T(double(test::pick(gen, 0, 6)) - 3.0);
    return t;
}

ref::pool_geometry as_ref(const kernels::pool_geometry& g) { return {g.kernel_size, g.stride, g.padding, g.dilation}; }

template <class T>
void sweep(std::uint64_t seed) {
    test::stream gen(seed);
    for (std::size_t dims = 1; dims <= 3; ++dims)
        for (int i = 0; i < 40; ++i) {
            {
                const auto c = random_case(dims, true, gen);
                SCOPED_TRACE("max " + c.describe());
                const kernels::max_pool<T> pool(c.g);
                const auto x = tied_tensor<T>(c.x_shape, gen);
                tensor<T> y, dx = test::random_tensor<T>(c.x_shape, gen);
                pool.forward(x, y);
                EXPECT_EQ(y, ref::max_pool(x, as_ref(c.g)));  // a selection: exact
                const auto dy = test::random_tensor<T>(shape_of(y), gen);
                pool.backward(x, dy, dx);
                EXPECT_LE(test::relative_error(dx, ref::max_pool_adjoint(x, dy, as_ref(c.g))), test::tolerance<T>());
            }
            {
                const auto c = random_case(dims, false, gen);
                SCOPED_TRACE("avg " + c.describe());
                const kernels::avg_pool<T> pool(c.g);
                const auto x = test::random_tensor<T>(c.x_shape, gen);
                tensor<T> y, dx = test::random_tensor<T>(c.x_shape, gen);
                pool.forward(x, y);
                EXPECT_LE(test::relative_error(y, ref::avg_pool(x, as_ref(c.g))), test::tolerance<T>());
                const auto dy = test::random_tensor<T>(shape_of(y), gen);
                pool.backward(dy, c.x_shape, dx);
                EXPECT_LE(test::relative_error(dx, ref::avg_pool_adjoint(dy, c.x_shape, as_ref(c.g))),
                          test::tolerance<T>());
            }
        }
}

}  // namespace

TEST(kernel_pooling, float_matches_reference) { sweep<float>(21); }
TEST(kernel_pooling, double_matches_reference) { sweep<double>(22); }

TEST(kernel_pooling, padding_only_windows_give_minus_infinity_and_no_gradient) {
    const kernels::max_pool<double> pool({.kernel_size = {1}, .stride = {1}, .padding = {1}});
    tensor<double> x(shape_t{1, 1, 1}, 4.0), dy(shape_t{1, 1, 3}), y, dx;
    dy(0, 0, 0) = 1.0;
    dy(0, 0, 1) = 2.0;
    dy(0, 0, 2) = 3.0;
    pool.forward(x, y);
    ASSERT_EQ(shape_of(y), (shape_t{1, 1, 3}));
    EXPECT_EQ(y(0, 0, 0), -INFINITY);
    EXPECT_EQ(y(0, 0, 1), 4.0);
    EXPECT_EQ(y(0, 0, 2), -INFINITY);
    pool.backward(x, dy, dx);
    EXPECT_EQ(dx, tensor<double>(shape_t{1, 1, 1}, 2.0));
}

TEST(kernel_pooling, refuses_bad_arguments) {
    EXPECT_THROW(kernels::avg_pool<float>({.kernel_size = {2}, .dilation = {2}}), invalid_argument);
    EXPECT_THROW(kernels::max_pool<float>({.kernel_size = {}}), invalid_argument);
    EXPECT_THROW(kernels::max_pool<float>({.kernel_size = {2, 2}, .stride = {1, 1, 1}}), invalid_argument);
    const kernels::max_pool<double> pool({.kernel_size = {3}});
    tensor<double> y;
    EXPECT_THROW(pool.forward(tensor<double>(xt::zeros<double>(shape_t{1, 1, 2})), y), invalid_argument);
    EXPECT_THROW(pool.forward(tensor<double>(xt::zeros<double>(shape_t{1, 1, 3, 3})), y), invalid_argument);
}
