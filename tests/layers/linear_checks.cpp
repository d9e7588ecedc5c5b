// DistributedLinear (spec 002) on both transports: output, input gradient, parameter values
// and gradients against reference/linear on the global tensors, for identical, overlapping and
// disjoint partitions, uneven splits and empty blocks; calls with changing batch; gradient
// accumulation; the refusal of inconsistent partitions (bad pieces: linear_refusal_checks.cpp).
#include "layers/linear.hpp"
#include "reference/linear.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "verify/runners/pieces.hpp"

namespace {

using distdl::cartesian_partition;
using distdl::distributed_linear;
using distdl::linear_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_close;
using distdl::testing::column_block;
using distdl::testing::make_partition;
using distdl::testing::matrix_block;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;
using distdl::testing::vector_block;

struct linear_setup {
    std::vector<int> x_workers, y_workers, w_workers;  // P_x 1 x P_fi, P_y 1 x P_fo, P_W P_fo x P_fi
    std::size_t P_fi, P_fo;
    std::size_t in, out;
    bool bias = true;
    int needs() const { return distdl::testing::world_size_for({&x_workers, &y_workers, &w_workers}); }
};

// Forward and adjoint for each batch in turn (shapes change between calls, then repeat),
// against the reference on the global tensors; then the parameters on their owners.
template <class T>
void check_linear(const std::shared_ptr<distdl::communicator>& world, const linear_setup& s, std::uint64_t seed) {
    const auto P_x = make_partition(world, s.x_workers, {1, s.P_fi});
    const auto P_y = make_partition(world, s.y_workers, {1, s.P_fo});
    const auto P_W = make_partition(world, s.w_workers, {s.P_fo, s.P_fi});
    const linear_options options{.bias = s.bias, .seed = seed};
    distributed_linear<T> layer(P_x, P_y, P_W, s.in, s.out, options);
    const auto model = distdl::linear_initial_parameters<T>(s.in, s.out, options);
    const int me = world->rank();
    using distdl::verify::runners::rank_in;
    const auto w = std::size_t(me);
    const int px = rank_in(s.x_workers, w), py = rank_in(s.y_workers, w), pw = rank_in(s.w_workers, w);

    tensor<T> y, dx;  // reused across calls, as a training loop would
    tensor<T> dW_sum = xt::zeros<T>(shape_t{s.out, s.in});
    tensor<T> db_sum = xt::zeros<T>(shape_t{s.out});
    std::uint64_t call = 0;
    for (std::size_t batch : {3, 1, 0, 3}) {
        ++call;
        const tensor<T> x = random_tensor<T>({batch, s.in}, seed * 31 + call);
        const tensor<T> dy = random_tensor<T>({batch, s.out}, seed * 37 + call);
        const tensor<T> x_piece = px >= 0 ? column_block(x, s.P_fi, px) : distdl::zero_volume<T>();
        layer.forward(x_piece, y);
        const tensor<T> want_y = s.bias ? distdl::ref::linear(x, model.weight, model.bias) : distdl::ref::linear(x, model.weight);
        if (py >= 0) check_close(y, column_block(want_y, s.P_fo, py), "forward output");
        else DCHECK_EQ(distdl::shape_of(y), (shape_t{0}));

        layer.adjoint(py >= 0 ? column_block(dy, s.P_fo, py) : distdl::zero_volume<T>(), dx);
        if (px >= 0) check_close(dx, column_block(distdl::ref::linear_adjoint_input(dy, model.weight), s.P_fi, px), "adjoint output");
        else DCHECK_EQ(distdl::shape_of(dx), (shape_t{0}));
        dW_sum += distdl::ref::linear_adjoint_weight(dy, x);
        db_sum += distdl::ref::linear_adjoint_bias(dy);
    }

    // Parameters: values are blocks of the global model; gradients accumulated over the calls.
    const auto params = layer.parameters();
    if (pw < 0) {
        DCHECK(params.empty());
        return;
    }
    const std::size_t r = static_cast<std::size_t>(pw) / s.P_fi, c = static_cast<std::size_t>(pw) % s.P_fi;
    DCHECK_EQ(params.size(), std::size_t(s.bias && c == 0 ? 2 : 1));
    DCHECK_EQ(params[0]->name, std::string("weight"));
    DCHECK(distdl::testing::same_bits(params[0]->value, matrix_block(model.weight, s.P_fo, r, s.P_fi, c)));
    check_close(params[0]->grad, matrix_block(dW_sum, s.P_fo, r, s.P_fi, c), "weight gradient");
    if (params.size() == 2) {
        DCHECK_EQ(params[1]->name, std::string("bias"));
        DCHECK(distdl::testing::same_bits(params[1]->value, vector_block(model.bias, s.P_fo, r)));
        check_close(params[1]->grad, vector_block(db_sum, s.P_fo, r), "bias gradient");
    }
    layer.zero_grad();
    for (auto* p : params)
        for (auto v : p->grad) DCHECK_EQ(v, T(0));
}

template <class T>
void check_all_setups(const std::shared_ptr<distdl::communicator>& world) {
    const std::vector<linear_setup> setups = {
        // serial: every partition is worker 0
        {{0}, {0}, {0}, 1, 1, 5, 3},
        // P_fo = 1, P_y inside P_x
        {{0, 1}, {1}, {0, 1}, 2, 1, 7, 4, false},
        // overlapping: P_x row 0 of P_W, P_y column 0; uneven splits
        {{0, 1, 2}, {0, 3}, rank_range(0, 6), 3, 2, 8, 5},
        // n < P: 2 in-features over 3 columns, 1 out-feature over 2 rows; reversed P_W order
        {{2, 1, 0}, {4, 5}, {5, 4, 3, 2, 1, 0}, 3, 2, 2, 1},
        // disjoint: P_x, P_y, P_W on separate workers
        {{5, 6}, {0}, {1, 2}, 2, 1, 6, 6},
        // spec 002's example: 16 -> 12 on P_W 3x4
        {rank_range(0, 4), rank_range(4, 7), rank_range(0, 12), 4, 3, 16, 12},
    };
    std::uint64_t seed = 11;
    for (const auto& s : setups)
        if (s.needs() <= world->size()) check_linear<T>(world, s, seed++);
}

}  // namespace

