#include "core/repartition.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>

#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/detail/call_status.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/output.hpp"
#include "core/error.hpp"

// How it works. Every worker of the world builds the module; only the workers of the union
// of P_x and P_y take part in a call. The plan (the global shape, the box each P_x worker
// owns, the balanced box of each P_y worker, and from them this worker's boxes to send and
// receive) is built once and reused while the local input shapes stay the same:
//   - each call moves the data along the plan and agrees on a status over the union (in the
//     data messages on small unions, otherwise an all-reduce while the data are in flight:
//     core/detail/box_exchange.hpp, step 4): did any worker get a bad argument (then every
//     worker throws the same error once the messages are done), did any worker's input shape
//     change since the plan (then every worker rebuilds it and moves the data again). A worker
//     whose input does not fit the plan sends zeros of the planned shape, so message counts
//     always match and nobody waits;
//   - building the plan needs no per-worker table: each P_x worker adds its extent in every
//     dimension into the slot of its grid index there (an all-reduce of sum(P_x shape) words);
//     every worker sharing a slot must hold the same extent (each checks its own against the
//     slot's mean, and the verdict is agreed), and prefix sums give every P_x box;
//   - the data move on the shared box-exchange engine (core/detail/box_exchange.hpp);
//     contiguous boxes go straight from x and into y.
// With `global_shape` given at construction (balanced input), the plan is built there without
// communication, and the first call is already on the fast path.

namespace distdl {

namespace {

constexpr int forward_tag = 1;
constexpr int adjoint_tag = 2;

int index_of(const std::vector<int>& list, int value) {
    auto it = std::find(list.begin(), list.end(), value);
    return it == list.end() ? -1 : static_cast<int>(it - list.begin());
}

// Zero-volume result of a worker outside both partitions: it never learns the global shape,
// so it keeps the batch extent of its own (zero-volume) argument.
template <class T>
void outside_result(const tensor<T>& arg, tensor<T>& out, bool preserve_batch) {
    DISTDL_REQUIRE(arg.size() == 0, "Repartition: a worker in neither P_x nor P_y must pass a zero-volume tensor, got "
                                    "shape "
                                        << format_piece_shape(shape_of(arg)));
    const bool keep = preserve_batch && arg.dimension() >= 2;
    detail::prepare_output(out, keep ? shape_t{arg.shape()[0], 0} : shape_t{0});
}

}  // namespace

template <class T>
struct repartition<T>::state {
    cartesian_partition P_x;
    cartesian_partition P_y;
    partition P_union;
    repartition_options options;
    int x_rank = -1;              // this worker in P_x / P_y (-1 when not a member)
    int y_rank = -1;

    // The plan of the last forward (also what adjoint reverses).
    bool planned = false;
    shape_t global_shape;
    shape_t in_shape, out_shape;  // this worker's input and output shapes
    std::optional<detail::box_exchange<T>> exchange;

    state(const cartesian_partition& px, const cartesian_partition& py, repartition_options opts)
        : P_x(px), P_y(py), P_union(px.create_partition_union(py)), options(std::move(opts)) {}

