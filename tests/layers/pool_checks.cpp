// MaxPool / AvgPool 1d-3d (layers/pool_max.hpp, layers/pool_avg.hpp) on both transports:
// small cases with values worked out by hand (negative inputs next to the boundary padding,
// ties across a halo, a window of padding only), a randomized sweep with fixed seeds over
// partition shapes, worker placements and pool parameters against reference/pool.hpp (with
// integer data half of the time, so ties are common and the first-maximum rule is tested
// across halos), storage reuse across calls, and the refusals on every worker.
#include <cmath>
#include <limits>

#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "reference/pool.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "verify/runners/pieces.hpp"

namespace {

using distdl::cartesian_partition;
using distdl::distributed_avg_pool;
using distdl::distributed_max_pool;
using distdl::pool_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_close;
using distdl::testing::make_partition;
using distdl::testing::rank_range;
using distdl::testing::same_bits;

constexpr double inf = std::numeric_limits<double>::infinity();

// A 1 × 1 × L tensor of the given values.
template <class T>
tensor<T> row(const std::vector<double>& values) {
    tensor<T> t(shape_t{1, 1, values.size()});
    for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<T>(values[i]);
    return t;
}

// Worker i of `workers` holds pieces[i]; everyone else {0}.
template <class T>
tensor<T> mine(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& workers,
               const std::vector<tensor<T>>& pieces) {
    const int at = distdl::verify::runners::rank_in(workers, std::size_t(world->rank()));
    return at >= 0 ? pieces[std::size_t(at)] : distdl::zero_volume<T>();
}

template <class T>
void expect_pieces(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& workers,
                   const tensor<T>& got, const std::vector<tensor<T>>& want, bool exact, const std::string& what) {
    const tensor<T> expected = mine(world, workers, want);
    if (exact) {
        if (!same_bits(got, expected))
            DCHECK_FAIL_(what << " on rank " << world->rank() << ": got " << distdl::testing::show(got) << ", expected "
                              << distdl::testing::show(expected));
    } else {
        check_close(got, expected, what);
    }
}

// ---------------------------------------------------------------- worked by hand

// x = [-3,-1,-2,-5,-4,-6] in pieces of 2 on 3 workers, kernel 2, stride 1, padding 1: the
// padded input is [-inf,-3,-1,-2,-5,-4,-6,-inf] (a zero padding would give 0 at both ends),
// 7 outputs in blocks of 3, 2, 2.
template <class T>
void check_max_boundary(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {2, 0, 1};  // reordered on purpose
    const auto P_x = make_partition(world, workers, {1, 1, 3});
    distributed_max_pool<T> layer(P_x, {1, 1, 6}, pool_options{.kernel_size = {2}, .stride = {1}, .padding = {1}});
    const tensor<T> x = mine<T>(world, workers, {row<T>({-3, -1}), row<T>({-2, -5}), row<T>({-4, -6})});
    tensor<T> y = layer.forward(x);
    expect_pieces<T>(world, workers, y, {row<T>({-3, -1, -1}), row<T>({-2, -4}), row<T>({-4, -6})}, true, "max forward");
    // dy = 1..7: each goes to its window's first maximum: x0 <- 1, x1 <- 2+3, x2 <- 4, x4 <- 5+6, x5 <- 7.
    const tensor<T> dy = mine<T>(world, workers, {row<T>({1, 2, 3}), row<T>({4, 5}), row<T>({6, 7})});
    const tensor<T> dx = layer.adjoint(dy);
    expect_pieces<T>(world, workers, dx, {row<T>({1, 5}), row<T>({4, 0}), row<T>({11, 7})}, true, "max adjoint");
}

// Ties across a halo: x = [1,1 | 1,1], kernel 2, stride 1: window 1 holds x1 (worker 0) and
// x2 (worker 1), equal; the gradient goes to the first, x1.
template <class T>
void check_max_tie_across_halo(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {0, 1};
    const auto P_x = make_partition(world, workers, {1, 1, 2});
    distributed_max_pool<T> layer(P_x, {1, 1, 4}, pool_options{.kernel_size = {2}, .stride = {1}});
    const tensor<T> x = mine<T>(world, workers, {row<T>({1, 1}), row<T>({1, 1})});
    const tensor<T> y = layer.forward(x);
    expect_pieces<T>(world, workers, y, {row<T>({1, 1}), row<T>({1})}, true, "tie forward");
    const tensor<T> dx = layer.adjoint(mine<T>(world, workers, {row<T>({1, 2}), row<T>({3})}));
    expect_pieces<T>(world, workers, dx, {row<T>({1, 2}), row<T>({3, 0})}, true, "tie adjoint");
}

// x = [2 | 4], kernel 2, stride 1, padding 2: windows [-inf,-inf], [-inf,2], [2,4], [4,-inf],
// [-inf,-inf]; a window of padding only is -inf (as the reference) and takes no gradient.
template <class T>
void check_max_padding_only_window(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {0, 1};
    const auto P_x = make_partition(world, workers, {1, 1, 2});
    distributed_max_pool<T> layer(P_x, {1, 1, 2}, pool_options{.kernel_size = {2}, .stride = {1}, .padding = {2}});
    const tensor<T> y = layer.forward(mine<T>(world, workers, {row<T>({2}), row<T>({4})}));
    expect_pieces<T>(world, workers, y, {row<T>({-inf, 2, 4}), row<T>({4, -inf})}, true, "padding-only forward");
    const tensor<T> dx = layer.adjoint(mine<T>(world, workers, {row<T>({1, 2, 4}), row<T>({8, 16})}));
    expect_pieces<T>(world, workers, dx, {row<T>({2}), row<T>({12})}, true, "padding-only adjoint");
}

// Average, kernel 3, stride 1, padding 1 of [1..6] on 3 workers: window sums 3, 6, 9, 12, 15,
// 11 (the last holds padding, counted in the divisor).
template <class T>
void check_avg_boundary(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {0, 1, 2};
    const auto P_x = make_partition(world, workers, {1, 1, 3});
    distributed_avg_pool<T> layer(P_x, {1, 1, 6}, pool_options{.kernel_size = {3}, .stride = {1}, .padding = {1}});
    const tensor<T> y = layer.forward(mine<T>(world, workers, {row<T>({1, 2}), row<T>({3, 4}), row<T>({5, 6})}));
    expect_pieces<T>(world, workers, y, {row<T>({1, 2}), row<T>({3, 4}), row<T>({5, 11.0 / 3})}, false, "avg forward");
    // dy = 3 everywhere: each input gets 1 per window that covers it (x0 and x5: 2, others 3).
    const tensor<T> dx = layer.adjoint(mine<T>(world, workers, {row<T>({3, 3}), row<T>({3, 3}), row<T>({3, 3})}));
    expect_pieces<T>(world, workers, dx, {row<T>({2, 3}), row<T>({3, 3}), row<T>({3, 2})}, false, "avg adjoint");
}

// ---------------------------------------------------------------- randomized sweep

// Deterministic draws (the same on every rank, platform and transport).
struct draws {
    std::uint64_t state;
    std::size_t below(std::size_t n) {
        state = distdl::verify::mix_seed(state);
        return std::size_t(state % n);
    }
    std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }
};

