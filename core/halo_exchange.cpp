#include "core/halo_exchange.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/detail/output.hpp"
#include "core/error.hpp"

// How it works. The layout is static (global shape and geometry are given at construction),
// so the whole plan is computed once: for every worker q of P_x, its owned box (balanced split
// of the input) and its window (from the balanced split of the output). The window is first
// taken in unpadded global indices, where it may start below 0 or end beyond n (that part is
// zero padding, owned by nobody). A worker receives from every q the overlap of q's owned box
// with its window and sends every q the overlap of its owned box with q's window. Looking at
// every worker, not only at grid neighbours, is what makes halos wider than a neighbour's
// piece (small pieces, wide or dilated kernels) come out right; it looks per dimension first,
// so its cost grows with the grid's extents and the peers, not the grid's volume. A worker
// whose window lies inside its own piece (negative halo) simply receives nothing. The plan
// runs on the shared box-exchange engine (core/detail/box_exchange.hpp), which also agrees on
// each call's argument checks (its step 4), so a wrong shape on one worker is an error on all.

namespace distdl {

std::size_t kernel_output_length(std::size_t n, std::size_t k, std::size_t s, std::size_t p, std::size_t d) {
    DISTDL_REQUIRE(k >= 1 && s >= 1 && d >= 1, "kernel_output_length: kernel size " << k << ", stride " << s
                                                                                     << " and dilation " << d
                                                                                     << " must be at least 1");
    // Extent of one dilated kernel application, and the padded length.
    const std::size_t span = checked_add(checked_mul(d, k - 1, "kernel extent dilation*(kernel_size-1)"), 1,
                                         "kernel extent dilation*(kernel_size-1)+1");
    const std::size_t padded = checked_add(n, checked_mul(2, p, "padded length n+2*padding"),
                                           "padded length n+2*padding");
    return padded < span ? 0 : (padded - span) / s + 1;
}

namespace {

using signed_index = std::int64_t;

// A window along each dimension, [lo, hi) in unpadded global indices (lo may be negative).
struct window_box {
    std::vector<signed_index> lo, hi;
};

constexpr int forward_tag = 11;
constexpr int adjoint_tag = 12;

}  // namespace

template <class T>
struct halo_exchange<T>::state {
    cartesian_partition P_x;
    shape_t global_shape;
    kernel_geometry geometry;
    int me = -1;

    index_box owned;       // this worker's piece of the input
    shape_t owned_shape;
    window_box window;     // what it needs
    shape_t window_shape;
    shape_t inside_start, inside_extent;  // the part of the window inside [0, n): not padding

    // Forward: my owned piece -> my window (sends: my owned box ∩ each peer's window;
    // receives: each peer's owned box ∩ my window; self: my owned box ∩ my window).
    std::optional<detail::box_exchange<T>> exchange;
    std::vector<T> zeros;  // what a worker with a wrong argument sends (allocated only then)
    const T* kept_window = nullptr;  // forward_kept: the window whose padding is zero

    const T* stand_in(std::size_t count) {
        if (zeros.size() < count) zeros.assign(count, T(0));
        return zeros.data();
    }

    state(const cartesian_partition& px, shape_t shape, kernel_geometry g)
        : P_x(px), global_shape(std::move(shape)), geometry(std::move(g)) {}

