// Repartition checks (spec 003, DESIGN §3), run on both transports. Every spec example
// (1-5 and the 3x3 -> 4x4 sketch) with extents that do not divide evenly, in the families
// overlapping / disjoint / idle-and-permuted / identity, with balanced and unbalanced input,
// in float and double: data movement bit-exact against ref::repartition on every worker, the
// adjoint returns the input exactly, and the adjoint dot-product test. Plus n < P, zero
// extents, the zero-volume conventions, traffic of an identical layout, and bad input.
#include <algorithm>
#include <string>

#include "core/repartition.hpp"
#include "reference/repartition.hpp"
#include "tests/common/checks.hpp"
#include "tests/primitives/halo_test_util.hpp"

namespace {

using namespace distdl;
using namespace distdl::testing::movement;

struct layout {
    std::vector<int> ranks;
    shape_t shape;
};

struct example {
    shape_t x_shape;
    shape_t y_shape;
    shape_t global;
};

// Spec 003 examples; extents chosen so that no split divides evenly.
const example ex1{{5}, {3}, {13}};
const example ex2{{3, 4}, {4, 2}, {10, 9}};
const example ex3{{3, 2, 2}, {1, 2, 3}, {7, 5, 8}};
const example ex4_scatter{{1, 1, 1}, {1, 3, 2}, {4, 7, 5}};
const example ex5_gather{{1, 3, 2}, {1, 1, 1}, {4, 7, 5}};
const example ex6_3x3_4x4{{3, 3}, {4, 4}, {11, 10}};
// Extra shapes that make the disjoint family possible for 2-D and 3-D within 17 workers.
const example disjoint2{{2, 3}, {3, 2}, {7, 8}};
const example disjoint3{{2, 2, 2}, {1, 2, 3}, {5, 7, 5}};

int count(const shape_t& s) { return static_cast<int>(volume(s)); }

enum class family { overlap, disjoint, idle_permuted, identity };

// Overlapping: P_x on [0, nx), P_y on [s, s + ny) sharing some workers.
int overlap_start(const example& e) {
    const int nx = count(e.x_shape), ny = count(e.y_shape);
    const int s = std::min(nx, ny) / 2;
    return std::max(nx, s + ny) <= distdl::testing::max_sim_world ? s : 0;
}

// Smallest world a family needs (0: cannot be built).
int needs(const example& e, family f) {
    const int nx = count(e.x_shape), ny = count(e.y_shape);
    switch (f) {
        case family::overlap: return std::max(nx, overlap_start(e) + ny);
        case family::disjoint: return nx + ny;
        case family::idle_permuted: return std::max(nx, ny) + 1;
        case family::identity: return nx;
    }
    return 0;
}

std::pair<layout, layout> layouts(const example& e, family f, int world_size) {
    const int nx = count(e.x_shape), ny = count(e.y_shape);
    switch (f) {
        case family::overlap: return {{consecutive_ranks(0, nx), e.x_shape}, {consecutive_ranks(overlap_start(e), ny), e.y_shape}};
        case family::disjoint: return {{consecutive_ranks(0, nx), e.x_shape}, {consecutive_ranks(nx, ny), e.y_shape}};
        case family::idle_permuted: {
            // P_x on the top ranks in descending order, P_y from rank 1 up: rank 0 is idle,
            // and both orders differ from world order.
            std::vector<int> xr = consecutive_ranks(world_size - nx, nx);
            std::reverse(xr.begin(), xr.end());
            std::vector<int> yr = consecutive_ranks(1, ny);
            if (ny > 2) std::swap(yr.front(), yr.back());
            return {{xr, e.x_shape}, {yr, e.y_shape}};
        }
        case family::identity: return {{consecutive_ranks(0, nx), e.x_shape}, {consecutive_ranks(0, nx), e.x_shape}};
    }
    return {};
}

template <class T>
void run_case(const std::shared_ptr<communicator>& world, const cartesian_partition& P_x,
              const cartesian_partition& P_y, const shape_t& global_shape, ref::split_kind split,
              const std::string& what, bool preserve_batch = true) {
    const tensor<T> global = index_tensor<T>(global_shape);
    const auto inputs = ref::split(global, P_x.shape(), split);
    const auto expected = ref::repartition(global, P_y.shape());
    const std::size_t batch = global_shape[0];
    const tensor<T> none = zero_volume<T>(batch, preserve_batch);
    const tensor<T> x = P_x.active() ? inputs[static_cast<std::size_t>(P_x.rank())] : none;

    repartition<T> R(P_x, P_y, repartition_options{.preserve_batch = preserve_batch});
    for (int call = 0; call < 2; ++call) {  // the second call reuses the cached plan and buffers
        const tensor<T> y = R.forward(x);
        MOVEMENT_CHECK_BITS(y, P_y.active() ? expected[static_cast<std::size_t>(P_y.rank())] : none,
                            what << " forward (call " << call << ", world rank " << world->rank() << ")");
        const tensor<T> dx = R.adjoint(y);
        MOVEMENT_CHECK_BITS(dx, x, what << " adjoint (call " << call << ", world rank " << world->rank() << ")");
    }

    // Dot-product test with independent random x and y.
    const std::uint64_t seed = 1000003u * static_cast<std::uint64_t>(world->rank() + 1);
    const tensor<T> xr = P_x.active() ? random_tensor<T>(shape_of(x), seed) : none;
    const tensor<T> Fx = R.forward(xr);
    const tensor<T> yr = P_y.active() ? random_tensor<T>(shape_of(Fx), seed + 17) : none;
    const tensor<T> Fty = R.adjoint(yr);
    check_adjoint(world, xr, Fx, yr, Fty, what);
}

template <class T>
void run_layouts(const std::shared_ptr<communicator>& world, const layout& lx, const layout& ly,
                 const shape_t& global_shape, const std::string& what) {
    const cartesian_partition P_x = make_partition(world, lx.ranks, lx.shape);
    const cartesian_partition P_y =
        (lx.ranks == ly.ranks && lx.shape == ly.shape) ? P_x : make_partition(world, ly.ranks, ly.shape);
    run_case<T>(world, P_x, P_y, global_shape, ref::split_kind::balanced, what + " balanced");
    run_case<T>(world, P_x, P_y, global_shape, ref::split_kind::unbalanced, what + " unbalanced");
}

void run_family(const std::shared_ptr<communicator>& world, const example& e, family f, const std::string& what) {
    const auto [lx, ly] = layouts(e, f, world->size());
    run_layouts<double>(world, lx, ly, e.global, what + " float64");
    run_layouts<float>(world, lx, ly, e.global, what + " float32");
}

}  // namespace