    // Union rank of a world rank of the union (P_x worker r is union rank r). A search, used
    // for a worker's few peers only: a table for every P_y worker would cost O(n) per worker.
    int union_rank_of(int world_rank) const { return index_of(P_union.members(), world_rank); }
    std::string describe() const {
        return "Repartition from P_x shape " + format_list(P_x.shape()) + " to P_y shape " + format_list(P_y.shape());
    }
    // Collective over the union: the extents of every P_x slab, checked to tile a tensor.
    std::vector<std::vector<std::size_t>> gather_extents(const tensor<T>& x);
    [[noreturn]] void refuse_unassembled(const tensor<T>& x, const shape_t& c, const std::vector<std::size_t>& base);
    // Local: the plan from the extents of every slab (offsets[d][i]: start of slab i in d).
    void build_plan(const std::vector<std::vector<std::size_t>>& extents);
    std::vector<T> zeros;  // what a worker whose input does not fit the plan sends (only then)
    const T* stand_in(std::size_t count) {
        if (zeros.size() < count) zeros.assign(count, T(0));
        return zeros.data();
    }
    tensor<T>& zero_output(tensor<T>& out) const {
        detail::prepare_output(out, options.preserve_batch ? shape_t{global_shape[0], 0} : shape_t{0});
        return out;
    }
};

template <class T>
std::vector<std::vector<std::size_t>> repartition<T>::state::gather_extents(const tensor<T>& x) {
    const std::size_t dim = P_x.dim();
    const shape_t& px = P_x.shape();
    std::vector<std::size_t> base(dim + 1, 0);
    for (std::size_t d = 0; d < dim; ++d) base[d + 1] = base[d] + px[d];
    std::vector<std::uint64_t> mine(base[dim], 0), sums(base[dim], 0);
    shape_t c;
    if (x_rank >= 0) {
        c = unravel_index(static_cast<std::size_t>(x_rank), px);  // row-major, as the partition
        for (std::size_t d = 0; d < dim; ++d) mine[base[d] + c[d]] = x.shape()[d];
    }
    communicator& comm = *P_union.comm();
    {
        traffic_scope scope(comm.traffic(), comm.traffic().label() + ".shapes");
        comm.all_reduce_sum(mine.data(), sums.data(), mine.size(), dtype::uint64);
    }
    // Every slab holds volume(P_x) / P_x[d] workers; each checks its extent against the slab's sum.
    const std::size_t nx = volume(px);
    bool off = false;
    for (std::size_t d = 0; x_rank >= 0 && d < dim; ++d)
        off = off || differs_from_sum(x.shape()[d], nx / px[d], sums[base[d] + c[d]]);
    if (detail::agree_on_call(comm, {}, off)) refuse_unassembled(x, c, base);
    std::vector<std::vector<std::size_t>> extents(dim);
    for (std::size_t d = 0; d < dim; ++d)
        for (std::size_t i = 0; i < px[d]; ++i) extents[d].push_back(sums[base[d] + i] / (nx / px[d]));
    return extents;
}

// Error path of gather_extents, on every union worker together: some slab's extents differ. Each
// slab's first worker (index 0 along every other dimension) tells its extent, and the workers
// whose extent differs from their slab's first are named (comparing with the mean named every
// worker of the slab).
template <class T>
void repartition<T>::state::refuse_unassembled(const tensor<T>& x, const shape_t& c,
                                               const std::vector<std::size_t>& base) {
    const std::size_t dim = P_x.dim();
    const shape_t& px = P_x.shape();
    std::vector<std::uint64_t> mine(base[dim], 0), first(base[dim], 0);
    for (std::size_t d = 0; x_rank >= 0 && d < dim; ++d) {
        bool slab_first = true;
        for (std::size_t e = 0; e < dim; ++e) slab_first = slab_first && (e == d || c[e] == 0);
        if (slab_first) mine[base[d] + c[d]] = x.shape()[d];
    }
    P_union.comm()->all_reduce_sum(mine.data(), first.data(), mine.size(), dtype::uint64);
    std::string problem;
    for (std::size_t d = 0; x_rank >= 0 && d < dim && problem.empty(); ++d) {
        if (x.shape()[d] == first[base[d] + c[d]]) continue;
        shape_t at(dim, 0);
        at[d] = c[d];
        std::ostringstream msg;
        msg << describe() << ": local input shapes do not assemble into a global tensor: "
            << P_x.worker_name(std::size_t(x_rank)) << " of P_x holds local shape " << format_piece_shape(shape_of(x))
            << ", whose extent " << x.shape()[d] << " in dimension " << d << " differs from the extent "
            << first[base[d] + c[d]] << " of " << P_x.worker_name(ravel_index(at, px)) << " at the same index " << c[d]
            << " of that dimension";
        problem = msg.str();
    }
    detail::agree_on_call(*P_union.comm(), problem, false);
    throw std::logic_error("Repartition: the extents differ, but no worker's differs from its slab's first");
}

// Everything here is computed from data every union worker holds alike, so an error is thrown
// identically on all of them.
template <class T>
void repartition<T>::state::build_plan(const std::vector<std::vector<std::size_t>>& extents) {
    const std::size_t dim = P_x.dim();
    const shape_t& px = P_x.shape();
    const shape_t& py = P_y.shape();
    std::vector<shape_t> offset(dim);
    global_shape.assign(dim, 0);
    for (std::size_t d = 0; d < dim; ++d) {
        offset[d].assign(px[d] + 1, 0);
        for (std::size_t i = 0; i < px[d]; ++i) offset[d][i + 1] = offset[d][i] + extents[d][i];
        global_shape[d] = offset[d][px[d]];
    }

    const auto x_box = [&](int r) {
        const shape_t c = unravel_index(static_cast<std::size_t>(r), px);
        index_box b{shape_t(dim), shape_t(dim)};
        for (std::size_t d = 0; d < dim; ++d) {
            b.start[d] = offset[d][c[d]];
            b.stop[d] = offset[d][c[d] + 1];
        }
        return b;
    };
    const auto y_box = [&](int r) { return balanced_box(global_shape, py, unravel_index(static_cast<std::size_t>(r), py)); };
    const auto start_in = [](const index_box& inner, const index_box& outer) { return relative_to(inner, outer).start; };

    detail::box_exchange_plan plan;
    plan.source_shape = shape_t(dim, 0);
    plan.dest_shape = shape_t(dim, 0);
    const int me = P_union.rank();
    index_box in_box, out_box;
    if (x_rank >= 0) {
        in_box = x_box(x_rank);
        plan.source_shape = in_box.extent();
        // Only the P_y workers whose boxes can meet mine (a binary search per dimension), so
        // planning costs O(peers), not O(workers), per worker.
        shape_t first(dim), last(dim);
        for (std::size_t d = 0; d < dim; ++d)
            std::tie(first[d], last[d]) = balanced_parts_meeting(global_shape[d], py[d], in_box.start[d], in_box.stop[d]);
        for_each_grid_index(first, last, py, [&](std::size_t flat) {
            const int r = static_cast<int>(flat);
            const index_box overlap = intersect(in_box, y_box(r));
            if (overlap.empty()) return;
            const int peer = union_rank_of(P_y.members()[flat]);
            if (peer == me) {
                plan.has_self = true;
                plan.self.source_start = start_in(overlap, in_box);
                plan.self.extent = overlap.extent();
                return;
            }
            plan.sends.push_back({peer, start_in(overlap, in_box), overlap.extent()});
        });
        std::sort(plan.sends.begin(), plan.sends.end(),
                  [](const detail::box_transfer& a, const detail::box_transfer& b) { return a.peer < b.peer; });
    }
    if (y_rank >= 0) {
        out_box = y_box(y_rank);
        plan.dest_shape = out_box.extent();
        if (plan.has_self) plan.self.dest_start = start_in(intersect(in_box, out_box), out_box);
        shape_t first(dim), last(dim);
        for (std::size_t d = 0; d < dim; ++d)
            std::tie(first[d], last[d]) = parts_meeting(offset[d], out_box.start[d], out_box.stop[d]);
        for_each_grid_index(first, last, px, [&](std::size_t flat) {
            const int r = static_cast<int>(flat);
            if (r == me) return;  // already found above
            const index_box overlap = intersect(x_box(r), out_box);
            if (overlap.empty()) return;
            plan.receives.push_back({r, start_in(overlap, out_box), overlap.extent()});
        });
    }
    in_shape = plan.source_shape;
    out_shape = plan.dest_shape;
    exchange.emplace(std::move(plan), forward_tag, adjoint_tag);
}

template <class T>
repartition<T>::repartition(const cartesian_partition& P_x, const cartesian_partition& P_y,
                            repartition_options options) {
    detail::argument_agreement("Repartition")
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y.shape())
        .flag("preserve_batch", options.preserve_batch)
        .list("global_shape", options.global_shape)
        .require(*P_x.world_comm());
    DISTDL_REQUIRE_AS(P_x.dim() == P_y.dim(), partition_error,
                      "Repartition: P_x shape " << format_list(P_x.shape()) << " and P_y shape "
                                                << format_list(P_y.shape()) << " differ in dimension ("
                                                << P_x.dim() << " vs " << P_y.dim() << ")");
    DISTDL_REQUIRE_AS(P_x.dim() >= 1, partition_error,
                      "Repartition: P_x shape " << format_list(P_x.shape()) << " and P_y shape "
                                                << format_list(P_y.shape()) << " must have at least 1 dimension");
    DISTDL_REQUIRE(options.global_shape.empty() || options.global_shape.size() == P_x.dim(),
                   "Repartition: global_shape " << format_list(options.global_shape) << " has rank "
                                                << options.global_shape.size() << ", expected the dimension of P_x ("
                                                << P_x.dim() << ")");
    state_ = std::make_unique<state>(P_x, P_y, options);
    this->set_partitions(&P_x, &P_y);
    auto& st = *state_;
    const auto& union_members = st.P_union.members();
    if (st.P_union.active()) {
        const int world_rank = union_members[static_cast<std::size_t>(st.P_union.rank())];
        st.x_rank = index_of(P_x.members(), world_rank);
        st.y_rank = index_of(P_y.members(), world_rank);
    }
    if (st.P_union.active() && !st.options.global_shape.empty()) {
        // Balanced input of a known global shape: every worker plans alone, identically.
        std::vector<std::vector<std::size_t>> extents(P_x.dim());
        for (std::size_t d = 0; d < P_x.dim(); ++d)
            extents[d] = balanced_sizes(st.options.global_shape[d], P_x.shape()[d]);
        st.build_plan(extents);
        st.planned = true;
    }
}