struct sweep_case {
    bool max = true;
    std::size_t dims = 1;
    shape_t P_x, x;
    std::vector<int> workers;
    std::vector<std::size_t> k, s, p, d;
    bool integers = false;  // small integers: many ties
    std::string describe() const {
        using distdl::format_list;
        return std::string(max ? "MaxPool" : "AvgPool") + std::to_string(dims) + "d P_x " + format_list(P_x) + " on " +
               format_list(workers) + " x " + format_list(x) + " k " + format_list(k) + " s " + format_list(s) +
               " p " + format_list(p) + " d " + format_list(d) + (integers ? " (integers)" : "");
    }
};

// A configuration that fits a world of `world_size`: spatial extents 1..9 split over up to
// the whole world (so pieces are often empty or shorter than the halo), batch or channels
// split now and then, padding up to the dilated kernel extent (windows of padding only).
sweep_case draw_case(draws& r, int world_size) {
    sweep_case c;
    c.max = r.below(2) == 0;
    c.dims = r.between(1, 3);
    c.integers = r.below(2) == 0;
    c.x = {r.between(1, 2), r.between(1, 3)};
    c.P_x = {1, 1};
    std::size_t workers = 1;
    for (std::size_t e = 0; e < c.dims; ++e) {
        const std::size_t parts = r.between(1, std::max<std::size_t>(1, std::size_t(world_size) / workers));
        c.P_x.push_back(parts);
        workers *= parts;
        const std::size_t k = r.between(1, 4), d = c.max ? r.between(1, 3) : 1, span = d * (k - 1) + 1;
        const std::size_t p = r.below(span + 1);  // up to span: windows of padding only (max: -inf)
        const std::size_t shortest = span > 2 * p ? span - 2 * p : 1;
        const std::size_t length = r.between(shortest, std::max<std::size_t>(shortest, 9));
        c.x.push_back(length);
        c.k.push_back(k);
        c.s.push_back(r.between(1, 3));
        c.p.push_back(p);
        c.d.push_back(d);
    }
    if (workers * 2 <= std::size_t(world_size) && r.below(4) == 0) {  // split the channels too
        c.P_x[1] = 2;
        workers *= 2;
    }
    // Workers: a random choice of world ranks in a random order.
    std::vector<int> pool = rank_range(0, world_size);
    for (std::size_t i = 0; i < workers; ++i) {
        std::swap(pool[i], pool[i + r.below(pool.size() - i)]);
        c.workers.push_back(pool[i]);
    }
    return c;
}

