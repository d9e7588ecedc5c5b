// The distributed convolutions (spec 004) on both transports, hand-small: output, input
// gradient, parameter values and accumulated gradients against reference/conv on the global
// tensors, over calls whose batch changes (1, 0, back); FeatureConvNd and ChannelConvNd against
// GeneralConvNd on other worker sets (the same bits); the selector's choice; refusals of bad
// pieces and bad output gradients on every worker of the layer, which stays usable.
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/conv_select.hpp"
#include "reference/conv.hpp"
#include "reference/repartition.hpp"
#include "tests/layers/conv_test_util.hpp"
#include "tests/misuse/misuse_util.hpp"
#include "verify/runners/pieces.hpp"

namespace {

using distdl::cartesian_partition;
using distdl::conv_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_close;
using distdl::testing::make_partition;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;
using distdl::testing::same_bits;

struct conv_setup {
    std::size_t dims;
    std::vector<int> x_workers, y_workers, w_workers;
    shape_t P_x, P_y, P_w;  // full partition shapes
    std::size_t in, out;
    shape_t spatial;  // global input extents
    conv_options options;
    int needs() const { return distdl::testing::world_size_for({&x_workers, &y_workers, &w_workers}); }
};

distdl::ref::conv_geometry geometry_of(const distdl::conv_spec& s) { return {s.stride, s.padding, s.dilation}; }

// Forward and adjoint for batches 2, 1, 0, 2 against the reference; then the parameters.
template <class T>
void check_conv(const std::shared_ptr<distdl::communicator>& world, const conv_setup& s, std::uint64_t seed) {
    const auto P_x = make_partition(world, s.x_workers, s.P_x);
    const auto P_y = make_partition(world, s.y_workers, s.P_y);
    const auto P_w = make_partition(world, s.w_workers, s.P_w);
    conv_options options = s.options;
    options.seed = seed;
    distdl::general_conv<T> layer(s.dims, P_x, P_y, P_w, s.in, s.out, options);
    const auto& spec = layer.spec();
    const auto model = distdl::conv_initial_parameters<T>(spec);
    const auto g = geometry_of(spec);
    const int me = world->rank();
    using distdl::verify::runners::rank_in;
    const auto w = std::size_t(me);
    const int px = rank_in(s.x_workers, w), py = rank_in(s.y_workers, w), pw = rank_in(s.w_workers, w);

    tensor<T> y, dx;  // reused across calls, as a training loop would
    tensor<T> dw_sum = xt::zeros<T>(spec.weight_shape());
    tensor<T> db_sum = xt::zeros<T>(shape_t{s.out});
    std::uint64_t call = 0;
    for (std::size_t batch : {2, 1, 0, 2}) {
        ++call;
        shape_t x_shape{batch, s.in};
        x_shape.insert(x_shape.end(), s.spatial.begin(), s.spatial.end());
        const tensor<T> x = random_tensor<T>(x_shape, seed * 31 + call);
        const tensor<T> want_y = distdl::ref::conv_forward(x, model.weight, spec.bias ? &model.bias : nullptr, g);
        const tensor<T> dy = random_tensor<T>(distdl::shape_of(want_y), seed * 37 + call);
        layer.forward(px >= 0 ? distdl::ref::split(x, s.P_x)[std::size_t(px)] : distdl::zero_volume<T>(), y);
        if (py >= 0) check_close(y, distdl::ref::split(want_y, s.P_y)[std::size_t(py)], "forward output");
        else DCHECK_EQ(distdl::shape_of(y), (shape_t{0}));

        layer.adjoint(py >= 0 ? distdl::ref::split(dy, s.P_y)[std::size_t(py)] : distdl::zero_volume<T>(), dx);
        const tensor<T> want_dx = distdl::ref::conv_adjoint_input(dy, model.weight, x_shape, g);
        if (px >= 0) check_close(dx, distdl::ref::split(want_dx, s.P_x)[std::size_t(px)], "adjoint output");
        else DCHECK_EQ(distdl::shape_of(dx), (shape_t{0}));
        dw_sum += distdl::ref::conv_adjoint_weight(x, dy, spec.weight_shape(), g);
        db_sum += distdl::ref::conv_adjoint_bias(dy);
    }

    const auto params = layer.parameters();
    distdl::testing::check_conv_parameters(params, s.P_w, pw, spec, model, dw_sum, db_sum);
    layer.zero_grad();
    for (auto* p : params)
        for (auto v : p->grad) DCHECK_EQ(v, T(0));
}

conv_options opts(shape_t k, shape_t s = {}, shape_t p = {}, shape_t d = {}, bool bias = true) {
    return conv_options{.kernel_size = k, .stride = s, .padding = p, .dilation = d, .bias = bias};
}

template <class T>
void check_all_setups(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<conv_setup> setups = {
        // serial
        {1, {0}, {0}, {0}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2, 3, {7}, opts({3}, {}, {1})},
        // feature 1-d over 4: even kernel, stride 2, padding beyond half the kernel
        {1, rank_range(0, 4), rank_range(0, 4), rank_range(0, 4), {1, 1, 4}, {1, 1, 4}, {1, 1, 4}, 2, 2, {9},
         opts({4}, {2}, {3})},
        // feature 2-d 2x2, dilation, no bias
        {2, rank_range(0, 4), rank_range(0, 4), rank_range(0, 4), {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2}, 2, 2, {6, 5},
         opts({3, 2}, {1, 1}, {2, 0}, {2, 1}, false)},
        // channel 2 -> 3 over P_w 3x2, P_y outside P_x
        {1, {0, 1}, {3, 4, 5}, rank_range(0, 6), {1, 2, 1}, {1, 3, 1}, {3, 2, 1}, 3, 5, {6}, opts({3}, {}, {1})},
        // general: P_x 1x2x2, P_y 1x2x2, P_w 2x2x2 (scrambled), 1 output channel block empty
        {1, rank_range(0, 4), {4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {1, 2, 2}, {1, 2, 2}, {2, 2, 2}, 3, 1, {7},
         opts({3}, {2}, {1})},
        // feature 2-d 2x2, stride 1, same padding (float: the direct engine on the halo windows,
        // the window gradient's middle written straight into dx)
        {2, rank_range(0, 4), rank_range(0, 4), rank_range(0, 4), {1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2}, 3, 5,
         {9, 37}, opts({3, 3}, {}, {1, 1})},
        // general 2-d as in conv_bench: P_x = P_w 1x2x2x1, the sum along P_ci into P_y 1x1x2x1
        {2, rank_range(0, 4), {0, 2}, rank_range(0, 4), {1, 2, 2, 1}, {1, 1, 2, 1}, {1, 2, 2, 1}, 4, 3, {7, 20},
         opts({3, 3}, {}, {1, 1})},
        // general 2-d with wide halos: 5x5 kernel on 3x4 pieces split 3 ways
        {2, rank_range(0, 6), rank_range(6, 12), rank_range(0, 12), {1, 2, 3, 1}, {1, 2, 3, 1}, {2, 2, 3, 1}, 2, 2,
         {4, 3}, opts({5, 3}, {}, {2, 1})},
    };
    std::uint64_t seed = 5;
    for (const auto& s : setups)
        if (s.needs() <= world->size()) check_conv<T>(world, s, seed++);
}

}  // namespace

DISTDL_CHECK(conv_matches_reference_double, world_size == 1 || world_size == 4 || world_size == 7 || world_size >= 12) {
    check_all_setups<double>(world);
}
DISTDL_CHECK(conv_matches_reference_float, world_size == 3 || world_size == 6 || world_size == 12) {
    check_all_setups<float>(world);
}

// FeatureConvNd and ChannelConvNd are configurations of GeneralConvNd: on other worker sets
// (every step then moves data differently) they still give the same bits; the selector picks
// by the partitions given.
DISTDL_CHECK(conv_configurations_agree_with_general, world_size == 8 || world_size == 12) {
    const int me = world->rank();
    const auto options = opts({3}, {1}, {2}, {2});
    {
        const auto P_x = make_partition(world, rank_range(0, 4), {1, 1, 4});
        const auto P_w = make_partition(world, rank_range(4, 8), {1, 1, 4});
        distdl::feature_conv<double> feature(1, P_x, 2, 3, options);
        distdl::general_conv<double> general(1, P_x, P_x, P_w, 2, 3, options);
        const auto chosen = distdl::make_conv<double>(1, P_x, nullptr, nullptr, 2, 3, options);
        DCHECK(chosen->kind() == distdl::conv_kind::feature);
        const tensor<double> x = me < 4 ? random_tensor<double>({2, 2, me == 0 ? 4u : 3u}, 70 + me) : distdl::zero_volume<double>();
        const auto y_feature = feature.forward(x), y_general = general.forward(x), y_chosen = chosen->forward(x);
        DCHECK(same_bits(y_feature, y_general));
        DCHECK(same_bits(y_feature, y_chosen));
        const auto dx_feature = feature.adjoint(y_feature), dx_general = general.adjoint(y_feature);
        DCHECK(same_bits(dx_feature, dx_general));
    }
    {
        const auto P_x = make_partition(world, {0, 1}, {1, 2, 1});
        const auto P_y = make_partition(world, {2, 3}, {1, 2, 1});
        const auto P_w = make_partition(world, rank_range(4, 8), {2, 2, 1});
        const auto P_w_other = make_partition(world, {0, 1, 2, 3}, {2, 2, 1});
        distdl::channel_conv<float> channel(1, P_x, P_y, P_w, 5, 3, options);
        distdl::general_conv<float> general(1, P_x, P_y, P_w_other, 5, 3, options);
        const auto chosen = distdl::make_conv<float>(1, P_x, &P_y, &P_w, 5, 3, options);
        DCHECK(chosen->kind() == distdl::conv_kind::channel);
        const tensor<float> x = me < 2 ? random_tensor<float>({1, me == 0 ? 3u : 2u, 6}, 80 + me) : distdl::zero_volume<float>();
        const auto y_channel = channel.forward(x), y_general = general.forward(x), y_chosen = chosen->forward(x);
        DCHECK(same_bits(y_channel, y_general));
        DCHECK(same_bits(y_channel, y_chosen));
        DCHECK(same_bits(channel.adjoint(y_channel), general.adjoint(y_channel)));
    }
    {
        const auto P_x = make_partition(world, {0, 1}, {1, 1, 2});
        const auto P_y = make_partition(world, {2, 3, 4, 5}, {1, 2, 2});
        const auto P_w = make_partition(world, rank_range(0, 4), {2, 1, 2});
        DCHECK(distdl::make_conv<double>(1, P_x, &P_y, &P_w, 1, 2, options)->kind() == distdl::conv_kind::general);
    }
}

// The selector's choice rests on which partitions each worker gives: workers that give
// different ones are told so by name, on every worker, before any of them chooses.
DISTDL_CHECK(conv_selector_workers_give_different_partitions, world_size >= 2) {
    const auto P = make_partition(world, {0}, {1, 1, 1});
    const bool odd = distdl::testing::odd_one(world);
    DCHECK_THROWS(distdl::make_conv<double>(1, P, &P, odd ? nullptr : &P, 1, 1, opts({1})), distdl::invalid_argument,
                  distdl::testing::disagreement(world, "Conv1d", "P_w given", "true", "false"));
}

// A bad piece on one worker is refused on every worker of the layer (no one is left waiting),
// and the layer stays usable; a refused adjoint accumulates nothing.
DISTDL_CHECK(conv_refuses_bad_pieces_everywhere, world_size == 5 || world_size == 7) {
    const int me = world->rank();
    // Feature 1-d on workers 0..3 (13 elements: 4, 3, 3, 3), worker 4 idle.
    const auto P_x = make_partition(world, rank_range(0, 4), {1, 1, 4});
    distdl::feature_conv<double> layer(1, P_x, 2, 2, opts({3}, {}, {1}));
    auto piece = [&](std::size_t batch, std::size_t extent) {
        return me < 4 ? tensor<double>(xt::ones<double>(shape_t{batch, 2, extent})) : distdl::zero_volume<double>();
    };
    const std::size_t own = me == 0 ? 4 : 3;
    auto expect = [&](auto&& call, const std::string& text) {
        if (me >= 4) {
            call();  // outside the layer: nothing to refuse
            return;
        }
        DCHECK_THROWS(call(), distdl::invalid_argument, text);
    };
    expect([&] { layer.adjoint(piece(1, own)); }, "FeatureConv1d: adjoint() needs a successful forward() first");
    // Worker 2 holds 4 elements instead of 3: [4, 3, 4, 3] is off the split of 13 there.
    expect([&] { layer.forward(piece(2, me == 2 ? 4 : own)); },
           "FeatureConv1d: x on P_x worker 2 (world rank 2) has shape [2,2,4], but the pieces along spatial dimension 0 "
           "are not a balanced split: its line along that dimension has extents [4,3,4,3], and the balanced split "
           "of their sum 14 over 4 is [4,4,3,3]; the most pieces fit the balanced split of 13, which gives it "
           "extent 3");
    // Worker 1 holds another batch.
    expect([&] { layer.forward(piece(me == 1 ? 3 : 2, own)); },
           "FeatureConv1d: x on P_x worker 1 (world rank 1) has batch 3, expected 2");
    auto y = layer.forward(piece(2, own));
    DCHECK_EQ(distdl::shape_of(y), me < 4 ? (shape_t{2, 2, own}) : (shape_t{0}));
    // A new batch works (the plan is rebuilt), and so does the old one again.
    y = layer.forward(piece(1, own));
    DCHECK_EQ(distdl::shape_of(y), me < 4 ? (shape_t{1, 2, own}) : (shape_t{0}));
    // dy of the wrong shape on worker 3 only.
    auto dy_of = [&](std::size_t batch, std::size_t extent) {
        return me < 4 ? tensor<double>(xt::ones<double>(shape_t{batch, 2, extent})) : distdl::zero_volume<double>();
    };
    if (me < 4) {
        // Every worker learns which worker refused and why (an extra round on the error path).
        const std::string text = "FeatureConv1d: dy on P_y worker 3 (world rank 3) has shape [1,2,5], expected [1,2,3]";
        DCHECK_THROWS(layer.adjoint(dy_of(1, me == 3 ? 5 : own)), distdl::invalid_argument, text);
    } else {
        layer.adjoint(distdl::zero_volume<double>());
    }
    for (auto* p : layer.parameters())
        for (auto v : p->grad) DCHECK_EQ(v, 0.0);
    const auto dx = layer.adjoint(dy_of(1, own));
    DCHECK_EQ(distdl::shape_of(dx), me < 4 ? (shape_t{1, 2, own}) : (shape_t{0}));

    // Channel 1-d: P_y on 3, 4 outside P_x and P_w; a bad dy there is agreed over P_y.
    const auto P_cx = make_partition(world, {0, 1}, {1, 2, 1});
    const auto P_cy = make_partition(world, {3, 4}, {1, 2, 1});
    const auto P_cw = make_partition(world, rank_range(0, 4), {2, 2, 1});
    distdl::channel_conv<double> channel(1, P_cx, P_cy, P_cw, 4, 4, opts({3}, {}, {1}));
    const auto cy = channel.forward(me < 2 ? tensor<double>(xt::ones<double>(shape_t{1, 2, 6})) : distdl::zero_volume<double>());
    DCHECK_EQ(distdl::shape_of(cy), me == 3 || me == 4 ? (shape_t{1, 2, 6}) : (shape_t{0}));
    const bool in_channel_layer = me < 5;
    const tensor<double> bad_dy = me == 3 ? tensor<double>(xt::ones<double>(shape_t{1, 2, 7}))
                                          : me == 4 ? tensor<double>(xt::ones<double>(shape_t{1, 2, 6}))
                                                    : distdl::zero_volume<double>();
    if (in_channel_layer) {
        const std::string text = "ChannelConv1d: dy on P_y worker 0 (world rank 3) has shape [1,2,7], expected [1,2,6]";
        DCHECK_THROWS(channel.adjoint(bad_dy), distdl::invalid_argument, text);
    }
}

// input_shape given: the layer plans at construction and then gives the bits of the lazy path
// (shape learnt at the first forward) — outputs, input gradients, parameter gradients — on a
// configuration with a halo exchange (feature 2-d) and one without (channel 1-d, P_x of two
// workers). In the steady state both paths move data only: the same messages on every worker
// (without a halo, neither spends a status all-reduce over P_x).
DISTDL_CHECK(conv_given_input_shape_matches_lazy_path, world_size == 4 || world_size == 5) {
    const int me = world->rank();
    auto compare = [&](distdl::general_conv<float>& lazy, distdl::general_conv<float>& given, const tensor<float>& x,
                       const tensor<float>& dy) {
        tensor<float> y_lazy, y_given, dx_lazy, dx_given;
        for (int round = 0; round < 2; ++round) {  // the second round in the steady state
            const auto before_lazy = world->traffic().total().messages;
            lazy.forward(x, y_lazy);
            const auto lazy_messages = world->traffic().total().messages - before_lazy;
            const auto before_given = world->traffic().total().messages;
            given.forward(x, y_given);
            const auto given_messages = world->traffic().total().messages - before_given;
            DCHECK(same_bits(y_lazy, y_given));
            if (round == 1) DCHECK_EQ(given_messages, lazy_messages);  // the steady state moves data only
            lazy.adjoint(dy, dx_lazy);
            given.adjoint(dy, dx_given);
            DCHECK(same_bits(dx_lazy, dx_given));
        }
        const auto p_lazy = lazy.parameters(), p_given = given.parameters();
        DCHECK_EQ(p_lazy.size(), p_given.size());
        for (std::size_t i = 0; i < std::min(p_lazy.size(), p_given.size()); ++i) {
            DCHECK(same_bits(p_lazy[i]->value, p_given[i]->value));
            DCHECK(same_bits(p_lazy[i]->grad, p_given[i]->grad));
        }
    };
    {
        const auto P_x = make_partition(world, rank_range(0, 4), {1, 1, 2, 2});
        conv_options options = opts({3, 2}, {1, 2}, {1, 1});
        distdl::feature_conv<float> lazy(2, P_x, 2, 3, options);
        options.input_shape = shape_t{2, 2, 7, 6};
        distdl::feature_conv<float> given(2, P_x, 2, 3, options);
        const shape_t at = me < 4 ? distdl::unravel_index(std::size_t(me), shape_t{1, 1, 2, 2}) : shape_t{};
        const tensor<float> x = me < 4 ? random_tensor<float>({2, 2, at[2] == 0 ? 4u : 3u, 3}, 90 + me)
                                       : distdl::zero_volume<float>();
        const auto y_shape = distdl::shape_of(lazy.forward(x));
        compare(lazy, given, x, random_tensor<float>(y_shape, 95 + me));
    }
    {
        const auto P_x = make_partition(world, {0, 1}, {1, 2, 1});
        const auto P_y = make_partition(world, {2, 3}, {1, 2, 1});
        const auto P_w = make_partition(world, rank_range(0, 4), {2, 2, 1});
        conv_options options = opts({3}, {}, {1});
        distdl::channel_conv<float> lazy(1, P_x, P_y, P_w, 5, 3, options);
        options.input_shape = shape_t{2, 5, 6};
        distdl::channel_conv<float> given(1, P_x, P_y, P_w, 5, 3, options);
        const tensor<float> x = me < 2 ? random_tensor<float>({2, me == 0 ? 3u : 2u, 6}, 100 + me)
                                       : distdl::zero_volume<float>();
        const tensor<float> dy = me == 2 || me == 3 ? random_tensor<float>({2, me == 2 ? 2u : 1u, 6}, 105 + me)
                                                    : distdl::zero_volume<float>();
        compare(lazy, given, x, dy);
    }
}

// input_shape given: a piece off the plan on one worker is refused on every worker of the
// layer, with or without a halo exchange, and the layer stays usable; the shape itself must be
// the same on every worker and fit the layer. Also a bad dy where it travels in the data.
DISTDL_CHECK(conv_given_input_shape_refuses_other_pieces_everywhere, world_size == 5) {
    const int me = world->rank();
    {  // channel 1-d without halo: the refusal travels in the data (no status all-reduce)
        const auto P_x = make_partition(world, {0, 1}, {1, 2, 1});
        const auto P_y = make_partition(world, {3, 4}, {1, 2, 1});
        const auto P_w = make_partition(world, rank_range(0, 4), {2, 2, 1});
        conv_options options = opts({3}, {}, {1});
        options.input_shape = shape_t{1, 4, 6};
        distdl::channel_conv<double> layer(1, P_x, P_y, P_w, 4, 4, options);
        auto piece = [&](std::size_t extent) {
            return me < 2 ? tensor<double>(xt::ones<double>(shape_t{1, 2, extent})) : distdl::zero_volume<double>();
        };
        const std::string text = "ChannelConv1d: x on P_x worker 1 (world rank 1) has shape [1,2,7], "
                                 "expected [1,2,6] (its piece of input_shape [1,4,6])";
        DCHECK_THROWS(layer.forward(piece(me == 1 ? 7 : 6)), distdl::invalid_argument, text);
        const auto y = layer.forward(piece(6));
        DCHECK_EQ(distdl::shape_of(y), me >= 3 ? (shape_t{1, 2, 6}) : (shape_t{0}));
        options.input_shape.reset();  // the same layer on the lazy path: the same bits after the refusal
        distdl::channel_conv<double> fresh(1, P_x, P_y, P_w, 4, 4, options);
        DCHECK(same_bits(y, fresh.forward(piece(6))));
    }
    {  // channel 1-d, P_y inside P_w: a bad dy on one P_y worker travels in the data too (no
       // all-reduce over P_y); nothing accumulates, and the next adjoint gives the lazy bits
        const auto P_x = make_partition(world, {0, 1}, {1, 2, 1});
        const auto P_y = make_partition(world, {0, 2}, {1, 2, 1});
        const auto P_w = make_partition(world, rank_range(0, 4), {2, 2, 1});
        conv_options options = opts({3}, {}, {1});
        distdl::channel_conv<double> layer(1, P_x, P_y, P_w, 4, 4, options);
        const tensor<double> x = me < 2 ? random_tensor<double>({1, 2, 6}, 110 + me) : distdl::zero_volume<double>();
        const auto y = layer.forward(x);
        auto dy_of = [&](std::size_t extent) {
            return me == 0 || me == 2 ? tensor<double>(xt::ones<double>(shape_t{1, 2, extent}))
                                      : distdl::zero_volume<double>();
        };
        if (me < 4) {
            const std::string text = "ChannelConv1d: dy on P_y worker 1 (world rank 2) has shape [1,2,5], "
                                     "expected [1,2,6]";
            DCHECK_THROWS(layer.adjoint(dy_of(me == 2 ? 5 : 6)), distdl::invalid_argument, text);
        } else {
            layer.adjoint(dy_of(6));
        }
        for (auto* p : layer.parameters())
            for (auto v : p->grad) DCHECK_EQ(v, 0.0);
        distdl::channel_conv<double> fresh(1, P_x, P_y, P_w, 4, 4, options);
        DCHECK(same_bits(fresh.forward(x), y));
        DCHECK(same_bits(layer.adjoint(dy_of(6)), fresh.adjoint(dy_of(6))));
    }
    {  // feature 1-d with halo: the halo exchange's per-call status carries it
        const auto P_x = make_partition(world, rank_range(0, 4), {1, 1, 4});
        conv_options options = opts({3}, {}, {1});
        options.input_shape = shape_t{2, 2, 13};
        distdl::feature_conv<double> layer(1, P_x, 2, 2, options);
        const std::size_t own = me == 0 ? 4 : 3;
        auto piece = [&](std::size_t batch) {
            return me < 4 ? tensor<double>(xt::ones<double>(shape_t{batch, 2, own})) : distdl::zero_volume<double>();
        };
        if (me < 4) {
            const std::string text = "FeatureConv1d: x on P_x worker 2 (world rank 2) has shape [1,2,3], "
                                     "expected [2,2,3]";
            DCHECK_THROWS(layer.forward(piece(me == 2 ? 1 : 2)), distdl::invalid_argument, text);
        } else {
            layer.forward(piece(2));
        }
        DCHECK_EQ(distdl::shape_of(layer.forward(piece(2))), me < 4 ? (shape_t{2, 2, own}) : (shape_t{0}));
    }
    {  // one worker names another input_shape: refused at construction, on every worker
        const auto P_x = make_partition(world, rank_range(0, 4), {1, 1, 4});
        conv_options options = opts({3}, {}, {1});
        options.input_shape = shape_t{2, 2, me == 3 ? 12u : 13u};
        DCHECK_THROWS(distdl::feature_conv<double>(1, P_x, 2, 2, options), distdl::invalid_argument, "input_shape");
        options.input_shape = shape_t{2, 3, 13};  // 3 channels for a 2-channel layer
        DCHECK_THROWS(distdl::feature_conv<double>(1, P_x, 2, 2, options), distdl::invalid_argument,
                      "FeatureConv1d: input_shape [2,3,13], expected [batch, 2, 1 spatial extent]");
    }
}
