// DistributedLinear's refusals on both transports (issue 11):
//   - construction arguments that differ between workers are refused on every worker, with one
//     message naming the argument, the values and the world ranks holding each;
//   - a bad input piece or output gradient on one worker, on the first call or once shapes are
//     known, is the same error, naming the worker and the problem, on every worker of the
//     layer (also on P_x / P_y workers outside P_W that hear nothing back otherwise), the
//     gradients stay untouched and the layer works again on the next good call;
//   - a parameter (or its gradient) given another shape on one worker is refused likewise;
//   - once shapes are known, a call moves data only: no message but the two primitives' data.
#include <map>

#include "layers/linear.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "tests/misuse/misuse_util.hpp"

namespace {

using distdl::cartesian_partition;
using distdl::distributed_linear;
using distdl::linear_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::first_ranks;
using distdl::testing::make_partition;
using distdl::testing::odd_one;
using distdl::testing::rank_range;

// "Linear: workers disagree on <arg>: <usual> on world ranks [0-(n-2)], <odd> on world ranks [n-1]"
std::string disagreement(const std::shared_ptr<distdl::communicator>& world, const std::string& arg,
                         const std::string& usual, const std::string& odd) {
    return distdl::testing::disagreement(world, "Linear", arg, usual, odd);
}

// The partitions of one layer over world ranks 0..3 (P_W 2 x 2) with P_x and P_y placed as given.
struct layout {
    cartesian_partition P_x, P_y, P_W;
    bool in_layer;
};

layout make_layout(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& x_workers,
                   const std::vector<int>& y_workers) {
    layout l{make_partition(world, x_workers, {1, 2}), make_partition(world, y_workers, {1, 2}),
             make_partition(world, rank_range(0, 4), {2, 2}), false};
    l.in_layer = l.P_x.active() || l.P_y.active() || l.P_W.active();
    return l;
}

// On the workers of the layer, `call` throws invalid_argument containing `text`; elsewhere it
// returns (nothing to refuse).
template <class F>
void expect_refused(bool in_layer, F&& call, const std::string& text) {
    if (!in_layer) {
        call();
        return;
    }
    DCHECK_THROWS(call(), distdl::invalid_argument, text);
}

std::vector<tensor<double>> gradients(distributed_linear<double>& layer) {
    std::vector<tensor<double>> out;
    for (auto* p : layer.parameters()) out.push_back(p->grad);
    return out;
}

// Good steps, then bad pieces on one worker at a time, each refused everywhere with the same
// text, then good steps again. in_features 6, out_features 4, batch 2.
void refusal_sequence(const std::shared_ptr<distdl::communicator>& world, const layout& l) {
    distributed_linear<double> layer(l.P_x, l.P_y, l.P_W, 6, 4);
    const int x1 = l.P_x.members()[1], y0 = l.P_y.members()[0], y1 = l.P_y.members()[1];
    const int me = world->rank();
    auto x_of = [&](std::size_t batch, std::size_t features) {
        return l.P_x.active() ? tensor<double>(xt::ones<double>(shape_t{batch, features}))
                              : distdl::zero_volume<double>();
    };
    auto dy_of = [&](std::size_t batch) {
        return l.P_y.active() ? tensor<double>(xt::ones<double>(shape_t{batch, 2})) : distdl::zero_volume<double>();
    };
    const std::string x1_name = "P_x worker 1 (world rank " + std::to_string(x1) + ")";

    // Before any forward: nothing to take the adjoint of.
    expect_refused(l.in_layer, [&] { layer.adjoint(dy_of(1)); }, "Linear: adjoint() needs a successful forward() first");
    tensor<double> y, dx;
    // Bad on the first call (no shape known yet): 4 features instead of 3 on P_x worker 1.
    expect_refused(l.in_layer, [&] { layer.forward(me == x1 ? x_of(2, 4) : x_of(2, 3), y); },
                   "Linear: x on " + x1_name + " has shape [2,4], expected [batch, 3]");
    for (int step = 0; step < 2; ++step) {  // shapes become known
        layer.forward(x_of(2, 3), y);
        layer.adjoint(dy_of(2), dx);
    }
    const auto grads = gradients(layer);
    // Once shapes are known: a wrong feature extent, a matrix of another rank, a batch that
    // differs between the P_x workers.
    expect_refused(l.in_layer, [&] { layer.forward(me == x1 ? x_of(2, 4) : x_of(2, 3), y); },
                   "Linear: x on " + x1_name + " has shape [2,4], expected [batch, 3]");
    expect_refused(l.in_layer,
                   [&] { layer.forward(me == x1 ? tensor<double>(xt::ones<double>(shape_t{6})) : x_of(2, 3), y); },
                   "Linear: x on " + x1_name + " has shape [6], expected [batch, 3]");
    expect_refused(l.in_layer, [&] { layer.forward(me == x1 ? x_of(5, 3) : x_of(2, 3), y); },
                   "Linear: x on " + x1_name + " has batch 5, expected 2 (the batch of P_x worker 0)");
    // A refused forward leaves nothing to take the adjoint of.
    expect_refused(l.in_layer, [&] { layer.adjoint(dy_of(2), dx); }, "needs a successful forward() first");
    layer.forward(x_of(2, 3), y);
    DCHECK_EQ(distdl::shape_of(y), l.P_y.active() ? (shape_t{2, 2}) : (shape_t{0}));
    // The output gradient: another batch than the forward's on P_y worker 1, wrong features
    // on P_y worker 0.
    expect_refused(l.in_layer, [&] { layer.adjoint(me == y1 ? dy_of(3) : dy_of(2), dx); },
                   "Linear: dy on P_y worker 1 (world rank " + std::to_string(y1) +
                       ") has batch 3, expected 2 (the batch of the last forward)");
    expect_refused(l.in_layer,
                   [&] {
                       layer.adjoint(me == y0 ? tensor<double>(xt::ones<double>(shape_t{2, 3})) : dy_of(2), dx);
                   },
                   "Linear: dy on P_y worker 0 (world rank " + std::to_string(y0) +
                       ") has shape [2,3], expected [batch, 2]");
    const auto after = gradients(layer);
    DCHECK_EQ(after.size(), grads.size());
    for (std::size_t i = 0; i < after.size(); ++i)  // a refused adjoint accumulates nothing
        DCHECK(distdl::testing::same_bits(after[i], grads[i]));
    // Still usable, also with another batch.
    layer.adjoint(dy_of(2), dx);
    DCHECK_EQ(distdl::shape_of(dx), l.P_x.active() ? (shape_t{2, 3}) : (shape_t{0}));
    layer.forward(x_of(4, 3), y);
    layer.adjoint(dy_of(4), dx);
    DCHECK_EQ(distdl::shape_of(dx), l.P_x.active() ? (shape_t{4, 3}) : (shape_t{0}));
}

// A parameter of one P_W worker given another shape (the same elements as a row, or its gradient
// 7 elements): the next call that uses it is refused on every worker of the layer, naming the
// worker and both shapes (no worker waits for it); put back, the layer works on. in_features 6,
// out_features 4 on P_W 2 x 2: every weight block is 2 x 3, the bias pieces (column 0) 2.
void parameter_shape_sequence(const std::shared_ptr<distdl::communicator>& world, const layout& l) {
    distributed_linear<double> layer(l.P_x, l.P_y, l.P_W, 6, 4);
    const tensor<double> x = l.P_x.active() ? tensor<double>(xt::ones<double>(shape_t{2, 3})) : distdl::zero_volume<double>();
    const tensor<double> dy = l.P_y.active() ? tensor<double>(xt::ones<double>(shape_t{2, 2})) : distdl::zero_volume<double>();
    tensor<double> y, dx;
    layer.forward(x, y);
    layer.adjoint(dy, dx);
    for (int w = 0; w < 4; ++w) {
        const int owner = l.P_W.members()[static_cast<std::size_t>(w)];
        const std::string worker = " on P_W worker " + std::to_string(w) + " (world rank " + std::to_string(owner) + ")";
        for (const bool is_bias : {false, true}) {
            if (is_bias && w % 2 != 0) continue;  // the bias is on column 0
            for (const bool is_grad : {false, true}) {
                const std::string name = is_bias ? "bias" : "weight", block = is_bias ? "[2]" : "[2,3]";
                const shape_t odd = is_grad ? shape_t{7} : is_bias ? shape_t{1, 2} : shape_t{1, 6};
                const std::string text = std::string("Linear: ") + (is_grad ? "the gradient of " : "") + name + worker +
                                         " has shape " + distdl::format_list(odd) + ", expected " + block;
                distdl::testing::expect_spoilt_parameter_refused(
                    layer, world->rank() == owner, is_bias ? 1 : 0, is_grad, odd, l.in_layer,
                    [&] {
                        if (is_grad) layer.adjoint(dy, dx);
                        else layer.forward(x, y);
                    },
                    text);
                layer.forward(x, y);
                layer.adjoint(dy, dx);
                DCHECK_EQ(distdl::shape_of(dx), l.P_x.active() ? (shape_t{2, 3}) : (shape_t{0}));
            }
        }
    }
}

// Messages per label (summed over workers of nothing: this worker's own log).
std::map<std::string, std::uint64_t> messages_by_label(const std::shared_ptr<distdl::communicator>& world) {
    std::map<std::string, std::uint64_t> out;
    for (const auto& [label, totals] : world->traffic().by_label()) out[label] = totals.messages;
    return out;
}

// After two steps, further steps of the same shapes send messages only as the data of the
// layer's Broadcast and SumReduce: no shape metadata, no status round, no gather of shapes.
void steady_state_moves_data_only(const std::shared_ptr<distdl::communicator>& world, const layout& l) {
    distributed_linear<float> layer(l.P_x, l.P_y, l.P_W, 6, 4);
    const tensor<float> x = l.P_x.active() ? tensor<float>(xt::ones<float>(shape_t{3, 3})) : distdl::zero_volume<float>();
    const tensor<float> dy = l.P_y.active() ? tensor<float>(xt::ones<float>(shape_t{3, 2})) : distdl::zero_volume<float>();
    tensor<float> y, dx;
    for (int step = 0; step < 2; ++step) {
        layer.forward(x, y);
        layer.adjoint(dy, dx);
    }
    const auto before = messages_by_label(world);
    for (int step = 0; step < 3; ++step) {
        layer.forward(x, y);
        layer.adjoint(dy, dx);
    }
    const auto after = messages_by_label(world);
    for (const auto& [label, count] : after) {
        const auto it = before.find(label);
        const std::uint64_t was = it == before.end() ? 0 : it->second;
        if (count != was && label != "broadcast" && label != "sum_reduce")
            DCHECK_FAIL_("steady-state Linear sent " << count - was << " message(s) labelled \"" << label << "\"");
    }
}

// Bad pieces, then parameters of another shape, in each layout.
void refusal_sequences(const std::shared_ptr<distdl::communicator>& world, const layout& l) {
    refusal_sequence(world, l);
    parameter_shape_sequence(world, l);
}

}  // namespace