    // The window of the worker at grid index i along dimension d: [lo, hi).
    void window_along(std::size_t d, std::size_t i, signed_index& lo, signed_index& hi) const;
    window_box window_of(const shape_t& index) const;
    void plan();
};

template <class T>
void halo_exchange<T>::state::window_along(std::size_t d, std::size_t i, signed_index& lo, signed_index& hi) const {
    const std::size_t k = geometry.kernel_size[d], s = geometry.stride[d];
    const std::size_t p = geometry.padding[d], dil = geometry.dilation[d];
    const std::size_t m = kernel_output_length(global_shape[d], k, s, p, dil);
    const std::size_t a = balanced_start(m, P_x.shape()[d], i);
    const std::size_t b = balanced_stop(m, P_x.shape()[d], i);
    // Every bound lies in [0, n + 2p], which the constructor checked fits a signed offset.
    const char* what = "HaloExchange window bound";
    lo = checked_signed(checked_mul(s, a, what), what) - checked_signed(p, what);
    if (b <= a) {  // empty output block: needs nothing (an empty window at its start)
        hi = lo;
        return;
    }
    // Padded indices [s*a, s*(b-1) + dil*(k-1) + 1), shifted by -p into unpadded ones.
    hi = checked_signed(checked_add(checked_add(checked_mul(s, b - 1, what), checked_mul(dil, k - 1, what), what), 1,
                                    what),
                        what) -
         checked_signed(p, what);
}

template <class T>
window_box halo_exchange<T>::state::window_of(const shape_t& index) const {
    const std::size_t dim = global_shape.size();
    window_box w{std::vector<signed_index>(dim), std::vector<signed_index>(dim)};
    for (std::size_t d = 0; d < dim; ++d) window_along(d, index[d], w.lo[d], w.hi[d]);
    return w;
}

template <class T>
void halo_exchange<T>::state::plan() {
    const std::size_t dim = global_shape.size();
    const shape_t& px = P_x.shape();
    me = P_x.rank();
    const shape_t my_index = unravel_index(static_cast<std::size_t>(me), px);  // row-major, as the partition
    owned = balanced_box(global_shape, px, my_index);
    owned_shape = owned.extent();
    window = window_of(my_index);
    window_shape.resize(dim);
    inside_start.resize(dim);
    inside_extent.resize(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        window_shape[d] = static_cast<std::size_t>(window.hi[d] - window.lo[d]);
        const signed_index lo = std::max<signed_index>(window.lo[d], 0);
        const signed_index hi = std::min<signed_index>(window.hi[d], static_cast<signed_index>(global_shape[d]));
        inside_start[d] = static_cast<std::size_t>(std::min(lo, window.hi[d]) - window.lo[d]);
        inside_extent[d] = hi > lo ? static_cast<std::size_t>(hi - lo) : 0;
    }

    // Overlap of an owned box with a window: in global indices, clamped to the owned box
    // (which lies inside [0, n), so padding never matches an owner).
    const auto overlap = [dim](const index_box& box, const window_box& w, shape_t& start, shape_t& stop) {
        start.resize(dim);
        stop.resize(dim);
        bool empty = false;
        for (std::size_t d = 0; d < dim; ++d) {
            const signed_index lo = std::max<signed_index>(w.lo[d], static_cast<signed_index>(box.start[d]));
            const signed_index hi = std::min<signed_index>(w.hi[d], static_cast<signed_index>(box.stop[d]));
            if (hi <= lo) empty = true;
            start[d] = static_cast<std::size_t>(lo);
            stop[d] = static_cast<std::size_t>(std::max(lo, hi));
        }
        // An empty window still has a shape; an overlap of volume zero moves nothing.
        return !empty;
    };
    const auto in_owned = [&](const shape_t& start) {
        shape_t s(dim);
        for (std::size_t d = 0; d < dim; ++d) s[d] = start[d] - owned.start[d];
        return s;
    };
    const auto in_window = [&](const shape_t& start) {
        shape_t s(dim);
        for (std::size_t d = 0; d < dim; ++d)
            s[d] = static_cast<std::size_t>(static_cast<signed_index>(start[d]) - window.lo[d]);
        return s;
    };
    const auto extent_of = [dim](const shape_t& start, const shape_t& stop) {
        shape_t e(dim);
        for (std::size_t d = 0; d < dim; ++d) e[d] = stop[d] - start[d];
        return e;
    };

    detail::box_exchange_plan p;
    p.source_shape = owned_shape;
    p.dest_shape = window_shape;
    shape_t start, stop;
    if (overlap(owned, window, start, stop)) {
        p.has_self = true;
        p.self = {in_owned(start), in_window(start), extent_of(start, stop)};
    }
    // What each peer needs from me (its window meets my piece), and what I need from each (its
    // piece meets my window), peers in ascending rank: per dimension, the range of grid indices
    // whose windows (pieces) meet mine, then every worker of the product of the ranges.
    shape_t send_first(dim), send_last(dim), receive_first(dim), receive_last(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        std::tie(send_first[d], send_last[d]) = parts_where(px[d], [&](std::size_t i) {
            signed_index lo, hi;
            window_along(d, i, lo, hi);
            return std::max(lo, signed_index(owned.start[d])) < std::min(hi, signed_index(owned.stop[d]));
        });
        const auto inside = [&](signed_index v) {  // the window without its padding
            return std::size_t(std::clamp<signed_index>(v, 0, signed_index(global_shape[d])));
        };
        std::tie(receive_first[d], receive_last[d]) =
            balanced_parts_meeting(global_shape[d], px[d], inside(window.lo[d]), inside(window.hi[d]));
    }
    for_each_grid_index(send_first, send_last, px, [&](std::size_t q) {
        if (int(q) != me && overlap(owned, window_of(unravel_index(q, px)), start, stop))
            p.sends.push_back({int(q), in_owned(start), extent_of(start, stop)});
    });
    for_each_grid_index(receive_first, receive_last, px, [&](std::size_t q) {
        if (int(q) != me && overlap(balanced_box(global_shape, px, unravel_index(q, px)), window, start, stop))
            p.receives.push_back({int(q), in_window(start), extent_of(start, stop)});
    });
    exchange.emplace(std::move(p), forward_tag, adjoint_tag);
}

template <class T>
halo_exchange<T>::halo_exchange(const cartesian_partition& P_x, shape_t global_shape, kernel_geometry geometry) {
    // First, before anything that could fail on some workers only: the same arguments everywhere.
    detail::argument_agreement("HaloExchange")
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("global_shape", global_shape)
        .list("kernel_size", geometry.kernel_size)
        .list("stride", geometry.stride)
        .list("padding", geometry.padding)
        .list("dilation", geometry.dilation)
        .require(*P_x.world_comm());
    this->set_partitions(&P_x, nullptr);  // its output is the windows, not pieces of a partition
    const std::size_t dim = global_shape.size();
    const auto describe = [&]() {
        return "HaloExchange on P_x shape " + format_list(P_x.shape()) + " with global shape " +
               format_list(global_shape);
    };
    DISTDL_REQUIRE_AS(P_x.dim() == dim, partition_error,
                      describe() << ": dimensions differ (" << P_x.dim() << " vs " << dim << ")");
    const auto check_length = [&](const std::vector<std::size_t>& v, const char* name) {
        DISTDL_REQUIRE(v.size() == dim, describe() << ": " << name << " " << format_list(v) << " has " << v.size()
                                                   << " entries, expected one per dimension (" << dim << ")");
    };
    check_length(geometry.kernel_size, "kernel_size");
    check_length(geometry.stride, "stride");
    check_length(geometry.padding, "padding");
    check_length(geometry.dilation, "dilation");
    for (std::size_t d = 0; d < dim; ++d) {
        const std::size_t k = geometry.kernel_size[d], s = geometry.stride[d], dil = geometry.dilation[d];
        const std::size_t p = geometry.padding[d];
        DISTDL_REQUIRE(k >= 1 && s >= 1 && dil >= 1, describe() << ": dimension " << d << ": kernel size " << k
                                                                << ", stride " << s << " and dilation " << dil
                                                                << " must be at least 1");
        DISTDL_REQUIRE(kernel_output_length(global_shape[d], k, s, p, dil) > 0,
                       describe() << ": kernel does not fit in dimension " << d << ": extent " << global_shape[d]
                                  << " + 2*padding " << p << " < dilation " << dil << " * (kernel size " << k
                                  << " - 1) + 1 = " << dil * (k - 1) + 1);
    }
    // Window bounds are signed offsets into the padded tensor, whose every length and whose
    // volume (the bound of every window's volume) must fit.
    shape_t padded_shape(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        const std::string what = describe() + ": padded length of dimension " + std::to_string(d);
        padded_shape[d] = checked_add(global_shape[d], checked_mul(2, geometry.padding[d], what), what);
        checked_signed(padded_shape[d], what);
    }
    checked_mul(checked_volume(padded_shape, describe() + ": padded volume"), sizeof(T),
                describe() + ": bytes of the padded tensor");
    state_ = std::make_unique<state>(P_x, std::move(global_shape), std::move(geometry));
    if (P_x.active()) state_->plan();
}

template <class T>
halo_exchange<T>::~halo_exchange() = default;

namespace {

// A worker outside P_x takes no part and must pass a zero-volume tensor.
template <class T>
void idle_call(const cartesian_partition& P_x, const tensor<T>& arg, tensor<T>& out, const char* what) {
    DISTDL_REQUIRE(arg.size() == 0, what << ": world rank " << P_x.world_comm()->rank()
                                         << " is not in P_x and must pass a zero-volume tensor, got shape "
                                         << format_piece_shape(shape_of(arg)));
    detail::prepare_output(out, shape_t{0});
}

// This worker's problem with its argument (empty: none).
template <class T>
std::string shape_problem(const tensor<T>& arg, const shape_t& expected, int me, const cartesian_partition& P_x,
                          const shape_t& global_shape, const char* what) {
    if (arg.dimension() == expected.size() && std::equal(expected.begin(), expected.end(), arg.shape().begin()))
        return {};
    std::ostringstream msg;
    msg << what << ": " << P_x.worker_name(std::size_t(me)) << " of P_x shape "
        << format_list(P_x.shape()) << " (global shape " << format_list(global_shape) << ") expects a tensor of shape "
        << format_list(expected) << ", got " << format_piece_shape(shape_of(arg));
    return msg.str();
}

}  // namespace

// Each call: the workers of P_x agree on the argument checks along with the data (the
// engine's step 4), so a wrong shape on one worker is the same error on every worker and costs
// no extra round trip when all is well. A worker with a wrong argument still sends its planned
// messages (from zeros), so nobody waits.
template <class T>
void halo_exchange<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    state_->kept_window = nullptr;
    run_forward(x, y, true, false);
}