template <class T>
tensor<T> sweep_input(const sweep_case& c, std::uint64_t seed) {
    tensor<T> x = distdl::verify::random_tensor<T>(c.x, seed);
    if (c.integers)
        for (auto& v : x) v = std::floor(v * 3);  // -3..2
    return x;
}

template <class T>
void run_sweep_case(const std::shared_ptr<distdl::communicator>& world, const sweep_case& c, std::uint64_t seed) {
    const auto P_x = make_partition(world, c.workers, c.P_x);
    const pool_options options{.kernel_size = c.k, .stride = c.s, .padding = c.p, .dilation = c.d};
    const distdl::ref::pool_geometry g{c.k, c.s, c.p, c.d};
    std::unique_ptr<distdl::module<T>> layer;
    if (c.max) layer = std::make_unique<distributed_max_pool<T>>(P_x, c.x, options);
    else layer = std::make_unique<distributed_avg_pool<T>>(P_x, c.x, options);
    const auto split = [&](const tensor<T>& global) {
        return distdl::verify::runners::split_pieces(global, c.P_x, distdl::verify::input_split::balanced);
    };
    tensor<T> y, dx;  // reused across the two rounds, as a training loop would
    for (std::uint64_t round = 0; round < 2; ++round) {
        const tensor<T> x = sweep_input<T>(c, seed * 4 + round);
        const tensor<T> want_y = c.max ? distdl::ref::max_pool(x, g) : distdl::ref::avg_pool(x, g);
        const tensor<T> dy = distdl::verify::random_tensor<T>(distdl::shape_of(want_y), seed * 4 + round + 2);
        const tensor<T> want_dx =
            c.max ? distdl::ref::max_pool_adjoint(x, dy, g) : distdl::ref::avg_pool_adjoint(dy, c.x, g);
        const T* y_storage = y.size() ? y.data() : nullptr;
        layer->forward(mine(world, c.workers, split(x)), y);
        try {
            expect_pieces(world, c.workers, y, split(want_y), c.max, "forward");
            layer->adjoint(mine(world, c.workers, split(dy)), dx);
            expect_pieces(world, c.workers, dx, split(want_dx), false, "adjoint");
            if (round == 1 && y_storage) DCHECK(y.data() == y_storage);  // the same shape reuses the storage
        } catch (const distdl::testing::check_failure& e) {
            DCHECK_FAIL_(c.describe() << ", round " << round << ": " << e.what());
        }
    }
}

template <class T>
void sweep(const std::shared_ptr<distdl::communicator>& world, std::uint64_t seed, int count) {
    draws r{seed * 7919 + std::uint64_t(world->size())};
    for (int i = 0; i < count; ++i) run_sweep_case<T>(world, draw_case(r, world->size()), seed + std::uint64_t(i));
}

}  // namespace

DISTDL_CHECK(pool_worked_by_hand_double, world_size >= 3) {
    check_max_boundary<double>(world);
    check_max_tie_across_halo<double>(world);
    check_max_padding_only_window<double>(world);
    check_avg_boundary<double>(world);
}

DISTDL_CHECK(pool_worked_by_hand_float, world_size == 3 || world_size == 7) {
    check_max_boundary<float>(world);
    check_max_tie_across_halo<float>(world);
    check_max_padding_only_window<float>(world);
    check_avg_boundary<float>(world);
}