// ---- construction ----

DISTDL_CHECK(linear_agrees_on_features_bias_and_seed, world_size >= 2) {
    const auto n = static_cast<std::size_t>(world->size());
    const auto P_row = make_partition(world, rank_range(0, world->size()), {1, n});
    const auto P_0 = make_partition(world, {0}, {1, 1});
    const bool odd = odd_one(world);
    DCHECK_THROWS(distributed_linear<double>(P_row, P_0, P_row, odd ? 9 : 8, 5), distdl::invalid_argument,
                  disagreement(world, "in_features", "8", "9"));
    DCHECK_THROWS(distributed_linear<double>(P_row, P_0, P_row, 8, odd ? 4 : 5), distdl::invalid_argument,
                  disagreement(world, "out_features", "5", "4"));
    DCHECK_THROWS(distributed_linear<float>(P_row, P_0, P_row, 8, 5, {.bias = !odd}), distdl::invalid_argument,
                  disagreement(world, "bias", "true", "false"));
    DCHECK_THROWS(distributed_linear<float>(P_row, P_0, P_row, 8, 5, {.seed = odd ? 2u : 1u}), distdl::invalid_argument,
                  disagreement(world, "seed", "1", "2"));
    // Two arguments at once: both named.
    DCHECK_THROWS(distributed_linear<double>(P_row, P_0, P_row, odd ? 7 : 8, 5, {.seed = odd ? 3u : 0u}),
                  distdl::invalid_argument,
                  disagreement(world, "in_features", "8", "7") + "; and on seed: 0 on world ranks " +
                      first_ranks(world->size() - 1));
    // Agreement does not get in the way: equal arguments construct and run.
    distributed_linear<double> fine(P_row, P_0, P_row, 8, 5);
    const std::size_t local_in = distdl::balanced_size(8, n, static_cast<std::size_t>(world->rank()));
    const auto y = fine.forward(tensor<double>(xt::ones<double>(shape_t{2, local_in})));
    DCHECK_EQ(distdl::shape_of(y), world->rank() == 0 ? (shape_t{2, 5}) : (shape_t{0}));
}

