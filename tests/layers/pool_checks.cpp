// MaxPool / AvgPool 1d-3d (layers/pool_max.hpp, layers/pool_avg.hpp) on both transports:
// small cases with values worked out by hand (negative inputs next to the boundary padding,
// ties across a halo, a window of padding only) and the refusals on every worker. The
// randomized sweep against the reference is pool_sweep_test.cpp (simulator).
#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "tests/layers/pool_test_util.hpp"
#include "tests/misuse/misuse_util.hpp"
#include "verify/random.hpp"

namespace {

using distdl::distributed_avg_pool;
using distdl::distributed_max_pool;
using distdl::pool_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::expect_pieces;
using distdl::testing::inf;
using distdl::testing::make_partition;
using distdl::testing::mine;
using distdl::testing::row;
using distdl::testing::same_bits;
using distdl::testing::shaped;

// ---------------------------------------------------------------- worked by hand

// x = [-3,-1,-2,-5,-4,-6] in pieces of 2 on 3 workers, kernel 2, stride 1, padding 1: the
// padded input is [-inf,-3,-1,-2,-5,-4,-6,-inf] (a zero padding would give 0 at both ends),
// 7 outputs in blocks of 3, 2, 2.
template <class T>
void check_max_boundary(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {2, 0, 1};  // reordered on purpose
    const auto P_x = make_partition(world, workers, {1, 1, 3});
    distributed_max_pool<T> layer(P_x, shaped({1, 1, 6}, pool_options{.kernel_size = {2}, .stride = {1}, .padding = {1}}));
    const tensor<T> x = mine<T>(world, workers, {row<T>({-3, -1}), row<T>({-2, -5}), row<T>({-4, -6})});
    const std::vector<tensor<T>> want_y = {row<T>({-3, -1, -1}), row<T>({-2, -4}), row<T>({-4, -6})};
    tensor<T> y = layer.forward(x);
    expect_pieces<T>(world, workers, y, want_y, true, "max forward");
    // dy = 1..7: each goes to its window's first maximum: x0 <- 1, x1 <- 2+3, x2 <- 4, x4 <- 5+6, x5 <- 7.
    const tensor<T> dy = mine<T>(world, workers, {row<T>({1, 2, 3}), row<T>({4, 5}), row<T>({6, 7})});
    const std::vector<tensor<T>> want_dx = {row<T>({1, 5}), row<T>({4, 0}), row<T>({11, 7})};
    const tensor<T> dx = layer.adjoint(dy);
    expect_pieces<T>(world, workers, dx, want_dx, true, "max adjoint");
    // The output may be the input itself (module.hpp): the same results.
    tensor<T> aliased = x;
    layer.forward(aliased, aliased);
    expect_pieces<T>(world, workers, aliased, want_y, true, "max forward into x");
    aliased = dy;
    layer.adjoint(aliased, aliased);
    expect_pieces<T>(world, workers, aliased, want_dx, true, "max adjoint into dy");
}

// Ties across a halo: x = [1,1 | 1,1], kernel 2, stride 1: window 1 holds x1 (worker 0) and
// x2 (worker 1), equal; the gradient goes to the first, x1.
template <class T>
void check_max_tie_across_halo(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<int> workers = {0, 1};
    const auto P_x = make_partition(world, workers, {1, 1, 2});
    distributed_max_pool<T> layer(P_x, shaped({1, 1, 4}, pool_options{.kernel_size = {2}, .stride = {1}}));
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
    distributed_max_pool<T> layer(P_x, shaped({1, 1, 2}, pool_options{.kernel_size = {2}, .stride = {1}, .padding = {2}}));
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
    distributed_avg_pool<T> layer(P_x, shaped({1, 1, 6}, pool_options{.kernel_size = {3}, .stride = {1}, .padding = {1}}));
    const tensor<T> y = layer.forward(mine<T>(world, workers, {row<T>({1, 2}), row<T>({3, 4}), row<T>({5, 6})}));
    expect_pieces<T>(world, workers, y, {row<T>({1, 2}), row<T>({3, 4}), row<T>({5, 11.0 / 3})}, false, "avg forward");
    // dy = 3 everywhere: each input gets 1 per window that covers it (x0 and x5: 2, others 3).
    const tensor<T> dy = mine<T>(world, workers, {row<T>({3, 3}), row<T>({3, 3}), row<T>({3, 3})});
    const std::vector<tensor<T>> want_dx = {row<T>({2, 3}), row<T>({3, 3}), row<T>({3, 2})};
    const tensor<T> dx = layer.adjoint(dy);
    expect_pieces<T>(world, workers, dx, want_dx, false, "avg adjoint");
    tensor<T> aliased = dy;  // the gradient may be written over dy itself (module.hpp)
    layer.adjoint(aliased, aliased);
    expect_pieces<T>(world, workers, aliased, want_dx, false, "avg adjoint into dy");
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

// Refusals at construction, the same on every worker (the arguments are agreed first).
DISTDL_CHECK(pool_refuses_bad_configurations, world_size >= 2) {
    const auto P_x = make_partition(world, {0, 1}, {1, 1, 2});
    const auto P_x2d = make_partition(world, {0, 1}, {1, 2});
    DCHECK_THROWS(distributed_max_pool<double>(P_x, shaped({1, 1, 4}, {.kernel_size = {7}, .padding = {1}})),
                  distdl::invalid_argument, "MaxPool1d: kernel 7 (dilation 1, extent 7) does not fit in spatial dimension 0");
    DCHECK_THROWS(distributed_avg_pool<double>(P_x, shaped({1, 1, 8}, {.kernel_size = {2}, .dilation = {2}})),
                  distdl::invalid_argument, "AvgPool1d: dilation [2] given, expected 1");
    DCHECK_THROWS(distributed_max_pool<float>(P_x2d, shaped({1, 1, 8}, {.kernel_size = {2}})), distdl::partition_error,
                  "MaxPool1d: P_x shape [1,2] has 2 dimensions, expected 3");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, shaped({1, 1, 8}, {.kernel_size = {2, 2}})), distdl::invalid_argument,
                  "MaxPool1d: kernel_size [2,2] has 2 entries, expected 1 (one spatial dimension)");
    DCHECK_THROWS(distributed_avg_pool<double>(P_x, shaped({1, 1, 8}, {.kernel_size = {2}, .spatial_dims = 2})),
                  distdl::invalid_argument, "AvgPool2d: global input shape [1,1,8] must be N");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, shaped({1, 1, 8}, {})), distdl::invalid_argument,
                  "MaxPool1d: kernel_size is required");
    // Different arguments on different workers: refused on all of them, nobody waits.
    DCHECK_THROWS(distributed_max_pool<double>(P_x, shaped({1, 1, world->rank() == 1 ? 9u : 8u}, {.kernel_size = {2}})),
                  distdl::invalid_argument, "input_shape");
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
        distributed_max_pool<double> layer(P_x, shaped({1, 2, 12}, options));
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
                          "worker 2 (world rank 2) of P_x shape [1,1,3] expects an output gradient of shape");
        const tensor<double> dx = layer.adjoint(in ? piece(direct ? 2 : 4) : distdl::zero_volume<double>());
        DCHECK_EQ(distdl::shape_of(dx), in ? (shape_t{1, 2, 4}) : (shape_t{0}));
    }
}

