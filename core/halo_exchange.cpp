#include "core/halo_exchange.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/box_copy.hpp"
#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/error.hpp"

// How it works. The layout is static (global shape and geometry are given at construction),
// so the whole plan is computed once: for every worker q of P_x, its owned box (balanced split
// of the input) and its window (from the balanced split of the output). The window is first
// taken in unpadded global indices, where it may start below 0 or end beyond n (that part is
// zero padding, owned by nobody). A worker receives from every q the overlap of q's owned box
// with its window and sends every q the overlap of its owned box with q's window. Looking at
// every worker, not only at grid neighbours, is what makes halos wider than a neighbour's
// piece (small pieces, wide or dilated kernels) come out right; a worker whose window lies
// inside its own piece (negative halo) simply receives nothing.

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

    // One region moved between this worker and a peer: `start` is in this worker's local
    // array (owned piece for `sends`, window for `recvs`).
    struct transfer {
        int peer;
        shape_t start;
        shape_t extent;
        std::size_t offset;
        std::size_t count;
    };
    std::vector<transfer> sends;  // forward: my owned box ∩ each peer's window
    std::vector<transfer> recvs;  // forward: each peer's owned box ∩ my window
    std::size_t send_volume = 0, recv_volume = 0;
    bool self = false;            // my owned box ∩ my window is non-empty
    shape_t self_owned_start, self_window_start, self_extent;

    std::vector<T> send_buffer, recv_buffer;
    std::vector<request> requests;

    state(const cartesian_partition& px, shape_t shape, kernel_geometry g)
        : P_x(px), global_shape(std::move(shape)), geometry(std::move(g)) {}

    window_box window_of(const shape_t& index) const;
    void plan();
};

template <class T>
window_box halo_exchange<T>::state::window_of(const shape_t& index) const {
    const std::size_t dim = global_shape.size();
    window_box w{std::vector<signed_index>(dim), std::vector<signed_index>(dim)};
    for (std::size_t d = 0; d < dim; ++d) {
        const std::size_t k = geometry.kernel_size[d], s = geometry.stride[d];
        const std::size_t p = geometry.padding[d], dil = geometry.dilation[d];
        const std::size_t m = kernel_output_length(global_shape[d], k, s, p, dil);
        const std::size_t a = balanced_start(m, P_x.shape()[d], index[d]);
        const std::size_t b = balanced_stop(m, P_x.shape()[d], index[d]);
        // Every bound lies in [0, n + 2p], which the constructor checked fits a signed offset.
        const char* what = "HaloExchange window bound";
        const signed_index lo = checked_signed(checked_mul(s, a, what), what) - checked_signed(p, what);
        if (b <= a) {  // empty output block: needs nothing (an empty window at its start)
            w.lo[d] = w.hi[d] = lo;
            continue;
        }
        // Padded indices [s*a, s*(b-1) + dil*(k-1) + 1), shifted by -p into unpadded ones.
        w.lo[d] = lo;
        w.hi[d] = checked_signed(checked_add(checked_add(checked_mul(s, b - 1, what), checked_mul(dil, k - 1, what), what),
                                             1, what),
                                 what) -
                  checked_signed(p, what);
    }
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
    for (std::size_t d = 0; d < dim; ++d) window_shape[d] = static_cast<std::size_t>(window.hi[d] - window.lo[d]);

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

    sends.clear();
    recvs.clear();
    send_volume = recv_volume = 0;
    self = false;
    shape_t start, stop;
    for (int q = 0; q < P_x.size(); ++q) {
        const shape_t q_index = unravel_index(static_cast<std::size_t>(q), px);
        const index_box q_owned = balanced_box(global_shape, px, q_index);
        if (q == me) {
            if (!overlap(owned, window, start, stop)) continue;
            self = true;
            self_owned_start.resize(dim);
            self_window_start.resize(dim);
            self_extent.resize(dim);
            for (std::size_t d = 0; d < dim; ++d) {
                self_owned_start[d] = start[d] - owned.start[d];
                self_window_start[d] = static_cast<std::size_t>(static_cast<signed_index>(start[d]) - window.lo[d]);
                self_extent[d] = stop[d] - start[d];
            }
            continue;
        }
        // What q needs from me.
        if (overlap(owned, window_of(q_index), start, stop)) {
            transfer t{q, shape_t(dim), shape_t(dim), send_volume, 0};
            for (std::size_t d = 0; d < dim; ++d) {
                t.start[d] = start[d] - owned.start[d];
                t.extent[d] = stop[d] - start[d];
            }
            t.count = volume(t.extent);
            send_volume += t.count;
            sends.push_back(std::move(t));
        }
        // What I need from q.
        if (overlap(q_owned, window, start, stop)) {
            transfer t{q, shape_t(dim), shape_t(dim), recv_volume, 0};
            for (std::size_t d = 0; d < dim; ++d) {
                t.start[d] = static_cast<std::size_t>(static_cast<signed_index>(start[d]) - window.lo[d]);
                t.extent[d] = stop[d] - start[d];
            }
            t.count = volume(t.extent);
            recv_volume += t.count;
            recvs.push_back(std::move(t));
        }
    }
    send_buffer.resize(send_volume);
    recv_buffer.resize(recv_volume);
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

template <class T>
tensor<T> halo_exchange<T>::forward_value(const tensor<T>& x) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "halo_exchange");
    if (!st.P_x.active()) return zero_volume<T>();
    const shape_t given = shape_of(x);
    DISTDL_REQUIRE(given == st.owned_shape, "HaloExchange: worker " << st.me << " of P_x shape "
                                                                    << format_list(st.P_x.shape())
                                                                    << " expects its balanced piece of shape "
                                                                    << format_list(st.owned_shape) << " of global shape "
                                                                    << format_list(st.global_shape) << ", got "
                                                                    << format_list(given));
    tensor<T> y = xt::zeros<T>(st.window_shape);  // padding stays zero
    communicator& comm = *st.P_x.comm();
    st.requests.clear();
    for (const auto& t : st.recvs)
        st.requests.push_back(comm.irecv(st.recv_buffer.data() + t.offset, t.count, t.peer, forward_tag));
    for (const auto& t : st.sends) {
        detail::pack_box(x.data(), st.owned_shape, t.start, t.extent, st.send_buffer.data() + t.offset);
        st.requests.push_back(comm.isend(st.send_buffer.data() + t.offset, t.count, t.peer, forward_tag));
    }
    if (st.self)
        detail::copy_box(x.data(), st.owned_shape, st.self_owned_start, y.data(), st.window_shape,
                         st.self_window_start, st.self_extent, detail::box_op::assign);
    if (!st.requests.empty()) comm.wait_all(st.requests);
    for (const auto& t : st.recvs)
        detail::unpack_box(st.recv_buffer.data() + t.offset, y.data(), st.window_shape, t.start, t.extent,
                           detail::box_op::assign);
    return y;
}

