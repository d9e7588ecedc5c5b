// sequential on both transports: two DistributedLinear layers chained (the first's P_y is the
// second's P_x) against the reference applied twice; parameters of both in order, and their
// paths; the empty chain is the identity.
#include <cmath>
#include <functional>

#include "core/broadcast.hpp"
#include "core/repartition.hpp"
#include "layers/linear.hpp"
#include "layers/relu.hpp"
#include "layers/sequential.hpp"
#include "reference/linear.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace {

using distdl::distributed_linear;
using distdl::linear_options;
using distdl::sequential;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_close;
using distdl::testing::column_block;
using distdl::testing::make_partition;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;
using distdl::testing::same_bits;

template <class T>
void check_two_linear(const std::shared_ptr<distdl::communicator>& world, bool distributed) {
    // distributed: 5 -> 7 on P_W1 3x2 (workers 0..5), then 7 -> 4 on P_W2 1x3 (workers 3..5,
    // disjoint from P_x of the first); otherwise everything on worker 0.
    const int me = world->rank();
    const std::vector<int> x1 = distributed ? std::vector<int>{0, 1} : std::vector<int>{0};
    const std::vector<int> y1 = distributed ? std::vector<int>{1, 2, 3} : std::vector<int>{0};
    const std::vector<int> y2 = {0};
    const std::size_t P_fi1 = x1.size(), P_fo1 = y1.size();
    const auto P_x1 = make_partition(world, x1, {1, P_fi1});
    const auto P_y1 = make_partition(world, y1, {1, P_fo1});
    const auto P_W1 = make_partition(world, distributed ? rank_range(0, 6) : std::vector<int>{0}, {P_fo1, P_fi1});
    const auto P_y2 = make_partition(world, y2, {1, 1});
    const auto P_W2 = make_partition(world, distributed ? rank_range(3, 6) : std::vector<int>{0}, {1, P_fo1});

    sequential<T> net;
    net.template emplace<distributed_linear<T>>(P_x1, P_y1, P_W1, 5, 7, linear_options{.bias = true, .seed = 1});
    net.append(std::make_unique<distributed_linear<T>>(P_y1, P_y2, P_W2, 7, 4, linear_options{.bias = false, .seed = 2}));
    DCHECK_EQ(net.size(), std::size_t(2));
    const auto m1 = distdl::linear_initial_parameters<T>(5, 7, {.bias = true, .seed = 1});
    const auto m2 = distdl::linear_initial_parameters<T>(7, 4, {.bias = false, .seed = 2});

    const tensor<T> x = random_tensor<T>({3, 5}, 5), dy = random_tensor<T>({3, 4}, 6);
    const auto px = std::find(x1.begin(), x1.end(), me);
    const tensor<T> x_piece = px != x1.end() ? column_block(x, P_fi1, std::size_t(px - x1.begin())) : distdl::zero_volume<T>();
    tensor<T> y, dx;
    for (int round = 0; round < 2; ++round) {
        net.forward(x_piece, y);
        const tensor<T> h = distdl::ref::linear(x, m1.weight, m1.bias);
        const tensor<T> want = distdl::ref::linear(h, m2.weight);
        if (me == 0) check_close(y, want, "sequential output");
        else DCHECK_EQ(distdl::shape_of(y), (shape_t{0}));
        net.adjoint(me == 0 ? dy : distdl::zero_volume<T>(), dx);
        const tensor<T> dh = distdl::ref::linear_adjoint_input(dy, m2.weight);
        if (px != x1.end())
            check_close(dx, column_block(distdl::ref::linear_adjoint_input(dh, m1.weight), P_fi1, std::size_t(px - x1.begin())),
                        "sequential adjoint");
        else DCHECK_EQ(distdl::shape_of(dx), (shape_t{0}));
    }
    // Parameters of the first layer, then of the second; both adjoints accumulated.
    const auto params = net.parameters();
    std::size_t expected = 0;
    if (P_W1.active()) expected += P_W1.index()[1] == 0 ? 2 : 1;
    if (P_W2.active()) expected += 1;
    DCHECK_EQ(params.size(), expected);
    // The same parameters with their paths: the module's position, then the layer's name.
    std::vector<std::string> paths;
    if (P_W1.active()) paths.push_back("0.weight");
    if (P_W1.active() && P_W1.index()[1] == 0) paths.push_back("0.bias");
    if (P_W2.active()) paths.push_back("1.weight");
    const auto named = net.named_parameters();
    DCHECK_EQ(named.size(), expected);
    for (std::size_t i = 0; i < named.size() && i < paths.size(); ++i) {
        DCHECK_EQ(named[i].first, paths[i]);
        DCHECK(named[i].second == params[i]);
    }
    if (!distributed && me == 0) {
        const tensor<T> h = distdl::ref::linear(x, m1.weight, m1.bias);
        const tensor<T> dh = distdl::ref::linear_adjoint_input(dy, m2.weight);
        check_close(params.at(0)->grad, tensor<T>(T(2) * distdl::ref::linear_adjoint_weight(dh, x)), "first weight gradient");
        check_close(params.at(1)->grad, tensor<T>(T(2) * distdl::ref::linear_adjoint_bias(dh)), "first bias gradient");
        check_close(params.at(2)->grad, tensor<T>(T(2) * distdl::ref::linear_adjoint_weight(dy, h)), "second weight gradient");
    }
    net.zero_grad();
    for (auto* p : params)
        for (auto v : p->grad) DCHECK_EQ(v, T(0));
}

}  // namespace

