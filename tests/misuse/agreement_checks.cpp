// Construction arguments that differ between workers (issue 11.2): every worker is refused
// with one message naming the argument, both values and the world ranks holding each, and
// nobody waits. The last world rank is the odd one out.
#include "core/all_sum_reduce.hpp"
#include "core/broadcast.hpp"
#include "core/halo_exchange.hpp"
#include "core/repartition.hpp"
#include "core/sum_reduce.hpp"
#include "tests/common/checks.hpp"
#include "tests/misuse/misuse_util.hpp"

namespace {

using namespace distdl;
using distdl::testing::disagreement;
using distdl::testing::first_ranks;
using distdl::testing::make_partition;
using distdl::testing::rank0_1d;
using distdl::testing::odd_one;
using distdl::testing::rank_range;
using distdl::testing::whole_world_1d;

kernel_geometry geometry_1d(std::size_t k, std::size_t s = 1, std::size_t p = 0, std::size_t d = 1) {
    return {{k}, {s}, {p}, {d}};
}

}  // namespace

DISTDL_CHECK(misuse_halo_global_shape_differs, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    const std::size_t n = odd_one(world) ? 17 : 16;
    DCHECK_THROWS(halo_exchange<double>(P_x, {n + 16}, geometry_1d(3)), invalid_argument,
                  disagreement(world, "HaloExchange", "global_shape", "[32]", "[33]"));
}

DISTDL_CHECK(misuse_halo_kernel_size_differs, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    DCHECK_THROWS(halo_exchange<double>(P_x, {40}, geometry_1d(odd_one(world) ? 5 : 3)), invalid_argument,
                  disagreement(world, "HaloExchange", "kernel_size", "[3]", "[5]"));
}

DISTDL_CHECK(misuse_halo_stride_padding_dilation_differ, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    const bool odd = odd_one(world);
    DCHECK_THROWS(halo_exchange<float>(P_x, {40}, geometry_1d(3, odd ? 2 : 1, odd ? 1 : 0, odd ? 2 : 1)),
                  invalid_argument,
                  disagreement(world, "HaloExchange", "stride", "[1]", "[2]") + "; and on padding: [0] on world ranks " +
                      first_ranks(world->size() - 1));
    DCHECK_THROWS(halo_exchange<float>(P_x, {40}, geometry_1d(3, 1, 0, odd ? 2 : 1)), invalid_argument,
                  disagreement(world, "HaloExchange", "dilation", "[1]", "[2]"));
}

DISTDL_CHECK(misuse_halo_element_type_differs, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    const std::string expected = disagreement(world, "HaloExchange", "the element type", "float64", "float32");
    if (odd_one(world)) DCHECK_THROWS(halo_exchange<float>(P_x, {40}, geometry_1d(3)), invalid_argument, expected);
    else DCHECK_THROWS(halo_exchange<double>(P_x, {40}, geometry_1d(3)), invalid_argument, expected);
}

// Three different values: each group is named.
DISTDL_CHECK(misuse_halo_three_global_shapes, world_size >= 3) {
    const auto P_x = whole_world_1d(world);
    const int n = world->size();
    const std::size_t extent = world->rank() == n - 1 ? 50 : world->rank() == n - 2 ? 60 : 40;
    DCHECK_THROWS(halo_exchange<double>(P_x, {extent}, geometry_1d(3)), invalid_argument,
                  "HaloExchange: workers disagree on global_shape: [40] on world ranks " + first_ranks(n - 2) +
                      ", [60] on world ranks [" + std::to_string(n - 2) + "], [50] on world ranks [" +
                      std::to_string(n - 1) + "]");
}

// transpose_src on one worker only used to deadlock inside the team construction.
DISTDL_CHECK(misuse_broadcast_transpose_src_on_one_worker, world_size >= 2) {
    const auto P_x = rank0_1d(world);
    const auto P_y = whole_world_1d(world);
    broadcast_options o;
    o.transpose_src = odd_one(world);
    DCHECK_THROWS(broadcast<double>(P_x, P_y, o), invalid_argument,
                  disagreement(world, "Broadcast", "transpose_src", "false", "true"));
}

