// kernels::max_pool / avg_pool against the serial oracle (reference/pool.hpp) on a seeded
// random sweep of shapes and geometries, plus argument checks.
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
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

// Columns [from, to) of the last dimension of t (every other dimension whole).
template <class T>
tensor<T> columns(const tensor<T>& t, std::size_t from, std::size_t to) {
    shape_t shape = shape_of(t);
    const std::size_t L = shape.back(), rows = L == 0 ? 0 : t.size() / L;
    shape.back() = to - from;
    tensor<T> out(shape);
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t i = from; i < to; ++i) out.data()[r * (to - from) + i - from] = t.data()[r * L + i];
    return out;
}

// The input split along its last dimension into left columns | array | right columns
// (pool_sides): forward_box / backward_box over the whole output give the same bits as the
// whole-tensor kernels (the same taps in the same order), and the saved maxima name the same
// elements.
template <class T>
void sides_sweep(std::uint64_t seed) {
    test::stream gen(seed);
    for (std::size_t dims = 1; dims <= 3; ++dims)
        for (int i = 0; i < 30; ++i) {
            const auto c = random_case(dims, true, gen);
            pool_case a = c;  // no dilation for avg
            a.g.dilation.clear();
            const std::size_t L = c.x_shape.back();
            const std::size_t left = test::pick(gen, 0, L), right = test::pick(gen, 0, L - left);
            SCOPED_TRACE(c.describe() + " left " + std::to_string(left) + " right " + std::to_string(right));
            const auto x = tied_tensor<T>(c.x_shape, gen);
            const tensor<T> xl = columns(x, 0, left), xm = columns(x, left, L - right), xr = columns(x, L - right, L);
            const shape_t xm_shape = shape_of(xm);
            const auto region = [&](const kernels::pool_geometry& g, const shape_t& y_shape) {
                kernels::pool_region r;
                for (std::size_t e = 0; e < dims; ++e) {
                    const std::int64_t shift = e + 1 == dims ? std::int64_t(left) : 0;
                    r.offset.push_back(std::int64_t(g.padding[e]) + shift);
                    r.start.push_back(0);
                    r.stop.push_back(y_shape[e + 2]);
                }
                return r;
            };
            {
                const kernels::max_pool<T> pool(c.g);
                tensor<T> y;
                kernels::pool_argmax argmax;
                pool.forward(x, y, argmax);
                const shape_t y_shape = shape_of(y);
                tensor<T> ys(y_shape);
                kernels::pool_argmax at(y.size());
                pool.forward_box(xm.data(), xm_shape, region(pool.geometry(), y_shape), ys.data(), y_shape, at.data(),
                                 {xl.data(), left, xr.data(), right});
                EXPECT_EQ(ys, y);
                // The saved maxima, mapped back to the whole input's plane.
                const std::size_t rows = L == 0 ? 0 : volume(shape_t(c.x_shape.begin() + 2, c.x_shape.end())) / L;
                const std::size_t V = rows * (L - left - right), VL = rows * left;
                const std::size_t M = volume(shape_t(y_shape.begin() + 2, y_shape.end()));
                for (std::size_t q = 0; q < at.size(); ++q) {
                    const std::int64_t v = at[q];
                    std::int64_t whole = -1;
                    if (v >= 0 && std::size_t(v) < V) whole = std::int64_t(v / (L - left - right) * L + left + v % (L - left - right));
                    else if (v >= 0 && std::size_t(v) < V + VL) whole = std::int64_t((v - V) / left * L + (v - V) % left);
                    else if (v >= 0) whole = std::int64_t((v - V - VL) / right * L + L - right + (v - V - VL) % right);
                    ASSERT_EQ(whole, argmax[q]) << "output " << q << " (plane volume " << M << ")";
                }
                const auto dy = test::random_tensor<T>(y_shape, gen);
                tensor<T> dx;
                pool.backward(argmax, dy, c.x_shape, dx);
                tensor<T> gl(shape_of(xl), T(0)), gm(xm_shape, T(0)), gr(shape_of(xr), T(0));
                pool.backward_box(at.data(), dy.data(), y_shape, region(pool.geometry(), y_shape), gm.data(), xm_shape,
                                  {gl.data(), left, gr.data(), right});
                EXPECT_EQ(columns(dx, 0, left), gl);
                EXPECT_EQ(columns(dx, left, L - right), gm);
                EXPECT_EQ(columns(dx, L - right, L), gr);
            }
            {
                const kernels::avg_pool<T> pool(a.g);
                tensor<T> y;
                pool.forward(x, y);
                const shape_t y_shape = shape_of(y);
                tensor<T> ys(y_shape);
                pool.forward_box(xm.data(), xm_shape, region(pool.geometry(), y_shape), ys.data(), y_shape,
                                 {xl.data(), left, xr.data(), right});
                EXPECT_EQ(ys, y);
                const auto dy = test::random_tensor<T>(y_shape, gen);
                tensor<T> dx;
                pool.backward(dy, c.x_shape, dx);
                tensor<T> gl(shape_of(xl), T(0)), gm(xm_shape, T(0)), gr(shape_of(xr), T(0));
                pool.backward_box(dy.data(), y_shape, region(pool.geometry(), y_shape), gm.data(), xm_shape,
                                  {gl.data(), left, gr.data(), right});
                EXPECT_EQ(columns(dx, 0, left), gl);
                EXPECT_EQ(columns(dx, left, L - right), gm);
                EXPECT_EQ(columns(dx, L - right, L), gr);
            }
        }
}