DISTDL_CHECK(sequential_two_linear_serial, world_size <= 3) {
    check_two_linear<double>(world, false);
    check_two_linear<float>(world, false);
}

DISTDL_CHECK(sequential_two_linear_distributed, world_size >= 6) { check_two_linear<double>(world, true); }

DISTDL_CHECK(sequential_empty_is_identity, world_size <= 2) {
    (void)world;
    sequential<double> net;
    const tensor<double> x = random_tensor<double>({2, 3}, 1);
    const auto y = net.forward(x);
    DCHECK(distdl::testing::same_bits(y, x));
    DCHECK(distdl::testing::same_bits(net.adjoint(x), x));
    DCHECK(net.parameters().empty());
    DCHECK_THROWS(net.append(nullptr), distdl::invalid_argument, "sequential: module 0 is null");
}

// Paths name each parameter by the modules around it, nested chains included; a layer alone
// gives its own names.
DISTDL_CHECK(sequential_names_parameters_by_path, world_size == 1) {
    const auto P = make_partition(world, {0}, {1, 1});
    sequential<double> net;
    auto& inner = net.emplace<sequential<double>>();
    inner.emplace<distributed_linear<double>>(P, P, P, 3, 2, linear_options{.bias = true, .seed = 1});
    auto& last = net.emplace<distributed_linear<double>>(P, P, P, 2, 2, linear_options{.bias = false, .seed = 2});
    const auto paths = [](auto& m) {
        std::vector<std::string> names;
        for (const auto& [path, p] : m.named_parameters()) names.push_back(path + " " + p->name);
        return names;
    };
    DCHECK_EQ(paths(net), (std::vector<std::string>{"0.0.weight weight", "0.0.bias bias", "1.weight weight"}));
    DCHECK_EQ(paths(inner), (std::vector<std::string>{"0.weight weight", "0.bias bias"}));
    DCHECK_EQ(paths(last), (std::vector<std::string>{"weight weight"}));
    DCHECK(net.named_parameters().at(2).second == last.parameters().at(0));
}

// A module of the user's making a zero-dimensional loss that has diverged: NaN.
class diverged_loss final : public distdl::module<double> {
  protected:
    void do_forward(const tensor<double>&, tensor<double>& y) override {
        volatile double zero = 0;
        y = tensor<double>(shape_t{}, zero / zero);
    }
    void do_adjoint(const tensor<double>&, tensor<double>&) override {}
};