template <class T>
repartition<T>::~repartition() = default;

namespace {

// The output of a forward along the current plan (zero-volume off P_y).
template <class S, class T>
void prepare(S& st, tensor<T>& y) {
    if (st.y_rank >= 0) detail::prepare_output(y, st.out_shape);
    else st.zero_output(y);
}

}  // namespace

template <class T>
void repartition<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "repartition");
    if (!st.P_union.active()) return outside_result(x, y, st.options.preserve_batch);
    communicator& comm = *st.P_union.comm();
    std::string problem;
    if (st.x_rank >= 0 && x.dimension() != st.P_x.dim()) {
        std::ostringstream msg;
        msg << st.describe() << ": the tensor must have rank " << st.P_x.dim() << ", but "
            << st.P_x.worker_name(std::size_t(st.x_rank)) << " of P_x holds local shape "
            << format_piece_shape(shape_of(x)) << " (rank " << x.dimension() << ")";
        problem = msg.str();
    } else if (st.x_rank < 0 && x.size() != 0) {
        problem = st.describe() + ": world rank " + std::to_string(st.P_x.world_comm()->rank()) +
                  " is not in P_x and must pass a zero-volume tensor, got shape " + format_piece_shape(shape_of(x));
    }
    const bool fits_plan = st.planned && (st.x_rank < 0 || has_shape(x, st.in_shape));
    if (!st.planned) {
        // First call: agree (blocking), learn the layout, then move.
        if (detail::agree_on_call(comm, problem, true)) {
            st.build_plan(st.gather_extents(x));
            st.planned = true;
        }
        prepare(st, y);
        st.exchange->forward(comm, st.x_rank >= 0 ? x.data() : nullptr, st.y_rank >= 0 ? y.data() : nullptr);
        return;
    }
    // Planned: move along the plan and agree on the status while the data are in flight. A
    // worker whose input does not fit the plan sends zeros of the planned shape.
    prepare(st, y);
    const T* src = st.x_rank < 0 ? nullptr : fits_plan ? x.data() : st.stand_in(volume(st.in_shape));
    const bool changed = st.exchange->forward(comm, src, st.y_rank >= 0 ? y.data() : nullptr, problem, !fits_plan);
    if (!changed) return;
    // Some worker's input changed shape: learn the new layout together and move again.
    st.planned = false;
    st.build_plan(st.gather_extents(x));
    st.planned = true;
    prepare(st, y);
    st.exchange->forward(comm, st.x_rank >= 0 ? x.data() : nullptr, st.y_rank >= 0 ? y.data() : nullptr);
}