DISTDL_CHECK(linear_matches_reference_double, true) { check_all_setups<double>(world); }
DISTDL_CHECK(linear_matches_reference_float, world_size <= 7 || world_size >= 12) { check_all_setups<float>(world); }

// Every worker refuses, before any communication, partitions that do not fit together; a
// valid layer built right after works.
DISTDL_CHECK(linear_refuses_inconsistent_partitions, world_size >= 12) {
    const auto P_x4 = make_partition(world, rank_range(0, 4), {1, 4});
    const auto P_y3 = make_partition(world, rank_range(0, 3), {1, 3});
    const auto P_y2 = make_partition(world, rank_range(4, 6), {1, 2});
    const auto P_W33 = make_partition(world, rank_range(0, 9), {3, 3});
    const auto P_W34 = make_partition(world, rank_range(0, 12), {3, 4});
    const auto P_x22 = make_partition(world, rank_range(0, 4), {2, 2});
    DCHECK_THROWS(distributed_linear<double>(P_x4, P_y3, P_W33, 8, 6), distdl::partition_error,
                  "Linear: P_W shape [3,3] does not match P_x shape [1,4] in the in_features split (P_W dimension 1: 3 "
                  "vs P_x dimension 1: 4)");
    DCHECK_THROWS(distributed_linear<float>(P_x4, P_y2, P_W34, 16, 12), distdl::partition_error,
                  "Linear: P_W shape [3,4] does not match P_y shape [1,2] in the out_features split (P_W dimension 0: 3 "
                  "vs P_y dimension 1: 2)");
    DCHECK_THROWS(distributed_linear<double>(P_x22, P_y3, P_W34, 16, 12), distdl::partition_error,
                  "Linear: P_x shape [2,2] must be 1 x P_fi");
    distributed_linear<double> fine(P_x4, P_y3, P_W34, 16, 12);
    const tensor<double> x = world->rank() < 4 ? tensor<double>(xt::ones<double>(shape_t{2, 4})) : distdl::zero_volume<double>();
    const auto y = fine.forward(x);
    DCHECK_EQ(distdl::shape_of(y), world->rank() < 3 ? (shape_t{2, 4}) : (shape_t{0}));
}

// The model does not depend on the partitions: the global W and b are the same blocks
// whatever the layout, and another seed gives another model.
DISTDL_CHECK(linear_initialisation_is_partition_independent, world_size >= 6) {
    const linear_options options{.bias = true, .seed = 99};
    const auto model = distdl::linear_initial_parameters<double>(7, 5, options);
    const auto other = distdl::linear_initial_parameters<double>(7, 5, {.bias = true, .seed = 100});
    DCHECK(!distdl::testing::same_bits(model.weight, other.weight));
    const auto as_float = distdl::linear_initial_parameters<float>(7, 5, options);
    for (std::size_t i = 0; i < model.weight.size(); ++i)
        DCHECK_EQ(as_float.weight.data()[i], static_cast<float>(model.weight.data()[i]));
    const double bound = 1 / std::sqrt(7.0);
    for (auto v : model.weight) DCHECK(std::abs(v) <= bound);

    struct grid { std::size_t P_fo, P_fi; };
    for (const grid g : {grid{1, 1}, grid{2, 3}, grid{3, 2}, grid{6, 1}}) {
        const auto P_x = make_partition(world, rank_range(0, int(g.P_fi)), {1, g.P_fi});
        const auto P_y = make_partition(world, rank_range(0, int(g.P_fo)), {1, g.P_fo});
        const auto P_W = make_partition(world, rank_range(0, int(g.P_fo * g.P_fi)), {g.P_fo, g.P_fi});
        distributed_linear<double> layer(P_x, P_y, P_W, 7, 5, options);
        const auto params = layer.parameters();
        if (!P_W.active()) continue;
        const auto at = P_W.index();
        DCHECK(distdl::testing::same_bits(params.at(0)->value, matrix_block(model.weight, g.P_fo, at[0], g.P_fi, at[1])));
        if (at[1] == 0) DCHECK(distdl::testing::same_bits(params.at(1)->value, vector_block(model.bias, g.P_fo, at[0])));
    }
}