template <class T>
void halo_exchange<T>::forward_kept(const tensor<T>& x, tensor<T>& window, bool own_part_left_out) {
    auto& st = *state_;
    // The window's padding is still zero when it is the very tensor zeroed last time.
    const bool same = st.kept_window == window.data() && has_shape(window, st.window_shape);
    run_forward(x, window, !same, own_part_left_out);
    st.kept_window = st.P_x.active() ? window.data() : nullptr;
}

template <class T>
void halo_exchange<T>::run_forward(const tensor<T>& x, tensor<T>& y, bool fill_padding, bool own_part_left_out) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "halo_exchange");
    if (!st.P_x.active()) return idle_call(st.P_x, x, y, "HaloExchange");
    communicator& comm = *st.P_x.comm();
    const std::string problem = shape_problem(x, st.owned_shape, st.me, st.P_x, st.global_shape, "HaloExchange");
    if (!has_shape(y, st.window_shape)) fill_padding = true;  // (re)allocated below
    detail::prepare_output(y, st.window_shape);
    // Only the padding is zeroed: every element inside [0, n) arrives from its owner.
    if (fill_padding) detail::fill_outside_box(y.data(), st.window_shape, st.inside_start, st.inside_extent, T(0));
    const T* src = problem.empty() ? x.data() : st.stand_in(volume(st.owned_shape));
    try {
        st.exchange->forward(comm, src, y.data(), problem, false, own_part_left_out);
    } catch (...) {
        st.kept_window = nullptr;  // the window may hold anything now
        throw;
    }
}

