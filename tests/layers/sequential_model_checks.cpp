// A model of every convolution and pooling layer in one sequential, on both transports, as a
// model-parallel user would chain them: FeatureConv2d -> MaxPool2d -> Repartition ->
// ChannelConv2d -> Repartition -> GeneralConv2d -> AvgPool2d, each on its own partitions (idle,
// shared and reordered workers). Three steps whose batch changes (2, 1, 2), so that every layer
// learns its shapes from the pieces it is handed and learns them again; each step's output and
// input gradient pieces, and at the end every parameter's accumulated gradient, against the same
// chain of reference functions on the whole tensors.
#include <utility>

#include "core/repartition.hpp"
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"
#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"
#include "tests/layers/conv_test_util.hpp"
#include "verify/runners/pieces.hpp"

namespace {

using distdl::conv_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_piece_of;
using distdl::testing::make_partition;
using distdl::testing::piece_of;
using distdl::testing::random_tensor;
using distdl::verify::runners::rank_in;

// One convolution of the model: its layer, its global model and the sums of its gradients.
template <class T>
struct conv_stage {
    distdl::general_conv<T>& layer;
    shape_t P_w;
    std::vector<int> w_workers;
    distdl::conv_parameters<T> model;
    distdl::ref::conv_geometry geometry;
    tensor<T> dw_sum, db_sum;

    conv_stage(distdl::general_conv<T>& l, shape_t P_w_shape, std::vector<int> workers)
        : layer(l), P_w(std::move(P_w_shape)), w_workers(std::move(workers)),
          model(distdl::conv_initial_parameters<T>(l.spec())),
          geometry{l.spec().stride, l.spec().padding, l.spec().dilation},
          dw_sum(xt::zeros<T>(l.spec().weight_shape())), db_sum(xt::zeros<T>(shape_t{l.spec().out_channels})) {}

    tensor<T> forward(const tensor<T>& x) const {
        return distdl::ref::conv_forward(x, model.weight, &model.bias, geometry);
    }
    // The input gradient; adds the parameter gradients to the sums.
    tensor<T> adjoint(const tensor<T>& x, const tensor<T>& dy) {
        dw_sum += distdl::ref::conv_adjoint_weight(x, dy, layer.spec().weight_shape(), geometry);
        db_sum += distdl::ref::conv_adjoint_bias(dy);
        return distdl::ref::conv_adjoint_input(dy, model.weight, distdl::shape_of(x), geometry);
    }
    void check_parameters(int me) const {
        distdl::testing::check_conv_parameters(layer.parameters(), P_w, rank_in(w_workers, std::size_t(me)),
                                               layer.spec(), model, dw_sum, db_sum);
    }
};

template <class T>
void check_model(const std::shared_ptr<distdl::communicator>& world) {
    const int me = world->rank();
    // Feature conv and max pool on A; repartition to B; channel conv B -> C over W2; repartition
    // to D; general conv D -> E over W3; average pool on E.
    const std::vector<int> a = {0, 1, 2, 3}, b = {5, 4}, c = {6, 7}, w2 = {4, 5, 6, 7}, d = {3, 2, 1, 0}, e = {0, 2},
                           w3 = {0, 1, 2, 3};
    const shape_t A{1, 1, 2, 2}, B{1, 2, 1, 1}, C{1, 2, 1, 1}, W2{2, 2, 1, 1}, D{1, 2, 2, 1}, E{1, 1, 2, 1},
        W3{1, 2, 2, 1};
    const auto P_a = make_partition(world, a, A), P_b = make_partition(world, b, B), P_c = make_partition(world, c, C);
    const auto P_w2 = make_partition(world, w2, W2), P_d = make_partition(world, d, D);
    const auto P_e = make_partition(world, e, E), P_w3 = make_partition(world, w3, W3);

    const distdl::ref::pool_geometry max_g{.kernel_size = {2}}, avg_g{.kernel_size = {2}, .stride = {1}};
    distdl::sequential<T> net;
    auto& conv1 = net.template emplace<distdl::feature_conv<T>>(
        2, P_a, 3, 4, conv_options{.kernel_size = {3}, .padding = {1}, .seed = 11});
    net.template emplace<distdl::distributed_max_pool<T>>(P_a,
                                                          distdl::pool_options{.kernel_size = {2}, .spatial_dims = 2});
    net.template emplace<distdl::repartition<T>>(P_a, P_b);
    auto& conv2 = net.template emplace<distdl::channel_conv<T>>(
        2, P_b, P_c, P_w2, 4, 5, conv_options{.kernel_size = {3}, .padding = {1}, .seed = 12});
    net.template emplace<distdl::repartition<T>>(P_c, P_d);
    auto& conv3 = net.template emplace<distdl::general_conv<T>>(
        2, P_d, P_e, P_w3, 5, 3,
        conv_options{.kernel_size = {3, 2}, .padding = {1, 0}, .dilation = {2, 1}, .seed = 13});
    net.template emplace<distdl::distributed_avg_pool<T>>(
        P_e, distdl::pool_options{.kernel_size = {2}, .stride = {1}, .spatial_dims = 2});

    conv_stage<T> s1(conv1, A, a), s2(conv2, W2, w2), s3(conv3, W3, w3);
    tensor<T> y, dx;  // reused across steps, as a training loop would
    std::uint64_t step = 0;
    for (const std::size_t batch : {2, 1, 2}) {
        ++step;
        const tensor<T> x = random_tensor<T>({batch, 3, 12, 10}, 40 + step);
        const tensor<T> h1 = s1.forward(x), h2 = distdl::ref::max_pool(h1, max_g), h3 = s2.forward(h2),
                        h4 = s3.forward(h3), want_y = distdl::ref::avg_pool(h4, avg_g);
        net.forward(piece_of(x, A, a, me), y);
        check_piece_of(y, want_y, E, e, me, "model output");

        const tensor<T> dy = random_tensor<T>(distdl::shape_of(want_y), 50 + step);
        net.adjoint(piece_of(dy, E, e, me), dx);
        const tensor<T> d4 = distdl::ref::avg_pool_adjoint(dy, distdl::shape_of(h4), avg_g);
        const tensor<T> d2 = s2.adjoint(h2, s3.adjoint(h3, d4));
        const tensor<T> want_dx = s1.adjoint(x, distdl::ref::max_pool_adjoint(h1, d2, max_g));
        check_piece_of(dx, want_dx, A, a, me, "model input gradient");
    }
    s1.check_parameters(me);
    s2.check_parameters(me);
    s3.check_parameters(me);
}

}  // namespace

DISTDL_CHECK(sequential_model_of_every_conv_and_pool_matches_reference,
             world_size == 8 || world_size == 12 || world_size == 17) {
    check_model<double>(world);
    check_model<float>(world);
}