DISTDL_CHECK(linear_agrees_on_element_type_and_partition_shapes, world_size >= 2) {
    const auto n = static_cast<std::size_t>(world->size());
    const auto P_row = make_partition(world, rank_range(0, world->size()), {1, n});
    const auto P_col = make_partition(world, rank_range(0, world->size()), {n, 1});
    const auto P_0 = make_partition(world, {0}, {1, 1});
    const bool odd = odd_one(world);
    const std::string type_text = disagreement(world, "the element type", "float64", "float32");
    if (odd) DCHECK_THROWS(distributed_linear<float>(P_row, P_0, P_row, 8, 5), distdl::invalid_argument, type_text);
    else DCHECK_THROWS(distributed_linear<double>(P_row, P_0, P_row, 8, 5), distdl::invalid_argument, type_text);
    // The odd worker distributes the output features instead of the input features.
    const std::string row = "[1," + std::to_string(n) + "]", col = "[" + std::to_string(n) + ",1]";
    auto build = [&] {
        if (odd) distributed_linear<double>(P_0, P_row, P_col, 8, 5);
        else distributed_linear<double>(P_row, P_0, P_row, 8, 5);
    };
    DCHECK_THROWS(build(), distdl::invalid_argument,
                  disagreement(world, "P_x shape", row, "[1,1]") + "; and on P_y shape: [1,1] on world ranks " +
                      first_ranks(world->size() - 1) + ", " + row + " on world ranks [" +
                      std::to_string(world->size() - 1) + "]; and on P_W shape: " + row);
}