// backward_box over a random box of outputs (often empty, often leaving rows of dx unread):
// overwriting a dx full of NaN gives the bits of adding into a zeroed dx.
template <class T>
void overwrite_sweep(std::uint64_t seed) {
    test::stream gen(seed);
    for (std::size_t dims = 1; dims <= 3; ++dims)
        for (int i = 0; i < 40; ++i) {
            const auto c = random_case(dims, true, gen);
            pool_case a = c;  // no dilation for avg
            a.g.dilation.clear();
            const kernels::max_pool<T> max_pool(c.g);
            const kernels::avg_pool<T> avg_pool(a.g);
            const shape_t y_shape = max_pool.output_shape(c.x_shape), avg_y_shape = avg_pool.output_shape(c.x_shape);
            const auto described = [](const pool_case& pc, const kernels::pool_region& r) {
                return pc.describe() + " box [" + format_list(r.start) + ", " + format_list(r.stop) + ")";
            };
            const auto box = [&](const kernels::pool_geometry& g, const shape_t& y) {
                kernels::pool_region r;
                for (std::size_t e = 0; e < dims; ++e) {
                    const std::size_t start = test::pick(gen, 0, y[e + 2]);
                    r.offset.push_back(std::int64_t(g.padding[e]));
                    r.start.push_back(start);
                    r.stop.push_back(test::pick(gen, start, y[e + 2]));
                }
                return r;
            };
            const auto x = tied_tensor<T>(c.x_shape, gen);
            const T nan = std::numeric_limits<T>::quiet_NaN();
            {
                tensor<T> y;
                kernels::pool_argmax argmax;
                max_pool.forward(x, y, argmax);
                const auto dy = test::random_tensor<T>(y_shape, gen);
                const auto r = box(max_pool.geometry(), y_shape);
                SCOPED_TRACE("max " + described(c, r));
                tensor<T> added(c.x_shape, T(0)), overwritten(c.x_shape, nan);
                max_pool.backward_box(argmax.data(), dy.data(), y_shape, r, added.data(), c.x_shape);
                max_pool.backward_box(argmax.data(), dy.data(), y_shape, r, overwritten.data(), c.x_shape, {},
                                      kernels::pool_dx::overwrite);
                EXPECT_EQ(overwritten, added);
            }
            {
                const auto dy = test::random_tensor<T>(avg_y_shape, gen);
                const auto r = box(avg_pool.geometry(), avg_y_shape);
                SCOPED_TRACE("avg " + described(a, r));
                tensor<T> added(a.x_shape, T(0)), overwritten(a.x_shape, nan);
                avg_pool.backward_box(dy.data(), avg_y_shape, r, added.data(), a.x_shape);
                avg_pool.backward_box(dy.data(), avg_y_shape, r, overwritten.data(), a.x_shape, {},
                                      kernels::pool_dx::overwrite);
                EXPECT_EQ(overwritten, added);
            }
        }
}

}  // namespace