// 40 configurations per world size in double, 10 in float.
DISTDL_CHECK(pool_random_sweep_double, true) { sweep<double>(world, 101, 40); }
DISTDL_CHECK(pool_random_sweep_float, world_size % 4 == 1) { sweep<float>(world, 202, 10); }

// Refusals at construction, the same on every worker (the arguments are agreed first).
DISTDL_CHECK(pool_refuses_bad_configurations, world_size >= 2) {
    const auto P_x = make_partition(world, {0, 1}, {1, 1, 2});
    const auto P_x2d = make_partition(world, {0, 1}, {1, 2});
    DCHECK_THROWS(distributed_max_pool<double>(P_x, {1, 1, 4}, {.kernel_size = {7}, .padding = {1}}),
                  distdl::invalid_argument, "MaxPool1d: kernel 7 (dilation 1, extent 7) does not fit in spatial dimension 0");
    DCHECK_THROWS(distributed_avg_pool<double>(P_x, {1, 1, 8}, {.kernel_size = {2}, .dilation = {2}}),
                  distdl::invalid_argument, "AvgPool1d: dilation [2] given, expected 1");
    DCHECK_THROWS(distributed_max_pool<float>(P_x2d, {1, 1, 8}, {.kernel_size = {2}}), distdl::partition_error,
                  "MaxPool1d: P_x shape [1,2] has 2 dimensions, expected 3");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, {1, 1, 8}, {.kernel_size = {2, 2}}), distdl::invalid_argument,
                  "MaxPool1d: kernel_size [2,2] has 2 entries, expected 1 or 1");
    DCHECK_THROWS(distributed_avg_pool<double>(P_x, {1, 1, 8}, {.kernel_size = {2}, .spatial_dims = 2}),
                  distdl::invalid_argument, "AvgPool2d: global input shape [1,1,8] must be N");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, {1, 1, 8}, {}), distdl::invalid_argument,
                  "MaxPool1d: kernel_size is required");
    // Different arguments on different workers: refused on all of them, nobody waits.
    DCHECK_THROWS(distributed_max_pool<double>(P_x, {1, 1, world->rank() == 1 ? 9u : 8u}, {.kernel_size = {2}}),
                  distdl::invalid_argument, "global_shape");
}

// A piece of the wrong shape on one worker is refused on every worker of P_x, in both modes
// (halo exchange and direct); adjoint before forward is refused; the layer stays usable.
DISTDL_CHECK(pool_refuses_bad_pieces_everywhere, world_size >= 3) {
    const std::vector<int> workers = {0, 1, 2};
    const auto P_x = make_partition(world, workers, {1, 1, 3});
    const int me = world->rank();
    const bool in = me < 3;
    for (const bool direct : {false, true}) {
        // Direct: kernel 2 = stride on pieces of 4 (nothing moves); otherwise kernel 3, padding 1.
        const pool_options options = direct ? pool_options{.kernel_size = {2}}
                                            : pool_options{.kernel_size = {3}, .stride = {1}, .padding = {1}};
        distributed_max_pool<double> layer(P_x, {1, 2, 12}, options);
        auto piece = [&](std::size_t length) {
            return in ? tensor<double>(xt::ones<double>(shape_t{1, 2, length})) : distdl::zero_volume<double>();
        };
        if (in) {
            DCHECK_THROWS(layer.adjoint(piece(direct ? 2 : 4)), distdl::invalid_argument,
                          "MaxPool1d: adjoint() needs a successful forward() first");
            DCHECK_THROWS(layer.forward(me == 1 ? piece(5) : piece(4)), distdl::invalid_argument,
                          "expects a tensor of shape [1,2,4], got [1,2,5]");
        } else {
            layer.forward(piece(0));  // outside P_x: nothing to refuse
        }
        const tensor<double> y = layer.forward(piece(4));
        DCHECK_EQ(distdl::shape_of(y), in ? (shape_t{1, 2, direct ? 2u : 4u}) : (shape_t{0}));
        if (in)
            DCHECK_THROWS(layer.adjoint(me == 2 ? piece(3) : piece(direct ? 2 : 4)), distdl::invalid_argument,
                          "worker 2 of P_x shape [1,1,3] expects an output gradient of shape");
        const tensor<double> dx = layer.adjoint(in ? piece(direct ? 2 : 4) : distdl::zero_volume<double>());
        DCHECK_EQ(distdl::shape_of(dx), in ? (shape_t{1, 2, 4}) : (shape_t{0}));
    }
}