template <class T>
bool halo_exchange<T>::own_part(shape_t& window_start, shape_t& piece_start, shape_t& extent) const {
    if (!state_->P_x.active() || !state_->exchange->plan().has_self) return false;
    const auto& self = state_->exchange->plan().self;
    window_start = self.dest_start;
    piece_start = self.source_start;
    extent = self.extent;
    return true;
}

// The reverse of forward: ghost values go back to their owners and are added there, after
// this worker's own part, in rank order (the same rounding on every transport and run).
template <class T>
void halo_exchange<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    run_adjoint(dy, dx, false);
}

template <class T>
void halo_exchange<T>::adjoint_own_part_placed(const tensor<T>& dy, tensor<T>& dx) {
    auto& st = *state_;
    if (st.P_x.active())
        DISTDL_REQUIRE(has_shape(dx, st.owned_shape), "HaloExchange adjoint_own_part_placed: dx of shape "
                                                            << format_list(shape_of(dx)) << ", expected the piece's "
                                                            << format_list(st.owned_shape));
    run_adjoint(dy, dx, true);
}

template <class T>
void halo_exchange<T>::run_adjoint(const tensor<T>& dy, tensor<T>& dx, bool own_part_placed) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "halo_exchange");
    if (!st.P_x.active()) return idle_call(st.P_x, dy, dx, "HaloExchange adjoint");
    communicator& comm = *st.P_x.comm();
    const std::string problem =
        shape_problem(dy, st.window_shape, st.me, st.P_x, st.global_shape, "HaloExchange adjoint");
    detail::prepare_output(dx, st.owned_shape);
    const auto& plan = st.exchange->plan();
    // The own part is assigned; only what it does not cover starts at zero.
    if (plan.has_self)
        detail::fill_outside_box(dx.data(), st.owned_shape, plan.self.source_start, plan.self.extent, T(0));
    else
        std::fill(dx.data(), dx.data() + dx.size(), T(0));
    const T* src = problem.empty() ? dy.data() : st.stand_in(volume(st.window_shape));
    st.exchange->reverse(comm, src, dx.data(), detail::box_op::add, problem, false, own_part_placed);
}

template class halo_exchange<float>;
template class halo_exchange<double>;

}  // namespace distdl