TEST(kernel_pooling, overwriting_a_box_gives_the_bits_of_adding_into_zeros) {
    overwrite_sweep<float>(25);
    overwrite_sweep<double>(26);
}

TEST(kernel_pooling, side_columns_give_the_whole_tensors_bits) {
    sides_sweep<float>(23);
    sides_sweep<double>(24);
}

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

// Windows whose values are all -inf or start with NaN: the first element of the window is the
// maximum (y = -inf or NaN, the gradient goes to it), as in the reference; same bits either way.
TEST(kernel_pooling, windows_of_minus_infinity_or_nan_take_their_first_element) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const auto same_bits = [](const tensor<double>& a, const tensor<double>& b) {
        return shape_of(a) == shape_of(b) && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
    };
    const kernels::max_pool<double> pool({.kernel_size = {3}});
    tensor<double> x(shape_t{1, 1, 9}), dy(shape_t{1, 1, 3}), y, dx;
    const double values[] = {-inf, -inf, -inf, nan, 1.0, 2.0, 3.0, nan, -inf};
    for (std::size_t i = 0; i < 9; ++i) x(0, 0, i) = values[i];
    for (std::size_t j = 0; j < 3; ++j) dy(0, 0, j) = 1.0 + double(j);
    pool.forward(x, y);
    const tensor<double> want_y = ref::max_pool(x, as_ref({.kernel_size = {3}}));
    EXPECT_EQ(y(0, 0, 0), -inf);
    EXPECT_TRUE(std::isnan(y(0, 0, 1)));
    EXPECT_EQ(y(0, 0, 2), 3.0);
    EXPECT_TRUE(same_bits(y, want_y));
    pool.backward(x, dy, dx);
    const tensor<double> want_dx = ref::max_pool_adjoint(x, dy, as_ref({.kernel_size = {3}}));
    EXPECT_EQ(dx(0, 0, 0), 1.0);
    EXPECT_EQ(dx(0, 0, 3), 2.0);
    EXPECT_EQ(dx(0, 0, 6), 3.0);
    EXPECT_TRUE(same_bits(dx, want_dx));
}

TEST(kernel_pooling, refuses_bad_arguments) {
    EXPECT_THROW(kernels::avg_pool<float>({.kernel_size = {2}, .dilation = {2}}), invalid_argument);
    EXPECT_THROW(kernels::max_pool<float>({.kernel_size = {}}), invalid_argument);
    EXPECT_THROW(kernels::max_pool<float>({.kernel_size = {2, 2}, .stride = {1, 1, 1}}), invalid_argument);
    const kernels::max_pool<double> pool({.kernel_size = {3}});
    tensor<double> y;
    EXPECT_THROW(pool.forward(tensor<double>(xt::zeros<double>(shape_t{1, 1, 2})), y), invalid_argument);
    EXPECT_THROW(pool.forward(tensor<double>(xt::zeros<double>(shape_t{1, 1, 3, 3})), y), invalid_argument);
    // Maxima saved for an input of length 4 given with one of length 3 (both have 2 outputs at
    // kernel 3, stride 2, padding 1): refused, not scattered past dx.
    const kernels::max_pool<double> strided({.kernel_size = {3}, .stride = {2}, .padding = {1}});
    kernels::pool_argmax argmax;
    strided.forward(tensor<double>(xt::arange<double>(4.0).reshape({1, 1, 4})), y, argmax);
    tensor<double> dx;
    try {
        strided.backward(argmax, y, shape_t{1, 1, 3}, dx);
        ADD_FAILURE() << "maxima of another input were accepted";
    } catch (const invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "kernels::max_pool::backward: a saved maximum at 3 lies outside the input planes of 3 elements "
                  "(input shape [1,1,3]): maxima of another input's forward?");
    }
}