DISTDL_CHECK(misuse_broadcast_transpose_dest_differs, world_size >= 2) {
    const auto P_x = rank0_1d(world);
    const auto P_y = whole_world_1d(world);
    broadcast_options o;
    o.transpose_dest = !odd_one(world);
    DCHECK_THROWS(broadcast<double>(P_x, P_y, o), invalid_argument,
                  disagreement(world, "Broadcast", "transpose_dest", "true", "false"));
}

DISTDL_CHECK(misuse_broadcast_preserve_batch_differs, world_size >= 2) {
    const auto P_x = rank0_1d(world);
    const auto P_y = whole_world_1d(world);
    broadcast_options o;
    o.preserve_batch = !odd_one(world);
    DCHECK_THROWS(broadcast<float>(P_x, P_y, o), invalid_argument,
                  disagreement(world, "Broadcast", "preserve_batch", "true", "false"));
}

DISTDL_CHECK(misuse_sum_reduce_transpose_src_differs, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    const auto P_y = rank0_1d(world);
    sum_reduce_options o;
    o.transpose_src = odd_one(world);
    DCHECK_THROWS(sum_reduce<double>(P_x, P_y, o), invalid_argument,
                  disagreement(world, "SumReduce", "transpose_src", "false", "true"));
}

DISTDL_CHECK(misuse_all_sum_reduce_axes_differ, world_size >= 2) {
    const int n = world->size();
    const auto P_x = make_partition(world, rank_range(0, n), {1, static_cast<std::size_t>(n)});
    const std::vector<std::size_t> axes = odd_one(world) ? std::vector<std::size_t>{0} : std::vector<std::size_t>{1};
    DCHECK_THROWS(all_sum_reduce<double>(P_x, axes), invalid_argument,
                  disagreement(world, "AllSumReduce", "axes_reduce", "[1]", "[0]"));
}

// An axis out of range on one worker only: the disagreement is found before the range check.
DISTDL_CHECK(misuse_all_sum_reduce_bad_axis_on_one_worker, world_size >= 2) {
    const auto P_x = whole_world_1d(world);
    const std::vector<std::size_t> axes = odd_one(world) ? std::vector<std::size_t>{7} : std::vector<std::size_t>{0};
    DCHECK_THROWS(all_sum_reduce<double>(P_x, axes), invalid_argument,
                  disagreement(world, "AllSumReduce", "axes_reduce", "[0]", "[7]"));
}

DISTDL_CHECK(misuse_repartition_preserve_batch_differs, world_size >= 2) {
    const auto P_x = rank0_1d(world);
    const auto P_y = whole_world_1d(world);
    repartition_options o;
    o.preserve_batch = !odd_one(world);
    DCHECK_THROWS(repartition<double>(P_x, P_y, o), invalid_argument,
                  disagreement(world, "Repartition", "preserve_batch", "true", "false"));
}

DISTDL_CHECK(misuse_repartition_element_type_differs, world_size >= 2) {
    const auto P_x = rank0_1d(world);
    const auto P_y = whole_world_1d(world);
    const std::string expected = disagreement(world, "Repartition", "the element type", "float32", "float64");
    if (odd_one(world)) DCHECK_THROWS(repartition<double>(P_x, P_y), invalid_argument, expected);
    else DCHECK_THROWS(repartition<float>(P_x, P_y), invalid_argument, expected);
}

// Workers constructing different modules are told that, not a field-by-field comparison of
// arguments that do not line up.
DISTDL_CHECK(misuse_different_modules, world_size >= 2) {
    const int n = world->size();
    const auto P_x = whole_world_1d(world);
    const std::string expected = "workers construct different modules: AllSumReduce on world ranks " +
                                 first_ranks(n - 1) + ", HaloExchange on world ranks [" + std::to_string(n - 1) + "]";
    if (odd_one(world)) DCHECK_THROWS(halo_exchange<double>(P_x, {40}, geometry_1d(3)), invalid_argument, expected);
    else DCHECK_THROWS(all_sum_reduce<double>(P_x, {0}), invalid_argument, expected);
}

// Agreement does not get in the way: equal arguments construct and run.
DISTDL_CHECK(misuse_equal_arguments_construct, true) {
    const auto P_x = whole_world_1d(world);
    halo_exchange<double> halo(P_x, {40}, geometry_1d(3, 1, 1));
    all_sum_reduce<double> sum(P_x, {0});
    const auto y = sum.forward(tensor<double>(xt::ones<double>({2})));
    DCHECK_EQ(y(0), static_cast<double>(world->size()));
}
