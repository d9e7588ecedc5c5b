// Refusal detail of the distributed convolutions on both transports: when one worker refuses
// (a bad piece with a halo exchange, a bad piece without one, a bad output gradient), every
// worker of the layer throws the same message, which names the refusing worker, what it was
// given and what was expected — also workers that only learnt of the refusal through the data.
// Workers outside the layer take part in nothing. Afterwards the layer gives the bits of a fresh
// one, and a refused adjoint has accumulated nothing.
#include "layers/conv_general.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace {

using distdl::conv_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::make_partition;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;
using distdl::testing::same_bits;

conv_options options_3x3(std::optional<shape_t> input_shape) {
    conv_options o;
    o.kernel_size = {3, 3};
    o.padding = {1, 1};
    o.seed = 7;
    o.input_shape = std::move(input_shape);
    return o;
}

// `call` throws on every worker of the layer with a message containing `text`; elsewhere it
// returns (a worker outside the layer has nothing to refuse).
template <class F>
void expect_everywhere(bool in_layer, F&& call, const std::string& text) {
    if (!in_layer) {
        call();
        return;
    }
    DCHECK_THROWS(call(), distdl::invalid_argument, text);
}

template <class T>
void expect_no_gradient(distdl::general_conv<T>& layer) {
    for (auto* p : layer.parameters())
        for (auto v : p->grad) DCHECK_EQ(v, T(0));
}

}  // namespace

// GeneralConv2d with a halo exchange, P_y inside P_x = P_w (the benchmark's general layout, at
// hand size): x 2 x 4 x 6 x 5 on P_x 1x2x2x1 (workers 0..3), y on P_y 1x1x2x1 (workers 0, 2).
// A bad dy here travels in the data (no status all-reduce over P_y) and still names its worker.
DISTDL_CHECK(conv_refusal_names_the_worker_with_halo, world_size == 4 || world_size == 5) {
    const int me = world->rank();
    const bool in_layer = me < 4;
    const auto P_x = make_partition(world, rank_range(0, 4), {1, 2, 2, 1});
    const auto P_y = make_partition(world, {0, 2}, {1, 1, 2, 1});
    const shape_t global{2, 4, 6, 5};
    // Worker w of P_x is (ci, h) = (w / 2, w % 2): 2 channels, 3 rows, 5 columns.
    auto x_of = [&](std::size_t rows, std::uint64_t seed) {
        return in_layer ? random_tensor<double>({2, 2, rows, 5}, seed + std::uint64_t(me)) : distdl::zero_volume<double>();
    };
    const bool on_P_y = me == 0 || me == 2;
    auto dy_of = [&](std::size_t columns) {
        return on_P_y ? random_tensor<double>({2, 3, 3, columns}, 40 + std::uint64_t(me)) : distdl::zero_volume<double>();
    };
    for (const bool given : {true, false}) {
        distdl::general_conv<double> layer(2, P_x, P_y, P_x, 4, 3, options_3x3(given ? std::optional(global) : std::nullopt));
        if (!given) layer.forward(x_of(3, 10));  // the lazy layer learns the layout first
        // Worker 3 holds 4 rows instead of 3.
        const std::string bad_piece =
            given ? "GeneralConv2d: x on P_x worker 3 (world rank 3) has shape [2,2,4,5], expected [2,2,3,5] (its piece "
                    "of input_shape [2,4,6,5])"
                  : "GeneralConv2d: x on P_x worker 3 (world rank 3) has shape [2,2,4,5], but the pieces along spatial "
                    "dimension 0 are not a balanced split: its line along that dimension has extents [3,4], and the "
                    "balanced split of their sum 7 over 2 is [4,3]; the most pieces fit the balanced split of 6, "
                    "which gives it extent 3";
        expect_everywhere(in_layer, [&] { layer.forward(x_of(me == 3 ? 4 : 3, 20)); }, bad_piece);

        // The layer still works: the bits of a fresh layer.
        distdl::general_conv<double> fresh(2, P_x, P_y, P_x, 4, 3, options_3x3(given ? std::optional(global) : std::nullopt));
        const auto x = x_of(3, 30);
        DCHECK(same_bits(layer.forward(x), fresh.forward(x)));

        // dy of the wrong shape on P_y worker 1 (world rank 2) only.
        expect_everywhere(in_layer, [&] { layer.adjoint(dy_of(me == 2 ? 4 : 5)); },
                          "GeneralConv2d: dy on P_y worker 1 (world rank 2) has shape [2,3,3,4], expected [2,3,3,5] "
                          "(the shape of its output in the last forward)");
        expect_no_gradient(layer);
        DCHECK(same_bits(layer.adjoint(dy_of(5)), fresh.adjoint(dy_of(5))));
        const auto p = layer.parameters(), q = fresh.parameters();
        DCHECK_EQ(p.size(), q.size());
        for (std::size_t i = 0; i < std::min(p.size(), q.size()); ++i) DCHECK(same_bits(p[i]->grad, q[i]->grad));
    }
}