// Without input_shape the layer learns the global shape from the pieces at the first forward
// (and again when they change): the same bits as a layer given the shape, in both modes and
// through a change of shape; the adjoint before any forward is refused.
template <class T, template <class> class Layer>
void check_learnt_shape(const std::shared_ptr<distdl::communicator>& world, const pool_options& options) {
    const std::vector<int> workers = {3, 1, 0, 2};
    const shape_t grid{1, 1, 2, 2};
    const auto P_x = make_partition(world, workers, grid);
    Layer<T> learnt(P_x, options);
    const bool in = world->rank() < 4;
    if (in)
        DCHECK_THROWS(learnt.adjoint(distdl::zero_volume<T>()), distdl::invalid_argument, "adjoint() needs");
    for (const shape_t& global : {shape_t{2, 3, 9, 7}, shape_t{2, 3, 9, 7}, shape_t{1, 2, 6, 10}}) {
        Layer<T> given(P_x, shaped(global, options));
        const auto split = [&](const tensor<T>& t) {
            return distdl::verify::runners::split_pieces(t, grid, distdl::verify::input_split::balanced);
        };
        const tensor<T> x = mine(world, workers, split(distdl::verify::random_tensor<T>(global, 5)));
        const tensor<T> y = given.forward(x), y_learnt = learnt.forward(x);
        DCHECK(distdl::testing::same_bits(y_learnt, y));
        const tensor<T> dy_here = in ? distdl::verify::random_tensor<T>(distdl::shape_of(y), 7 + std::uint64_t(world->rank()))
                                     : distdl::zero_volume<T>();
        DCHECK(distdl::testing::same_bits(learnt.adjoint(dy_here), given.adjoint(dy_here)));
    }
}