#define REPARTITION_FAMILY_CHECK(name, ex, fam)                                               \
    DISTDL_CHECK(name, needs(ex, fam) > 0 && needs(ex, fam) <= world_size) {                  \
        run_family(world, ex, fam, #name);                                                    \
    }

REPARTITION_FAMILY_CHECK(repartition_ex1_5_to_3_overlap, ex1, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex1_5_to_3_disjoint, ex1, family::disjoint)
REPARTITION_FAMILY_CHECK(repartition_ex1_5_to_3_idle_permuted, ex1, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex1_5_identity, ex1, family::identity)
REPARTITION_FAMILY_CHECK(repartition_ex2_3x4_to_4x2_overlap, ex2, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex2_3x4_to_4x2_idle_permuted, ex2, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex2_3x4_identity, ex2, family::identity)
REPARTITION_FAMILY_CHECK(repartition_ex3_3x2x2_to_1x2x3_overlap, ex3, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex3_3x2x2_to_1x2x3_idle_permuted, ex3, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex3_3x2x2_identity, ex3, family::identity)
REPARTITION_FAMILY_CHECK(repartition_ex4_scatter_overlap, ex4_scatter, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex4_scatter_disjoint, ex4_scatter, family::disjoint)
REPARTITION_FAMILY_CHECK(repartition_ex4_scatter_idle_permuted, ex4_scatter, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex5_gather_overlap, ex5_gather, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex5_gather_disjoint, ex5_gather, family::disjoint)
REPARTITION_FAMILY_CHECK(repartition_ex5_gather_idle_permuted, ex5_gather, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex6_3x3_to_4x4_overlap, ex6_3x3_4x4, family::overlap)
REPARTITION_FAMILY_CHECK(repartition_ex6_3x3_to_4x4_idle_permuted, ex6_3x3_4x4, family::idle_permuted)
REPARTITION_FAMILY_CHECK(repartition_ex6_3x3_identity, ex6_3x3_4x4, family::identity)
REPARTITION_FAMILY_CHECK(repartition_2x3_to_3x2_disjoint, disjoint2, family::disjoint)
REPARTITION_FAMILY_CHECK(repartition_2x2x2_to_1x2x3_disjoint, disjoint3, family::disjoint)

// One worker holding everything, repartitioned onto the whole world and back (every size).
DISTDL_CHECK(repartition_scatter_gather_world, world_size >= 1) {
    const int n = world->size();
    const layout one{{0}, {1, 1}};
    const layout all{consecutive_ranks(0, n), {1, static_cast<std::size_t>(n)}};
    const shape_t global{3, static_cast<std::size_t>(2 * n + 1)};
    run_layouts<double>(world, one, all, global, "scatter 1x1 -> 1xW");
    run_layouts<double>(world, all, one, global, "gather 1xW -> 1x1");
    run_layouts<float>(world, all, one, global, "gather 1xW -> 1x1 float32");
}

// n < P: empty pieces on both sides (extent 0 too), and preserve_batch off.
DISTDL_CHECK(repartition_small_extents, world_size >= 9) {
    const layout x5{consecutive_ranks(0, 5), {5}};
    const layout y3{consecutive_ranks(4, 3), {3}};
    run_layouts<double>(world, x5, y3, {3}, "1-D n=3 over 5 -> 3");
    run_layouts<double>(world, x5, y3, {2}, "1-D n=2 over 5 -> 3");
    run_layouts<double>(world, y3, x5, {2}, "1-D n=2 over 3 -> 5");
    const layout x33{consecutive_ranks(0, 9), {3, 3}};
    const layout y22{{8, 6, 4, 2}, {2, 2}};
    run_layouts<double>(world, x33, y22, {2, 3}, "2-D 2x3 over 3x3 -> 2x2");
    run_layouts<double>(world, x33, y22, {0, 5}, "2-D 0x5 over 3x3 -> 2x2");
    run_layouts<float>(world, y22, x33, {4, 2}, "2-D 4x2 over 2x2 -> 3x3");
    const cartesian_partition P_x = make_partition(world, x33.ranks, x33.shape);
    const cartesian_partition P_y = make_partition(world, y22.ranks, y22.shape);
    run_case<double>(world, P_x, P_y, {5, 4}, ref::split_kind::unbalanced, "no preserve_batch", false);
}

// An identical layout moves no data: only the shape exchange (labelled apart) talks.
DISTDL_CHECK(repartition_identity_moves_no_data, world_size >= 1) {
    const int n = world->size();
    const cartesian_partition P = make_partition(world, consecutive_ranks(0, n), {static_cast<std::size_t>(n), 1});
    const shape_t global{static_cast<std::size_t>(2 * n + 3), 5};
    const tensor<double> g = index_tensor<double>(global);
    const tensor<double> x = ref::split(g, P.shape())[static_cast<std::size_t>(P.rank())];
    repartition<double> R(P, P);
    const auto data_messages = [&]() {
        const auto& by = world->traffic().by_label();
        const auto it = by.find("repartition");
        return it == by.end() ? std::uint64_t{0} : it->second.messages;
    };
    const std::uint64_t before = data_messages();
    const tensor<double> y = R.forward(x);
    const tensor<double> dx = R.adjoint(y);
    DCHECK_EQ(data_messages(), before);
    MOVEMENT_CHECK_BITS(y, x, "identity forward");
    MOVEMENT_CHECK_BITS(dx, x, "identity adjoint");
    // Unbalanced input on the same partition is rebalanced (that does move data).
    const tensor<double> xu = ref::split(g, P.shape(), ref::split_kind::unbalanced)[static_cast<std::size_t>(P.rank())];
    MOVEMENT_CHECK_BITS(R.forward(xu), x, "identity rebalance");
    MOVEMENT_CHECK_BITS(R.adjoint(x), xu, "identity rebalance adjoint");
}

// ---- bad input: typed errors, thrown identically on every worker that takes part ----

DISTDL_CHECK(repartition_rejects_partition_dimensions, world_size >= 1) {
    const int n = world->size();
    const cartesian_partition P_x = make_partition(world, consecutive_ranks(0, n), {static_cast<std::size_t>(n)});
    const cartesian_partition P_y = make_partition(world, consecutive_ranks(0, n), {1, static_cast<std::size_t>(n)});
    DCHECK_THROWS(repartition<double>(P_x, P_y), partition_error, "differ in dimension (1 vs 2)");
    DCHECK_THROWS(repartition<float>(P_y, P_x), partition_error, "P_x shape [1," + std::to_string(n) + "]");
}

DISTDL_CHECK(repartition_rejects_tensor_rank, world_size >= 2) {
    const cartesian_partition P_x = make_partition(world, {0, 1}, {2});
    const cartesian_partition P_y = make_partition(world, {1, 0}, {2});
    repartition<double> R(P_x, P_y);
    const tensor<double> x = P_x.active() ? tensor<double>(shape_t{2, 3}) : zero_volume<double>(2, true);
    if (P_x.active())
        DCHECK_THROWS(R.forward(x), invalid_argument,
                      "must have rank 1, but worker 0 (world rank 0) of P_x holds local shape [2,3] (rank 2)");
    else DCHECK_EQ(shape_of(R.forward(x)), (shape_t{2, 0}));
}

// An extent of 1 split over 2 workers is the balanced split [1, 0], as 2 over 3 is [1, 1, 0]
// (a batch of 1 on a partition that splits the batch: the last, short batch of an epoch).
DISTDL_CHECK(repartition_splits_extent_one, world_size >= 3) {
    const cartesian_partition P_x = make_partition(world, {0, 1}, {1, 2});
    const cartesian_partition P_y = make_partition(world, {2, 1}, {2, 1});
    repartition<float> R(P_x, P_y);
    const int me = world->rank();
    tensor<float> x = zero_volume<float>(1, true);
    if (P_x.active()) x = xt::arange<float>(3.0f) + float(10 * P_x.rank()) + xt::zeros<float>(shape_t{1, 3});
    const tensor<float> y = R.forward(x);
    if (me == 2) DCHECK(same_bits(y, tensor<float>({{0, 1, 2, 10, 11, 12}})));
    else if (me == 1) DCHECK_EQ(shape_of(y), (shape_t{0, 6}));
    const tensor<float> dx = R.adjoint(y);
    if (P_x.active()) DCHECK(same_bits(dx, x));
}

// A worker of P_x outside P_y receives no output, so its dy must be a zero-volume tensor: one
// with data is refused on every worker of the Repartition, not ignored.
DISTDL_CHECK(repartition_adjoint_refuses_dy_on_a_worker_outside_P_y_on_all, world_size >= 2) {
    const cartesian_partition P_x = make_partition(world, {0, 1}, {2});
    const cartesian_partition P_y = make_partition(world, {1}, {1});
    repartition<double> R(P_x, P_y);
    const bool takes_part = world->rank() < 2;
    const tensor<double> y = R.forward(takes_part ? tensor<double>(shape_t{3}, 1.0) : zero_volume<double>());
    if (!takes_part) return;
    const tensor<double> dy = world->rank() == 0 ? tensor<double>(shape_t{3}, 5.0) : y;
    DCHECK_THROWS(R.adjoint(dy), invalid_argument, "must pass a zero-volume dy");
}

// Pieces that keep their volume but change shape between calls ([2,6] then [3,4]) are planned
// anew: the second call gives the new shape and the new blocks, not the old plan's.
DISTDL_CHECK(repartition_replans_a_reshape_of_the_same_volume, world_size >= 3) {
    const cartesian_partition P_x = make_partition(world, {0, 1}, {2, 1});
    const cartesian_partition P_y = make_partition(world, {1, 2}, {1, 2});
    repartition<double> R(P_x, P_y);
    const int me = world->rank();
    for (const shape_t& piece : {shape_t{2, 6}, shape_t{3, 4}}) {
        const std::size_t rows = piece[0], cols = piece[1];
        tensor<double> x = zero_volume<double>(2, true);
        if (me <= 1) {
            x = tensor<double>(piece);
            for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = 100.0 * me + static_cast<double>(i);
        }
        const tensor<double> y = R.forward(x);
        if (me == 0 || me > 2) continue;
        // P_y worker me - 1 holds the global [2 * rows, cols]'s columns [(me - 1) * cols / 2, me * cols / 2).
        tensor<double> want(shape_t{2 * rows, cols / 2});
        for (std::size_t r = 0; r < 2 * rows; ++r)
            for (std::size_t c = 0; c < cols / 2; ++c)
                want(r, c) = 100.0 * static_cast<double>(r / rows) + static_cast<double>((r % rows) * cols) +
                             static_cast<double>((static_cast<std::size_t>(me) - 1) * cols / 2 + c);
        DCHECK(same_bits(y, want));
    }
}

// Pieces that do not tile the grid are refused on every worker of the Repartition, in the
// first dimension (workers 0 and 1 share row 0 but disagree on its height) and in the last
// (workers 0 and 2 share column 0 but disagree on its width).
DISTDL_CHECK(repartition_rejects_pieces_that_do_not_tile, world_size >= 4) {
    const cartesian_partition P_x = make_partition(world, consecutive_ranks(0, 4), {2, 2});
    const cartesian_partition P_y = make_partition(world, {world->size() - 1}, {1, 1});
    repartition<double> R(P_x, P_y);
    struct misfit {
        int worker;
        shape_t shape;
        std::string reason;
    };
    for (const misfit& m : {misfit{1, {2, 4}, "worker 1 (world rank 1) of P_x holds local shape [2,4], whose extent 2 "
                                              "in dimension 0 differs from the extent 3 of worker 0 (world rank 0) at "
                                              "the same index 0 of that dimension"},
                            misfit{2, {3, 5}, "worker 2 (world rank 2) of P_x holds local shape [3,5], whose extent 5 "
                                              "in dimension 1 differs from the extent 4 of worker 0 (world rank 0) at "
                                              "the same index 0 of that dimension"}}) {
        const shape_t mine = world->rank() == m.worker ? m.shape : shape_t{3, 4};
        const tensor<double> x = P_x.active() ? tensor<double>(mine) : zero_volume<double>(5, true);
        if (P_x.active() || P_y.active())
            DCHECK_THROWS(R.forward(x), invalid_argument,
                          "local input shapes do not assemble into a global tensor: " + m.reason);
    }
}
