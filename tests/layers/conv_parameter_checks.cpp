// A convolution parameter given another shape by the program, on one owner: the next call that
// uses it (forward: the values; adjoint: the values and the gradients) is refused on every worker
// of the layer, naming the owner and both shapes, and nobody waits for the owner: in layouts where
// the data reaches every worker the news travels in it, elsewhere the workers agree at the call's
// start. Put back, the layer gives a fresh layer's bits, and a refused adjoint adds no gradient.
#include "core/decomposition.hpp"
#include "layers/conv_general.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace {

using distdl::cartesian_partition;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::make_partition;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;
using distdl::testing::same_bits;

// A GeneralConv1d layout: 3 -> 2 channels, kernel 3, padding 1, batch 2, 8 elements (so y too).
struct layout {
    std::vector<int> x_workers, y_workers, w_workers;
    shape_t P_x, P_y, P_w;
    int needs() const { return distdl::testing::world_size_for({&x_workers, &y_workers, &w_workers}); }
};

constexpr std::size_t in_channels = 3, out_channels = 2;

// This worker's piece of a tensor of `global` shape on P (random; zero-volume off P).
tensor<double> random_piece(const cartesian_partition& P, const shape_t& global, std::uint64_t seed) {
    if (!P.active()) return distdl::zero_volume<double>();
    shape_t local;
    for (std::size_t d = 0; d < global.size(); ++d) local.push_back(distdl::balanced_size(global[d], P.shape()[d], P.index()[d]));
    return random_tensor<double>(local, seed);
}

// Every owner (spatial index 0 of P_w) in turn gives its weight, then its bias, another shape as
// values (forward refused) and as gradients (adjoint refused).
void spoil_each_owner(const std::shared_ptr<distdl::communicator>& world, const layout& l) {
    const auto P_x = make_partition(world, l.x_workers, l.P_x);
    const auto P_y = make_partition(world, l.y_workers, l.P_y);
    const auto P_w = make_partition(world, l.w_workers, l.P_w);
    const bool in_layer = P_x.active() || P_y.active() || P_w.active();
    const distdl::conv_options options{.kernel_size = {3}, .padding = {1}, .seed = 3};
    distdl::general_conv<double> layer(1, P_x, P_y, P_w, in_channels, out_channels, options);
    const auto seed = static_cast<std::uint64_t>(world->rank());
    const tensor<double> x = random_piece(P_x, {2, in_channels, 8}, 10 + seed);
    const tensor<double> dy = random_piece(P_y, {2, out_channels, 8}, 50 + seed);
    tensor<double> y, dx;
    layer.forward(x, y);
    layer.adjoint(dy, dx);

    const std::size_t P_co = l.P_w[0], P_ci = l.P_w[1], spatial = l.P_w[2];
    for (std::size_t co = 0; co < P_co; ++co) {
        for (std::size_t ci = 0; ci < P_ci; ++ci) {
            const std::size_t k = (co * P_ci + ci) * spatial;  // P_w rank of the owner (co, ci, 0)
            const int owner = l.w_workers[k];
            const shape_t weight_block{distdl::balanced_size(out_channels, P_co, co),
                                       distdl::balanced_size(in_channels, P_ci, ci), 3};
            for (const bool is_bias : {false, true}) {
                if (is_bias && ci != 0) continue;  // the bias is on input-channel block 0
                for (const bool is_grad : {false, true}) {
                    const shape_t block = is_bias ? shape_t{weight_block[0]} : weight_block;
                    const shape_t odd = is_grad ? shape_t{7} : shape_t{1, distdl::volume(block)};
                    const std::string text = std::string("GeneralConv1d: ") + (is_grad ? "the gradient of " : "") +
                                             (is_bias ? "bias" : "weight") + " on P_w worker " + std::to_string(k) +
                                             " (world rank " + std::to_string(owner) + ") has shape " +
                                             distdl::format_list(odd) + ", expected " + distdl::format_list(block);
                    distdl::testing::expect_spoilt_parameter_refused(
                        layer, world->rank() == owner, is_bias ? 1 : 0, is_grad, odd, in_layer,
                        [&] {
                            if (is_grad) layer.adjoint(dy, dx);
                            else layer.forward(x, y);
                        },
                        text);
                    layer.forward(x, y);  // usable again
                    layer.adjoint(dy, dx);
                }
            }
        }
    }
    distdl::general_conv<double> fresh(1, P_x, P_y, P_w, in_channels, out_channels, options);
    DCHECK(same_bits(layer.forward(x), fresh.forward(x)));
    DCHECK(same_bits(layer.adjoint(dy), fresh.adjoint(dy)));
}

// Layouts of every kind: with and without a halo exchange, partitions shared, nested and
// disjoint (where the data cannot reach every worker and the call starts with an agreement).
const std::vector<layout>& layouts() {
    static const std::vector<layout> all = {
        {{0}, {0}, {0}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
        // feature: halo, one owner
        {rank_range(0, 4), rank_range(0, 4), rank_range(0, 4), {1, 1, 4}, {1, 1, 4}, {1, 1, 4}},
        // channel: P_x and P_y inside P_w
        {{0, 1}, {3, 4, 5}, rank_range(0, 6), {1, 2, 1}, {1, 3, 1}, {3, 2, 1}},
        // channel: P_x and P_y outside P_w (both directions agree at the start)
        {{6, 7}, {4, 5}, rank_range(0, 4), {1, 2, 1}, {1, 2, 1}, {2, 2, 1}},
        // general: halo, P_w scrambled over P_x and P_y
        {rank_range(0, 4), {4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {1, 2, 2}, {1, 2, 2}, {2, 2, 2}},
        // general: P_x = P_w, the sum along P_ci into P_y inside them
        {rank_range(0, 4), {0, 2}, rank_range(0, 4), {1, 2, 2}, {1, 1, 2}, {1, 2, 2}},
        // feature-like with P_y outside (adjoint agrees at the start)
        {rank_range(0, 4), rank_range(4, 8), rank_range(0, 4), {1, 1, 4}, {1, 1, 4}, {1, 1, 4}},
        // general: halo, P_x workers at other positions of P_w than their windows' (forward agrees)
        {{1, 3}, rank_range(0, 4), rank_range(0, 4), {1, 1, 2}, {1, 2, 2}, {2, 1, 2}},
        // general: halo, P_x outside P_w and P_y (forward agrees at the start)
        {rank_range(8, 12), rank_range(0, 4), rank_range(0, 8), {1, 2, 2}, {1, 2, 2}, {2, 2, 2}},
        // general: halo, P_y partly outside (adjoint agrees at the start)
        {rank_range(0, 4), {4, 5, 8, 9}, rank_range(0, 8), {1, 2, 2}, {1, 2, 2}, {2, 2, 2}},
    };
    return all;
}

}  // namespace

DISTDL_CHECK(conv_refuses_parameters_of_another_shape_everywhere, world_size == 4 || world_size >= 12) {
    for (const auto& l : layouts())
        if (l.needs() <= world->size()) spoil_each_owner(world, l);
}