// GeneralConv2d without a halo exchange: x on P_x 1x2x1x1 (workers 0, 1), y on P_y 1x2x1x1
// (workers 2, 3, outside P_x), w on P_w 2x2x1x1 (workers 0..3). The P_y workers learn of a bad
// piece only through the data, the P_x workers of a bad dy likewise; both name the worker.
DISTDL_CHECK(conv_refusal_names_the_worker_without_halo, world_size == 4 || world_size == 5) {
    const int me = world->rank();
    const bool in_layer = me < 4;
    const auto P_x = make_partition(world, {0, 1}, {1, 2, 1, 1});
    const auto P_y = make_partition(world, {2, 3}, {1, 2, 1, 1});
    const auto P_w = make_partition(world, rank_range(0, 4), {2, 2, 1, 1});
    const shape_t global{2, 4, 5, 4};
    auto x_of = [&](std::size_t batch, std::uint64_t seed) {
        return me < 2 ? random_tensor<double>({batch, 2, 5, 4}, seed + std::uint64_t(me)) : distdl::zero_volume<double>();
    };
    const bool on_P_y = me == 2 || me == 3;
    auto dy_of = [&](std::size_t channels) {
        return on_P_y ? random_tensor<double>({2, channels, 5, 4}, 50 + std::uint64_t(me)) : distdl::zero_volume<double>();
    };
    for (const bool given : {true, false}) {
        distdl::general_conv<double> layer(2, P_x, P_y, P_w, 4, 6, options_3x3(given ? std::optional(global) : std::nullopt));
        // Worker 1 holds a batch of 3.
        const std::string bad_piece =
            given ? "GeneralConv2d: x on P_x worker 1 (world rank 1) has shape [3,2,5,4], expected [2,2,5,4] (its piece "
                    "of input_shape [2,4,5,4])"
                  : "GeneralConv2d: x on P_x worker 1 (world rank 1) has batch 3, expected 2";
        expect_everywhere(in_layer, [&] { layer.forward(x_of(me == 1 ? 3 : 2, 20)); }, bad_piece);

        distdl::general_conv<double> fresh(2, P_x, P_y, P_w, 4, 6, options_3x3(given ? std::optional(global) : std::nullopt));
        const auto x = x_of(2, 30);
        DCHECK(same_bits(layer.forward(x), fresh.forward(x)));

        // dy with 2 channels instead of 3 on P_y worker 0 (world rank 2).
        expect_everywhere(in_layer, [&] { layer.adjoint(dy_of(me == 2 ? 2 : 3)); },
                          "GeneralConv2d: dy on P_y worker 0 (world rank 2) has shape [2,2,5,4], expected [2,3,5,4]");
        expect_no_gradient(layer);
        DCHECK(same_bits(layer.adjoint(dy_of(3)), fresh.adjoint(dy_of(3))));
    }
}
