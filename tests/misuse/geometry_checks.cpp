// Geometry that cannot work, given alike on every worker (issue 11.3): sizes that overflow
// 64 bits and kernels that do not fit are refused on every worker with a message naming the
// quantity, never wrapped into a wrong size.
#include <limits>

#include "core/all_sum_reduce.hpp"
#include "core/broadcast.hpp"
#include "core/halo_exchange.hpp"
#include "core/repartition.hpp"
#include "layers/conv_feature.hpp"
#include "layers/linear.hpp"
#include "layers/pool_max.hpp"
#include "tests/common/checks.hpp"
#include "tests/misuse/misuse_util.hpp"

namespace {

using namespace distdl;
using distdl::testing::make_partition;
using distdl::testing::whole_world_1d;

constexpr std::size_t all_ones = std::numeric_limits<std::size_t>::max();
constexpr std::size_t two_to(int e) { return std::size_t{1} << e; }

}  // namespace

// d*(k-1)+1 wraps to 0 for d = 2^64-1, k = 2: used to PASS with a wrong window.
DISTDL_CHECK(misuse_halo_dilation_overflow, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{2}, {1}, {0}, {all_ones}}), invalid_argument,
                  "kernel extent dilation*(kernel_size-1)+1: 18446744073709551615 + 1 does not fit in a 64-bit size");
}

DISTDL_CHECK(misuse_halo_kernel_extent_overflow, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{two_to(33)}, {1}, {0}, {two_to(33)}}), invalid_argument,
                  "kernel extent dilation*(kernel_size-1): 8589934592 * 8589934591 does not fit");
}

// 2*2^63 wraps to 0 (was signed overflow in the window arithmetic).
DISTDL_CHECK(misuse_halo_padding_2_pow_63, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{3}, {1}, {two_to(63)}, {1}}), invalid_argument,
                  "padded length n+2*padding: 2 * 9223372036854775808 does not fit in a 64-bit size");
}

// n + 2*2^62 fits an unsigned size but not a signed offset (was std::bad_array_new_length).
DISTDL_CHECK(misuse_halo_padding_2_pow_62, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{3}, {1}, {two_to(62)}, {1}}), invalid_argument,
                  "padded length of dimension 0: 9223372036854775840 exceeds the largest signed 64-bit offset");
}

// Each padded length fits, their product does not.
DISTDL_CHECK(misuse_halo_padded_volume_overflow, true) {
    const int n = world->size();
    const auto P_x = make_partition(world, distdl::testing::rank_range(0, n), {1, static_cast<std::size_t>(n)});
    DCHECK_THROWS(halo_exchange<double>(P_x, {4, 4}, {{3, 3}, {1, 1}, {two_to(59), 0}, {1, 1}}), invalid_argument,
                  ": bytes of the padded tensor: 4611686018427387920 * 8 does not fit in a 64-bit size");
    DCHECK_THROWS(halo_exchange<double>(P_x, {4, 32}, {{3, 3}, {1, 1}, {two_to(60), 0}, {1, 1}}), invalid_argument,
                  ": padded volume [2305843009213693956,32]: 2305843009213693956 * 32 does not fit");
}

DISTDL_CHECK(misuse_halo_kernel_size_zero, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{0}, {1}, {0}, {1}}), invalid_argument,
                  "dimension 0: kernel size 0, stride 1 and dilation 1 must be at least 1");
}

DISTDL_CHECK(misuse_halo_kernel_does_not_fit, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {4}, {{3}, {1}, {0}, {2}}), invalid_argument,
                  "kernel does not fit in dimension 0: extent 4 + 2*padding 0 < dilation 2 * (kernel size 3 - 1) + 1 = 5");
}

DISTDL_CHECK(misuse_halo_geometry_wrong_length, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32}, {{3, 3}, {1}, {0}, {1}}), invalid_argument,
                  "kernel_size [3,3] has 2 entries, expected one per dimension (1)");
}

DISTDL_CHECK(misuse_halo_dimension_mismatch, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {32, 4}, {{3, 3}, {1, 1}, {0, 0}, {1, 1}}), partition_error,
                  "dimensions differ (1 vs 2)");
}