template <class T>
tensor<T> halo_exchange<T>::adjoint_value(const tensor<T>& dy) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "halo_exchange");
    if (!st.P_x.active()) return zero_volume<T>();
    const shape_t given = shape_of(dy);
    DISTDL_REQUIRE(given == st.window_shape, "HaloExchange adjoint: worker " << st.me << " of P_x shape "
                                                                             << format_list(st.P_x.shape())
                                                                             << " expects dy of its window shape "
                                                                             << format_list(st.window_shape)
                                                                             << ", got " << format_list(given));
    tensor<T> dx = xt::zeros<T>(st.owned_shape);
    communicator& comm = *st.P_x.comm();
    // The reverse of forward: what I received I now send back, what I sent I now receive and add.
    st.requests.clear();
    for (const auto& t : st.sends)
        st.requests.push_back(comm.irecv(st.send_buffer.data() + t.offset, t.count, t.peer, adjoint_tag));
    for (const auto& t : st.recvs) {
        detail::pack_box(dy.data(), st.window_shape, t.start, t.extent, st.recv_buffer.data() + t.offset);
        st.requests.push_back(comm.isend(st.recv_buffer.data() + t.offset, t.count, t.peer, adjoint_tag));
    }
    if (!st.requests.empty()) comm.wait_all(st.requests);
    // Contributions are added in rank order (mine in its place), so the rounding is the same
    // on every transport and every run.
    auto next = st.sends.begin();
    for (int q = 0; q < st.P_x.size(); ++q) {
        if (q == st.me) {
            if (st.self)
                detail::copy_box(dy.data(), st.window_shape, st.self_window_start, dx.data(), st.owned_shape,
                                 st.self_owned_start, st.self_extent, detail::box_op::add);
        } else if (next != st.sends.end() && next->peer == q) {
            detail::unpack_box(st.send_buffer.data() + next->offset, dx.data(), st.owned_shape, next->start,
                               next->extent, detail::box_op::add);
            ++next;
        }
    }
    return dx;
}

template class halo_exchange<float>;
template class halo_exchange<double>;

}  // namespace distdl