template <class T>
void repartition<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "repartition");
    if (!st.P_union.active()) return outside_result(dy, dx, st.options.preserve_batch);
    // Every union worker holds the same plan state, so this refusal is the same everywhere.
    DISTDL_REQUIRE(st.planned, "Repartition: adjoint called before forward (the input layout is not known yet)");
    std::string problem;
    if (st.y_rank >= 0 && !has_shape(dy, st.out_shape)) {
        problem = "Repartition adjoint: " + st.P_y.worker_name(std::size_t(st.y_rank)) + " of P_y shape " +
                  format_list(st.P_y.shape()) + " expects dy of shape " + format_list(st.out_shape) + ", got " +
                  format_piece_shape(shape_of(dy));
    } else if (st.y_rank < 0 && dy.size() != 0) {
        problem = "Repartition adjoint: world rank " + std::to_string(st.P_x.world_comm()->rank()) +
                  " is not in P_y and must pass a zero-volume dy, got shape " + format_piece_shape(shape_of(dy));
    }
    if (st.x_rank >= 0) detail::prepare_output(dx, st.in_shape);
    else st.zero_output(dx);
    communicator& comm = *st.P_union.comm();
    const T* src = st.y_rank < 0 ? nullptr : problem.empty() ? dy.data() : st.stand_in(volume(st.out_shape));
    st.exchange->reverse(comm, src, st.x_rank >= 0 ? dx.data() : nullptr, detail::box_op::assign, problem, false);
}

template class repartition<float>;
template class repartition<double>;

}  // namespace distdl