DISTDL_CHECK(pool_learns_the_input_shape, world_size >= 4) {
    const pool_options halo{.kernel_size = {3}, .stride = {2}, .padding = {1}};
    const pool_options direct{.kernel_size = {1}};
    check_learnt_shape<double, distributed_max_pool>(world, halo);
    check_learnt_shape<double, distributed_avg_pool>(world, halo);
    check_learnt_shape<float, distributed_max_pool>(world, direct);
    check_learnt_shape<float, distributed_avg_pool>(world, direct);
}

// Pieces that are not the balanced split of one global shape are refused on every worker of
// P_x (they all judge the same gathered shapes); the layer then learns the next good pieces.
DISTDL_CHECK(pool_refuses_pieces_of_no_balanced_split, world_size >= 3) {
    const std::vector<int> workers = {0, 1, 2};
    const auto P_x = make_partition(world, workers, {1, 1, 3});
    const bool in = world->rank() < 3;
    for (const bool direct : {false, true}) {
        distributed_avg_pool<double> layer(P_x, direct ? pool_options{.kernel_size = {1}}
                                                       : pool_options{.kernel_size = {3}, .stride = {1}, .padding = {1}});
        auto piece = [&](std::size_t length, std::size_t channels = 2) {
            return in ? tensor<double>(xt::ones<double>(shape_t{1, channels, length})) : distdl::zero_volume<double>();
        };
        if (in) {
            // [4, 5, 4]: worker 1 is off the split of 12 (13 would split as [5, 4, 4], two off).
            DCHECK_THROWS(layer.forward(world->rank() == 1 ? piece(5) : piece(4)), distdl::invalid_argument,
                          "AvgPool1d: x on P_x worker 1 (world rank 1) has shape [1,2,5], but the pieces along dimension 2 "
                          "are not a balanced split: its line along that dimension has extents [4,5,4], and the "
                          "balanced split of their sum 13 over 3 is [5,4,4]; the most pieces fit the balanced split "
                          "of 12, which gives it extent 4");
            DCHECK_THROWS(layer.forward(piece(4, world->rank() == 2 ? 3 : 2)), distdl::invalid_argument,
                          "has shape [1,3,4], but the pieces along dimension 1");
            DCHECK_THROWS(layer.forward(world->rank() == 0 ? tensor<double>(xt::ones<double>(shape_t{2, 4})) : piece(4)),
                          distdl::invalid_argument, "has shape [2,4], expected 3 dimensions");
            // One dimension too many on the last worker (its first three extents fit the split).
            DCHECK_THROWS(layer.forward(world->rank() == 2 ? tensor<double>(xt::ones<double>(shape_t{1, 2, 4, 1}))
                                                           : piece(4)),
                          distdl::invalid_argument, "has shape [1,2,4,1], expected 3 dimensions");
        }
        const tensor<double> y = layer.forward(piece(4));
        DCHECK_EQ(distdl::shape_of(y), in ? (shape_t{1, 2, 4}) : (shape_t{0}));
        const tensor<double> y2 = layer.forward(piece(in && world->rank() == 0 ? 3 : 2));  // a new shape: [3, 2, 2]
        DCHECK_EQ(distdl::shape_of(y2), in ? (shape_t{1, 2, world->rank() == 0 ? 3u : 2u}) : (shape_t{0}));
    }
}

// Max pooling on some workers and average pooling on others (the same options otherwise) is
// refused on every worker, not run as two different layers.
DISTDL_CHECK(pool_kinds_differ_between_workers, world_size >= 2) {
    const int n = world->size();
    const std::vector<int> workers = distdl::testing::rank_range(0, n);
    const auto P_x = make_partition(world, workers, {1, 1, static_cast<std::size_t>(n)});
    const pool_options options{.kernel_size = {3}, .stride = {1}, .padding = {1}};
    const std::string expected = "workers construct different modules: MaxPool on world ranks " +
                                 distdl::testing::first_ranks(n - 1) + ", AvgPool on world ranks [" +
                                 std::to_string(n - 1) + "]";
    if (distdl::testing::odd_one(world))
        DCHECK_THROWS(distributed_avg_pool<double>(P_x, options), distdl::invalid_argument, expected);
    else DCHECK_THROWS(distributed_max_pool<double>(P_x, options), distdl::invalid_argument, expected);
}