// Its NaN is a result, not the mark of a failure elsewhere in the chain (sequential.hpp).
DISTDL_CHECK(sequential_passes_a_modules_own_nan, world_size == 1) {
    sequential<double> net;
    net.emplace<distdl::relu<double>>(make_partition(world, {0}, {1, 1}));
    net.emplace<diverged_loss>();
    const tensor<double> loss = net.forward(random_tensor<double>({2, 3}, 1));
    DCHECK_EQ(loss.dimension(), std::size_t(0));
    DCHECK(std::isnan(loss()));
}

// A module's refusal names its place in the chain, at each level of nesting: two Linear layers
// would otherwise say alike. (An adjoint before any forward: Linear refuses it.)
DISTDL_CHECK(sequential_names_the_module_that_refused, world_size == 1) {
    const auto P = make_partition(world, {0}, {1, 1});
    sequential<double> net;
    net.emplace<distdl::relu<double>>(P);
    auto& inner = net.emplace<sequential<double>>();
    inner.emplace<distributed_linear<double>>(P, P, P, 3, 2, linear_options{});
    inner.emplace<distributed_linear<double>>(P, P, P, 2, 2, linear_options{});
    DCHECK_THROWS(net.adjoint(random_tensor<double>({4, 2}, 1)), distdl::invalid_argument,
                  "sequential: module [1] of 2: sequential: module [1] of 2: Linear: adjoint() needs a successful "
                  "forward() first");
}

// A module that refuses on some of the chain's workers only (its own): the others, waiting in
// the next module (in the adjoint, the previous one) for a refusing worker, are refused there
// too and nobody waits (on Open MPI, before: forever). Worker 0 names its own tensor, the
// others the zero-dimensional one it passed on. A good call works after.
DISTDL_CHECK(sequential_refusal_reaches_the_chain, world_size >= 4) {
    const int me = world->rank();
    const bool in = me < 4;
    const auto P_0 = make_partition(world, {0}, {1, 1});
    const auto P_4 = make_partition(world, rank_range(0, 4), {1, 4});
    const auto P_W = make_partition(world, rank_range(0, 4), {4, 1});
    const auto on_0 = [&](const shape_t& shape) {
        return me == 0 ? random_tensor<double>(shape, 7) : distdl::zero_volume<double>();
    };
    const auto expect_refusal = [&](const std::function<tensor<double>()>& call, const std::string& own,
                                    const std::string& passed_on) {
        const std::string& expected = me == 0 ? own : passed_on;
        if (in) DCHECK_THROWS(call(), distdl::invalid_argument, expected);
        else DCHECK_EQ(distdl::shape_of(call()), (shape_t{0}));
    };
    // How the others name the zero-dimensional piece worker 0 passes on.
    const std::string mark =
        "(a zero-dimensional tensor: in a sequential, the mark of an earlier failure on that worker, whose error says "
        "why; elsewhere a default tensor<T>(), where zero_volume<T>() passes no data)";
    // Forward: Linear 4 -> 3 on worker 0 alone, then Linear 3 -> 2 from worker 0 to P_y 1x4.
    sequential<double> net;
    net.emplace<distributed_linear<double>>(P_0, P_0, P_0, 4, 3, linear_options{.seed = 1});
    net.emplace<distributed_linear<double>>(P_0, P_4, P_W, 3, 2, linear_options{.seed = 2});
    expect_refusal([&] { return net.forward(on_0({2, 5})); },
                   "Linear: x on P_x worker 0 (world rank 0) has shape [2,5], expected [batch, 4]",
                   "Linear: x on P_x worker 0 (world rank 0) has shape [] " + mark + ", expected [batch, 3]");
    DCHECK_EQ(distdl::shape_of(net.forward(on_0({2, 4}))), in ? (shape_t{2, me < 2 ? 1u : 0u}) : (shape_t{0}));
    // Adjoint: Linear 8 -> 3 from P_x 1x4 to worker 0, then Linear 3 -> 2 on worker 0 alone.
    sequential<double> back;
    back.emplace<distributed_linear<double>>(P_4, P_0, make_partition(world, rank_range(0, 4), {1, 4}), 8, 3,
                                             linear_options{.seed = 3});
    back.emplace<distributed_linear<double>>(P_0, P_0, P_0, 3, 2, linear_options{.seed = 4});
    const tensor<double> x = in ? random_tensor<double>({2, 2}, 8) : distdl::zero_volume<double>();
    const tensor<double> y = back.forward(x);
    expect_refusal([&] { return back.adjoint(on_0({2, 3})); },
                   "Linear: dy on P_y worker 0 (world rank 0) has shape [2,3], expected [batch, 2]",
                   "Linear: dy on P_y worker 0 (world rank 0) has shape [] " + mark + ", expected [batch, 3]");
    DCHECK_EQ(distdl::shape_of(back.adjoint(y)), in ? (shape_t{2, 2}) : (shape_t{0}));
    // A module that only moves data delivers the mark of worker 0's failure (Linear 4 -> 3 on
    // worker 0, then a Broadcast to a 2 x 2 grid and a ReLU there): the receivers fail too.
    sequential<double> spread;
    spread.emplace<distributed_linear<double>>(P_0, P_0, P_0, 4, 3, linear_options{.seed = 5});
    const auto P_22 = make_partition(world, rank_range(0, 4), {2, 2});
    spread.emplace<distdl::broadcast<double>>(P_0, P_22);
    spread.emplace<distdl::relu<double>>(P_22);
    expect_refusal([&] { return spread.forward(on_0({2, 5})); },
                   "Linear: x on P_x worker 0 (world rank 0) has shape [2,5], expected [batch, 4]",
                   "sequential: module [1] of 3 delivered the mark of a failure in forward");
    DCHECK_EQ(distdl::shape_of(spread.forward(on_0({2, 4}))), in ? (shape_t{2, 3}) : (shape_t{0}));
    // A primitive that needs worker 0's piece (Repartition to P_4) refuses it on all its workers.
    sequential<double> moved;
    moved.emplace<distributed_linear<double>>(P_0, P_0, P_0, 4, 3, linear_options{.seed = 6});
    moved.emplace<distdl::repartition<double>>(P_0, P_4);
    expect_refusal([&] { return moved.forward(on_0({2, 5})); },
                   "Linear: x on P_x worker 0 (world rank 0) has shape [2,5], expected [batch, 4]",
                   "Repartition from P_x shape [1,1] to P_y shape [1,4]: the tensor must have rank 2, but worker 0 "
                   "(world rank 0) of P_x holds local shape [] " + mark + " (rank 0)");
    DCHECK_EQ(distdl::shape_of(moved.forward(on_0({2, 4}))), in ? (shape_t{2, me < 3 ? 1u : 0u}) : (shape_t{0}));
}