// ---- per call ----

// P_x = row 0 of P_W, P_y = column 0 of P_W (the usual placement): every worker is in P_W.
DISTDL_CHECK(linear_refuses_bad_pieces_and_parameters_everywhere, world_size >= 4) {
    refusal_sequences(world, make_layout(world, {0, 1}, {0, 2}));
}

// P_x and P_y outside P_W: they hear nothing back from P_W but its verdict.
DISTDL_CHECK(linear_refuses_bad_pieces_and_parameters_everywhere_disjoint, world_size >= 8) {
    refusal_sequences(world, make_layout(world, {4, 5}, {6, 7}));
}

// P_x and P_y on the same workers, one of them in P_W, the other outside.
DISTDL_CHECK(linear_refuses_bad_pieces_and_parameters_everywhere_mixed, world_size >= 6) {
    refusal_sequences(world, make_layout(world, {3, 4}, {4, 5}));
}

DISTDL_CHECK(linear_steady_state_moves_data_only, world_size >= 4) {
    steady_state_moves_data_only(world, make_layout(world, {0, 1}, {0, 2}));
}

DISTDL_CHECK(linear_steady_state_moves_data_only_disjoint, world_size >= 8) {
    steady_state_moves_data_only(world, make_layout(world, {4, 5}, {6, 7}));
}