// Geometry far beyond the input: answered at once, never a scan over the padding. An output
// that no 64-bit size can count is refused on every worker; a kernel of 2^33 over 4 inputs
// (padding 2^32 each side) is one window holding all of them.
DISTDL_CHECK(pool_huge_geometry, world_size >= 4) {
    const std::vector<int> workers = {0, 1, 2, 3};
    const bool in = world->rank() < 4;
    const std::size_t huge = std::size_t(1) << 40;
    const auto P_2d = make_partition(world, workers, {1, 1, 2, 2});
    const pool_options huge_padding{.kernel_size = {2}, .padding = {huge}};
    DCHECK_THROWS(distributed_max_pool<double>(P_2d, shaped({1, 1, 4, 4}, huge_padding)), distdl::invalid_argument,
                  "MaxPool2d: output shape [1,1,1099511627778,1099511627778]: 1099511627778 * 1099511627778 "
                  "does not fit");
    const auto P_1d = make_partition(world, workers, {1, 1, 4});
    const std::size_t k = std::size_t(1) << 33;
    distributed_avg_pool<double> avg(P_1d, shaped({1, 1, 4}, pool_options{.kernel_size = {k}, .padding = {k / 2}}));
    const tensor<double> x = in ? tensor<double>(shape_t{1, 1, 1}, 1.0) : distdl::zero_volume<double>();
    const tensor<double> y = avg.forward(x);
    DCHECK_EQ(distdl::shape_of(y), (world->rank() == 0 ? shape_t{1, 1, 1} : in ? shape_t{1, 1, 0} : shape_t{0}));
    if (world->rank() == 0) DCHECK_EQ(y(0, 0, 0), 4.0 / double(k));
    const tensor<double> dx = avg.adjoint(world->rank() == 0 ? tensor<double>(shape_t{1, 1, 1}, double(k)) : y);
    if (in) DCHECK_EQ(dx(0, 0, 0), 1.0);
}

// ---------------------------------------------------------------- repeated calls

// An adjoint reads what it needs, and only that: max pooling the maxima of the last forward,
// which a refused forward discards; average pooling the input shape alone, so with the shape
// given it runs before any forward and after a refused one, while a learnt shape that a refused
// forward left unknown refuses it (on every worker of P_x).
DISTDL_CHECK(pool_adjoint_needs_what_it_reads, world_size == 3) {
    const auto P_x = make_partition(world, {0, 1, 2}, {1, 1, 3});
    const auto ones = [](std::size_t length) { return tensor<double>(xt::ones<double>(shape_t{1, 2, length})); };
    const pool_options k2{.kernel_size = {2}};

    distributed_max_pool<double> max_pool(P_x, shaped({1, 2, 12}, k2));
    max_pool.forward(ones(4));
    DCHECK_THROWS(max_pool.forward(ones(5)), distdl::invalid_argument, "[1,2,5]");
    DCHECK_THROWS(max_pool.adjoint(ones(2)), distdl::invalid_argument, "adjoint() needs a successful forward() first");

    distributed_avg_pool<double> given(P_x, shaped({1, 2, 12}, k2));
    const tensor<double> halves = tensor<double>(xt::ones<double>(shape_t{1, 2, 4})) * 0.5;
    DCHECK(same_bits(given.adjoint(ones(2)), halves));  // dy / 2 over each window of 2
    DCHECK_THROWS(given.forward(ones(5)), distdl::invalid_argument, "[1,2,5]");
    DCHECK(same_bits(given.adjoint(ones(2)), halves));

    distributed_avg_pool<double> learnt(P_x, pool_options{.kernel_size = {1}});
    learnt.forward(ones(4));
    DCHECK_THROWS(learnt.forward(ones(world->rank() == 1 ? 5 : 4)), distdl::invalid_argument,
                  "are not a balanced split");
    DCHECK_THROWS(learnt.adjoint(ones(4)), distdl::invalid_argument, "adjoint() needs a forward() first");
}

// A learnt shape is learnt again on every worker when one worker's piece alone changes, also
// where no window crosses a piece (kernel 1: no exchange that would notice it): [4,4,4] ->
// [5,4,4], the balanced split of 13.
DISTDL_CHECK(pool_relearns_when_one_piece_changes, world_size == 3) {
    const auto P_x = make_partition(world, {0, 1, 2}, {1, 1, 3});
    const auto ones = [](std::size_t length) { return tensor<double>(xt::ones<double>(shape_t{1, 2, length})); };
    const std::size_t mine_now = world->rank() == 0 ? 5 : 4;
    distributed_max_pool<double> layer(P_x, pool_options{.kernel_size = {1}});
    DCHECK_EQ(distdl::shape_of(layer.forward(ones(4))), (shape_t{1, 2, 4}));
    const tensor<double> y = layer.forward(ones(mine_now));
    DCHECK_EQ(distdl::shape_of(y), (shape_t{1, 2, mine_now}));
    DCHECK(same_bits(layer.adjoint(y), ones(mine_now)));
}