// A module whose input partition is not where the module before it leaves its output: here the
// same workers in the other order, so every piece has the right shape and would be read as the
// other block. Every worker that holds the chain sees it and refuses, naming both partitions; a
// grid padded on the left with ones (as Broadcast reads its P_x) is the same partition.
DISTDL_CHECK(sequential_refuses_links_that_do_not_fit, world_size >= 2) {
    const int me = world->rank();
    const bool in = me < 2;
    const auto P_0 = make_partition(world, {0}, {1, 1});
    const auto P_01 = make_partition(world, {0, 1}, {1, 2});
    const auto P_10 = make_partition(world, {1, 0}, {1, 2});
    // The two layers of each chain below: the first leaves y on workers [0,1], the second reads
    // its x on [1,0].
    const auto P_w1 = make_partition(world, {0, 1}, {2, 1}), P_w2 = make_partition(world, {1, 0}, {1, 2});
    const auto append_first = [&](sequential<double>& chain) {
        chain.emplace<distributed_linear<double>>(P_0, P_01, P_w1, 4, 6);
    };
    const auto append_second = [&](sequential<double>& chain) {
        chain.emplace<distributed_linear<double>>(P_10, P_0, P_w2, 6, 2);
    };
    const std::string misfit =
        "takes its input on a partition of shape [1,2] over world ranks [1,0], but the module before it leaves "
        "its output on one of shape [1,2] over world ranks [0,1]";
    sequential<double> net;
    append_first(net);
    append_second(net);
    const tensor<double> x = me == 0 ? random_tensor<double>({3, 4}, 9) : distdl::zero_volume<double>();
    DCHECK_THROWS(net.forward(x), distdl::invalid_argument, "sequential: module [1] of 2 " + misfit);

    // The same link inside a nested chain given its modules after it was appended.
    sequential<double> outer;
    append_first(outer);
    append_second(outer.emplace<sequential<double>>());
    DCHECK_THROWS(outer.forward(x), distdl::invalid_argument, "sequential: module [1] of 2 " + misfit);

    // An empty chain between them (a placeholder: the identity) is looked through, also as the
    // first module of a nested chain.
    sequential<double> gap;
    append_first(gap);
    gap.emplace<sequential<double>>();
    append_second(gap);
    DCHECK_THROWS(gap.forward(x), distdl::invalid_argument, "sequential: module [2] of 3 " + misfit);
    sequential<double> nested_gap;
    append_first(nested_gap);
    auto& tail = nested_gap.emplace<sequential<double>>();
    tail.emplace<sequential<double>>().emplace<sequential<double>>();
    append_second(tail);
    DCHECK_THROWS(nested_gap.forward(x), distdl::invalid_argument, "sequential: module [1] of 2 " + misfit);
    DCHECK_THROWS(nested_gap.forward(x), distdl::invalid_argument,
                  "than they hold (a Repartition between them moves the data)");

    // A 4-d grid's output read by Linear: no Repartition makes N x C x L.. into N x features; the
    // advice names Flatten.
    sequential<double> unflattened;
    unflattened.emplace<distdl::relu<double>>(make_partition(world, {0}, {1, 1, 1, 1}));
    unflattened.emplace<distributed_linear<double>>(make_partition(world, {1}, {1, 1}), P_0, P_0, 4, 3);
    const tensor<double> image = me == 0 ? random_tensor<double>({3, 1, 2, 2}, 9) : distdl::zero_volume<double>();
    DCHECK_THROWS(unflattened.forward(image), distdl::invalid_argument,
                  "sequential: module [1] of 2 takes its input on a partition of shape [1,1] over world ranks [1], "
                  "but the module before it leaves its output on one of shape [1,1,1,1] over world ranks [0]: its "
                  "workers would read other blocks than they hold (a Repartition between them moves the data; to "
                  "make N x C x L.. into N x features, Flatten it on a partition that splits only the batch: "
                  "Repartition, Flatten, Repartition)");

    // Linear on worker 0 leaves y on [1,1]; a Broadcast from [1] on worker 0 reads it there, also
    // across an empty chain.
    sequential<double> spread;
    spread.emplace<distributed_linear<double>>(P_0, P_0, P_0, 4, 3);
    spread.emplace<sequential<double>>();
    spread.emplace<distdl::broadcast<double>>(make_partition(world, {0}, {1}), P_01);
    DCHECK_EQ(distdl::shape_of(spread.forward(x)), in ? (shape_t{3, 3}) : (shape_t{0}));
    DCHECK(spread[1].input_partition() == nullptr);
    DCHECK_THROWS(spread[3], distdl::invalid_argument,
                  "sequential: module [3] asked for, the chain has 3 (indices 0 to size() - 1)");

    // The other way round: a grid [1,2] read as [1,1,2] (ReLU does not mind the pieces' rank).
    sequential<double> deeper;
    deeper.emplace<distdl::relu<double>>(P_01);
    deeper.emplace<distdl::relu<double>>(make_partition(world, {0, 1}, {1, 1, 2}));
    const tensor<double> signs = in ? tensor<double>(xt::xarray<double>{{-1.0, 2.0}, {3.0, -4.0}})
                                    : distdl::zero_volume<double>();
    const tensor<double> kept = in ? tensor<double>(xt::xarray<double>{{0.0, 2.0}, {3.0, 0.0}})
                                   : distdl::zero_volume<double>();
    DCHECK(same_bits(deeper.forward(signs), kept));
}