// A wrong input shape on every worker of P_x: all refuse with the first worker's problem, nobody waits.
DISTDL_CHECK(misuse_halo_wrong_input_shape_everywhere, true) {
    const auto P_x = whole_world_1d(world);
    halo_exchange<double> halo(P_x, {4 * static_cast<std::size_t>(world->size())}, {{3}, {1}, {1}, {1}});
    const tensor<double> x = xt::zeros<double>({5});
    DCHECK_THROWS(halo.forward(x), invalid_argument,
                  "HaloExchange: worker 0 (world rank 0) of P_x shape [" + std::to_string(world->size()) + "]");
    DCHECK_THROWS(halo.forward(x), invalid_argument, "expects a tensor of shape [4], got [5]");
}

DISTDL_CHECK(misuse_all_sum_reduce_axis_out_of_range, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(all_sum_reduce<double>(P_x, {1}), partition_error, "AllSumReduce: axis 1 out of range");
}

DISTDL_CHECK(misuse_all_sum_reduce_axis_repeated, true) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(all_sum_reduce<double>(P_x, {0, 0}), partition_error, "AllSumReduce: axis 0 repeated");
}

DISTDL_CHECK(misuse_repartition_dimensions_differ, true) {
    const int n = world->size();
    const auto P_x = whole_world_1d(world);
    const auto P_y = make_partition(world, distdl::testing::rank_range(0, n), {1, static_cast<std::size_t>(n)});
    DCHECK_THROWS(repartition<double>(P_x, P_y), partition_error, "differ in dimension (1 vs 2)");
}

// Broadcast rule (spec 000): P_x 2 to P_y 3 matches in no way.
DISTDL_CHECK(misuse_broadcast_shapes_break_the_rules, world_size >= 3) {
    const auto P_x = make_partition(world, {0, 1}, {2});
    const auto P_y = make_partition(world, {0, 1, 2}, {3});
    DCHECK_THROWS(broadcast<double>(P_x, P_y), partition_error, "");
}

// Layers name themselves: a convolution whose weight no size can count, a padding past signed
// offsets, pooling told of 4 spatial dimensions, partitions made from another world.
DISTDL_CHECK(misuse_layers_name_themselves, true) {
    const int n = world->size();
    const auto P_x = make_partition(world, distdl::testing::rank_range(0, n), {1, 1, static_cast<std::size_t>(n), 1});
    const conv_options huge_kernel{.kernel_size = {two_to(40)}, .dilation = {two_to(40)}};
    DCHECK_THROWS(feature_conv<double>(2, P_x, 1, 1, huge_kernel), invalid_argument,
                  "FeatureConv2d: weight shape [1,1,1099511627776,1099511627776]: ");
    DCHECK_THROWS(feature_conv<double>(2, P_x, 1, 1, conv_options{.kernel_size = {3}, .padding = {two_to(62)}}),
                  invalid_argument,
                  "FeatureConv2d: 2*padding of spatial dimension 0: 9223372036854775808 exceeds the largest signed");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, pool_options{.kernel_size = {2}, .spatial_dims = 4}),
                  invalid_argument, "MaxPool: spatial_dims 4 given, expected 1 to 3");
    DCHECK_THROWS(distributed_max_pool<double>(P_x, pool_options{.kernel_size = {2}, .padding = {two_to(63)},
                                                                 .input_shape = shape_t{1, 1, 4, 4}}),
                  invalid_argument,
                  "MaxPool2d: padded length n+2*padding of spatial dimension 0: 2 * 9223372036854775808");
    const auto P_1 = make_partition(world, {0}, {1, 1});
    const auto twin = partition::world(world->create_sub(distdl::testing::rank_range(0, n)));
    const auto P_twin = twin.create_partition_inclusive({0}).create_cartesian_topology_partition({1, 1});
    DCHECK_THROWS(distributed_linear<double>(P_1, P_twin, P_1, 2, 2), partition_error,
                  "Linear: P_y was made from another world communicator than P_x");
}
