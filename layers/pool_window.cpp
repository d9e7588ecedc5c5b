#include "layers/pool_window.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <sstream>
#include <tuple>

#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/per_dimension.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/box_copy.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/detail/call_status.hpp"
#include "core/halo_exchange.hpp"
#include "layers/detail/piece_layout.hpp"
#include "layers/detail/pool_runs.hpp"
#include "core/error.hpp"

namespace distdl {

namespace {

using signed_index = std::int64_t;

// Message tags of the rim exchange (HaloExchange uses 11/12, Repartition 1/2).
constexpr int forward_tag = 21;
constexpr int adjoint_tag = 22;

// Along one tensor dimension of length n split over `parts` workers: worker i's piece
// [g0, g1), its output block [a, b) (balanced split of the output), and the window of the
// block in unpadded input indices, [lo, hi) (DESIGN §3: padded [s*a, s*(b-1) + d*(k-1) + 1),
// shifted by -p; empty when b == a), also clipped to the tensor, [w0, w1).
struct dimension_plan {
    std::size_t n, m, k, s, p, d, parts;

    signed_index span() const { return signed_index(d * (k - 1) + 1); }
    signed_index piece_start(std::size_t i) const { return signed_index(balanced_start(n, parts, i)); }
    signed_index piece_stop(std::size_t i) const { return signed_index(balanced_stop(n, parts, i)); }
    // Unpadded input indices output j reads: [s*j - p, s*j - p + span).
    signed_index reads_from(std::size_t j) const { return signed_index(s * j) - signed_index(p); }
    void clipped_window(std::size_t i, signed_index& w0, signed_index& w1) const {
        const std::size_t a = balanced_start(m, parts, i), b = balanced_stop(m, parts, i);
        const signed_index lo = reads_from(a), hi = b > a ? reads_from(b - 1) + span() : lo;
        w0 = std::clamp<signed_index>(lo, 0, signed_index(n));
        w1 = std::clamp<signed_index>(hi, w0, signed_index(n));
    }
    // Every worker's clipped window lies inside its own piece: nothing moves along this dimension.
    bool windows_inside_pieces() const {
        for (std::size_t i = 0; i < parts; ++i) {
            signed_index w0, w1;
            clipped_window(i, w0, w1);
            if (w1 > w0 && (w0 < piece_start(i) || w1 > piece_stop(i))) return false;
        }
        return true;
    }
};

// The first j in (from, end) where `monotone` differs from its value at `from`, else end.
std::size_t first_change(std::size_t from, std::size_t end, const std::function<bool(std::size_t)>& monotone) {
    const bool start = monotone(from);
    std::size_t lo = from + 1, hi = end;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (monotone(mid) != start) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

index_box box_of(const std::vector<signed_index>& lo, const std::vector<signed_index>& hi) {
    index_box b;
    for (std::size_t t = 0; t < lo.size(); ++t) {
        b.start.push_back(std::size_t(lo[t]));
        b.stop.push_back(std::size_t(hi[t]));
    }
    return b;
}

shape_t minus(const shape_t& a, const shape_t& b) {
    shape_t r(a.size());
    for (std::size_t t = 0; t < a.size(); ++t) r[t] = a[t] - b[t];
    return r;
}

// The box [0, shape) without the box [inner_lo, inner_hi) (inside it), as disjoint boxes: per
// dimension t, the slabs below and above the inner box, inside it along the dimensions
// before t and whole along those after.
std::vector<index_box> box_complement(const shape_t& shape, const shape_t& inner_lo, const shape_t& inner_hi) {
    std::vector<index_box> out;
    const std::size_t rank = shape.size();
    for (std::size_t t = 0; t < rank; ++t)
        for (const bool below : {true, false}) {
            index_box b{shape_t(rank, 0), shape};
            for (std::size_t u = 0; u < t; ++u) {
                b.start[u] = inner_lo[u];
                b.stop[u] = inner_hi[u];
            }
            b.start[t] = below ? 0 : inner_hi[t];
            b.stop[t] = below ? inner_lo[t] : shape[t];
            if (volume(b.extent()) > 0) out.push_back(std::move(b));
        }
    return out;
}

}  // namespace

template <class T>
pool_window<T>::pool_window(const char* kind, const cartesian_partition& P_x, const pool_options& options,
                            bool dilation_allowed)
    : P_x_(P_x), name_(kind) {
    // First, before any check that could fail on some workers only: the same arguments everywhere.
    const std::optional<shape_t>& given = options.input_shape;
    detail::argument_agreement(name_)
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .number("input_shape given", given ? 1 : 0)
        .list("input_shape", given ? *given : shape_t{})
        .list("kernel_size", options.kernel_size)
        .list("stride", options.stride)
        .list("padding", options.padding)
        .list("dilation", options.dilation)
        .number("spatial_dims", options.spatial_dims)
        .require(*P_x.world_comm());

    DISTDL_REQUIRE(options.spatial_dims <= 3, name_ << ": spatial_dims " << options.spatial_dims
                                                    << " given, expected 1 to 3 (or 0: from input_shape or P_x)");
    // Without a given shape, P_x's rank tells the number of spatial dimensions.
    const std::size_t rank_hint = given ? given->size() : P_x.dim();
    dims_ = options.spatial_dims != 0 ? options.spatial_dims : rank_hint >= 3 ? rank_hint - 2 : 0;
    if (given)
        DISTDL_REQUIRE(dims_ >= 1 && dims_ <= 3, name_ << ": global input shape " << format_list(*given)
                                                       << " must be N × C × 1 to 3 spatial extents");
    else
        DISTDL_REQUIRE_AS(dims_ >= 1 && dims_ <= 3, partition_error,
                          name_ << ": P_x shape " << format_list(P_x.shape()) << " has " << P_x.dim()
                                << " dimensions, expected 3 to 5 (N × C × 1 to 3 spatial extents, e.g. 1 × 1 × P_d…)");
    name_ += std::to_string(dims_) + "d";
    if (given)
        DISTDL_REQUIRE(given->size() == dims_ + 2, name_ << ": global input shape " << format_list(*given)
                                                         << " must be N × C × " << dims_ << " spatial extents");
    const std::size_t rank = dims_ + 2;
    DISTDL_REQUIRE_AS(P_x.dim() == rank, partition_error,
                      name_ << ": P_x shape " << format_list(P_x.shape()) << " has " << P_x.dim()
                            << " dimensions, expected " << rank << " (one per dimension of the input"
                            << (given ? " " + format_list(*given) : std::string()) << ", e.g. 1 × 1 × P_d…)");
    DISTDL_REQUIRE(!options.kernel_size.empty(), name_ << ": kernel_size is required");
    k_ = per_dimension(options.kernel_size, dims_, {}, name_, "kernel_size");
    s_ = per_dimension(options.stride, dims_, k_, name_, "stride");
    p_ = per_dimension(options.padding, dims_, std::vector<std::size_t>(dims_, 0), name_, "padding");
    d_ = per_dimension(options.dilation, dims_, std::vector<std::size_t>(dims_, 1), name_, "dilation");
    for (std::size_t e = 0; e < dims_; ++e)
        DISTDL_REQUIRE(k_[e] >= 1 && s_[e] >= 1 && d_[e] >= 1,
                       name_ << ": kernel_size " << format_list(k_) << ", stride " << format_list(s_)
                             << " and dilation " << format_list(d_) << " must all be at least 1");
    if (!dilation_allowed)
        DISTDL_REQUIRE(std::all_of(d_.begin(), d_.end(), [](std::size_t v) { return v == 1; }),
                       name_ << ": dilation " << format_list(d_) << " given, expected 1 (average pooling has no dilation)");
    local_ = kernels::pool_geometry{k_, s_, std::vector<std::size_t>(dims_, 0), d_};
    learn_ = !given;
    if (given) plan(*given);
}

template <class T>
void pool_window<T>::plan(const shape_t& global_shape) {
    planned_ = false;
    exchange_.reset();
    sends_.clear();
    receives_.clear();
    interior_ = {};
    rim_.clear();
    rim_reads_.clear();
    receive_to_rim_.clear();
    piece_to_rim_.clear();
    left_ = {};
    right_ = {};
    side_left_ = side_right_ = 0;
    const std::size_t rank = global_shape.size(), dims = dims_;
    const cartesian_partition& P_x = P_x_;
    const auto &k = k_, &s = s_, &p = p_, &d = d_;
    // The geometry along every tensor dimension: batch and channels are kernel 1, stride 1.
    kernel_geometry full{shape_t(rank, 1), shape_t(rank, 1), shape_t(rank, 0), shape_t(rank, 1)};
    std::vector<dimension_plan> plans(rank);
    for (std::size_t t = 0; t < rank; ++t) {
        if (t >= 2) {
            const std::size_t e = t - 2;
            full.kernel_size[t] = k[e];
            full.stride[t] = s[e];
            full.padding[t] = p[e];
            full.dilation[t] = d[e];
            // Window bounds are signed offsets into the padded input.
            const std::string in_dimension = " of spatial dimension " + std::to_string(e);
            const std::string padded = name_ + ": padded length n+2*padding" + in_dimension;
            const std::string extent = name_ + ": kernel extent dilation*(kernel_size-1)+1" + in_dimension;
            checked_signed(checked_add(global_shape[t], checked_mul(2, p[e], padded), padded), padded);
            checked_signed(checked_add(checked_mul(d[e], k[e] - 1, extent), 1, extent), extent);
            DISTDL_REQUIRE(kernel_output_length(global_shape[t], k[e], s[e], p[e], d[e]) > 0,
                           name_ << ": kernel " << k[e] << " (dilation " << d[e] << ", extent " << d[e] * (k[e] - 1) + 1
                                 << ") does not fit in spatial dimension " << e << " of length " << global_shape[t]
                                 << " with padding " << p[e] << " (input shape " << format_list(global_shape) << ")");
        }
        const std::size_t m = kernel_output_length(global_shape[t], full.kernel_size[t], full.stride[t],
                                                   full.padding[t], full.dilation[t]);
        plans[t] = {global_shape[t], m, full.kernel_size[t], full.stride[t], full.padding[t], full.dilation[t],
                    P_x.shape()[t]};
    }
    shape_t output_shape(rank);
    for (std::size_t t = 0; t < rank; ++t) output_shape[t] = plans[t].m;
    checked_volume(output_shape, name_ + ": output shape");
    local_ = kernels::pool_geometry{k, s, std::vector<std::size_t>(dims, 0), d};

    // Same decision on every worker of the world: it depends on global facts only.
    const bool direct =
        std::all_of(plans.begin(), plans.end(), [](const dimension_plan& q) { return q.windows_inside_pieces(); });
    if (!P_x.active()) return;
    (void)dims;

    // This worker: its piece, output block and rim buffer (the clipped window) per dimension;
    // the interior (outputs whose windows stay in the piece or padding) and the core of the
    // rim buffer no rim output reads (inside the piece, so ghosts are never in it).
    const shape_t& grid = P_x.shape();
    const int me = P_x.rank();
    const shape_t at = unravel_index(std::size_t(me), grid);  // row-major, as the partition
    std::vector<signed_index> w_lo(rank), w_hi(rank);
    shape_t core_lo(rank), core_hi(rank);
    piece_shape_.resize(rank);
    output_shape_.resize(rank);
    rim_shape_.resize(rank);
    piece_in_rim_start_.resize(rank);
    piece_in_rim_stop_.resize(rank);
    rim_in_piece_.resize(rank);
    std::vector<std::size_t> first(rank), last(rank);  // interior [first, last) per dimension
    const std::size_t inner = rank - 1;
    side_left_ = side_right_ = 0;
    bool sides = false;
    for (std::size_t t = 0; t < rank; ++t) {
        const auto& q = plans[t];
        const std::size_t i = at[t];
        const signed_index g0 = q.piece_start(i), g1 = q.piece_stop(i), n = signed_index(q.n);
        const std::size_t a = balanced_start(q.m, q.parts, i), ml = balanced_size(q.m, q.parts, i);
        q.clipped_window(i, w_lo[t], w_hi[t]);
        const signed_index LW = w_hi[t] - w_lo[t];
        piece_shape_[t] = std::size_t(g1 - g0);
        output_shape_[t] = ml;
        rim_shape_[t] = std::size_t(LW);
        const signed_index ps = std::clamp<signed_index>(g0 - w_lo[t], 0, LW);
        const signed_index pe = std::clamp<signed_index>(g1 - w_lo[t], ps, LW);
        piece_in_rim_start_[t] = std::size_t(ps);
        piece_in_rim_stop_[t] = std::size_t(pe);
        rim_in_piece_[t] = w_lo[t] - g0;
        // The input output j reads, clipped to the tensor: [cl, ch).
        const auto cl = [&](std::size_t j) { return std::clamp<signed_index>(q.reads_from(a + j), 0, n); };
        const auto ch = [&](std::size_t j) {
            return std::clamp<signed_index>(q.reads_from(a + j) + q.span(), cl(j), n);
        };
        const auto interior = [&](std::size_t j) { return ch(j) == cl(j) || (cl(j) >= g0 && ch(j) <= g1); };
        // interior(j) is constant between the points where one of four conditions monotone in
        // j turns (a window of padding only below the tensor or above it, starting inside the
        // piece, ending inside it): the scan jumps from one such point to the next, a few
        // binary searches instead of a step per output (padding may be 2^40).
        const auto next_change = [&](std::size_t j) {
            std::size_t next = ml;
            for (const auto& turns : std::initializer_list<std::function<bool(std::size_t)>>{
                     [&](std::size_t i) { return q.reads_from(a + i) + q.span() <= 0; },
                     [&](std::size_t i) { return q.reads_from(a + i) >= n; },
                     [&](std::size_t i) { return cl(i) >= g0; }, [&](std::size_t i) { return ch(i) <= g1; }})
                next = std::min(next, first_change(j, ml, turns));
            return next;
        };
        std::size_t ia = 0;
        while (ia < ml && !interior(ia)) ia = next_change(ia);
        std::size_t ib = ia;
        while (ib < ml && interior(ib)) ib = next_change(ib);
        // Along the last dimension, ghost columns next to the piece are read from side arrays
        // in the interior's row sweep (kernels::pool_sides): every output of a row is interior
        // and no column of rim outputs is pooled separately (a strided walk costing a cache
        // line per row, in the kernels and in every copy around them).
        if (t == inner && !direct && LW > 0 && w_lo[t] <= g1 && w_hi[t] >= g0 && (ia > 0 || ib < ml)) {
            sides = true;
            ia = 0;
            ib = ml;
            side_left_ = std::size_t(ps);
            side_right_ = std::size_t(LW - pe);
        }
        first[t] = ia;
        last[t] = ib;
        // Rim-buffer index of input s*j - offset (local output j).
        const signed_index offset = signed_index(q.p) + w_lo[t] - signed_index(q.s * a);
        const signed_index below_reads = ia > 0 ? signed_index(q.s * (ia - 1)) + q.span() - offset : 0;
        const signed_index above_reads = ib < ml ? signed_index(q.s * ib) - offset : LW;
        const signed_index c_lo = std::clamp<signed_index>(std::max(below_reads, ps), 0, LW);
        const signed_index c_hi = std::clamp<signed_index>(std::min(above_reads, pe), c_lo, LW);
        // With side arrays, whole rows of the rim buffer outside the core: the side arrays
        // hold the ghost columns of the core's rows.
        core_lo[t] = sides && t == inner ? 0 : std::size_t(c_lo);
        core_hi[t] = sides && t == inner ? std::size_t(LW) : std::size_t(c_hi);
        if (t >= 2) {
            interior_.offset.push_back(signed_index(q.p) + g0 - signed_index(q.s * a));
            interior_.start.push_back(ia);
            interior_.stop.push_back(ib);
        }
    }
    // The rim slabs: the block without the interior box, over the spatial dimensions.
    const shape_t spatial_out(output_shape_.begin() + 2, output_shape_.end());
    const shape_t spatial_first(first.begin() + 2, first.end()), spatial_last(last.begin() + 2, last.end());
    for (const index_box& slab : box_complement(spatial_out, spatial_first, spatial_last)) {
        kernels::pool_region r{{}, slab.start, slab.stop};
        for (std::size_t t = 2; t < rank; ++t)
            r.offset.push_back(signed_index(plans[t].p) + w_lo[t] - signed_index(plans[t].s * balanced_start(plans[t].m, plans[t].parts, at[t])));
        rim_.push_back(std::move(r));
    }
    planned_ = true;
    if (direct) {
        rim_.clear();  // every output is interior
        return;
    }
    rim_reads_ = box_complement(rim_shape_, core_lo, core_hi);

    // The exchange: every peer's piece ∩ my rim buffer comes in, my piece ∩ every peer's
    // buffer goes out; my own part is copied by gather() (only where the rim slabs read it).
    // Peers in ascending rank, found per dimension first (as in core's halo exchange): the
    // range of grid indices whose buffers (pieces) meet my piece (buffer), then their product.
    const auto buffer_of = [&](const shape_t& idx) {
        std::vector<signed_index> lo(rank), hi(rank);
        for (std::size_t t = 0; t < rank; ++t) plans[t].clipped_window(idx[t], lo[t], hi[t]);
        return box_of(lo, hi);
    };
    const index_box mine = balanced_box(global_shape, grid, at), my_buffer = buffer_of(at);
    shape_t send_first(rank), send_last(rank), receive_first(rank), receive_last(rank);
    for (std::size_t t = 0; t < rank; ++t) {
        const auto& q = plans[t];
        std::tie(send_first[t], send_last[t]) = parts_where(grid[t], [&](std::size_t i) {
            signed_index lo, hi;
            q.clipped_window(i, lo, hi);
            return std::max(lo, signed_index(mine.start[t])) < std::min(hi, signed_index(mine.stop[t]));
        });
        std::tie(receive_first[t], receive_last[t]) =
            balanced_parts_meeting(q.n, grid[t], my_buffer.start[t], my_buffer.stop[t]);
    }
    detail::box_exchange_plan plan;
    std::size_t sent = 0, received = 0;
    for_each_grid_index(send_first, send_last, grid, [&](std::size_t w) {
        if (int(w) == me) return;
        const index_box out = intersect(mine, buffer_of(unravel_index(w, grid)));
        if (const std::size_t v = volume(out.extent()); v > 0) {
            plan.sends.push_back({int(w), {sent}, {v}});
            sends_.push_back({minus(out.start, mine.start), out.extent(), sent});
            sent += v;
        }
    });
    for_each_grid_index(receive_first, receive_last, grid, [&](std::size_t w) {
        if (int(w) == me) return;
        const index_box in = intersect(balanced_box(global_shape, grid, unravel_index(w, grid)), my_buffer);
        if (const std::size_t v = volume(in.extent()); v > 0) {
            plan.receives.push_back({int(w), {received}, {v}});
            receives_.push_back({minus(in.start, my_buffer.start), in.extent(), received});
            received += v;
        }
    });
    plan.source_shape = {sent};
    plan.dest_shape = {received};
    plan_copies(sides, core_lo, core_hi);
    send_buffer_.assign(std::max<std::size_t>(sent, 1), T(0));
    receive_buffer_.assign(std::max<std::size_t>(received, 1), T(0));
    exchange_ = std::make_unique<detail::box_exchange<T>>(std::move(plan), forward_tag, adjoint_tag);
    buffer_ = std::make_unique_for_overwrite<T[]>(volume(rim_shape_));
    gradient_ = std::make_unique_for_overwrite<T[]>(volume(rim_shape_));
    for (side_array* a : {&left_, &right_}) {
        a->values = std::make_unique_for_overwrite<T[]>(std::max<std::size_t>(a->size, 1));
        a->gradient = std::make_unique_for_overwrite<T[]>(std::max<std::size_t>(a->size, 1));
    }
}

template <class T>
void pool_window<T>::plan_copies(bool sides, const shape_t& core_lo, const shape_t& core_hi) {
    const std::size_t rank = rim_shape_.size(), inner = rank - 1;
    const index_box piece_in_rim{piece_in_rim_start_, piece_in_rim_stop_};
    const auto add_job = [](std::vector<copy_job>& jobs, const index_box& b, const shape_t& a_shape,
                            const shape_t& a_origin, std::size_t a_base, const shape_t& b_shape,
                            const shape_t& b_origin) {
        if (volume(b.extent()) == 0) return;
        shape_t a_start(b.start.size()), b_start(b.start.size());
        for (std::size_t t = 0; t < b.start.size(); ++t) {
            a_start[t] = std::size_t(std::int64_t(b.start[t]) - std::int64_t(a_origin[t]));
            b_start[t] = std::size_t(std::int64_t(b.start[t]) - std::int64_t(b_origin[t]));
        }
        jobs.push_back({a_shape, a_start, b_shape, b_start, b.extent(), a_base});
    };
    // The side arrays: the piece's rows (within the rim buffer) × the ghost columns.
    const shape_t zero(rank, 0);
    shape_t piece_origin(rank);  // rim-buffer index of piece index 0 (may be negative: wraps, used in differences)
    for (std::size_t t = 0; t < rank; ++t) piece_origin[t] = std::size_t(-rim_in_piece_[t]);
    left_ = {};
    right_ = {};
    if (sides) {
        for (side_array* a : {&left_, &right_}) {
            const bool is_left = a == &left_;
            a->box = piece_in_rim;
            a->box.start[inner] = is_left ? 0 : piece_in_rim_stop_[inner];
            a->box.stop[inner] = is_left ? piece_in_rim_start_[inner] : rim_shape_[inner];
            a->shape = piece_shape_;
            a->shape[inner] = a->box.stop[inner] - a->box.start[inner];
            a->origin = piece_origin;
            a->origin[inner] = a->box.start[inner];
            a->size = volume(a->shape);
        }
    }
    const index_box core{core_lo, core_hi};
    for (const auto& r : receives_) {
        index_box in{r.start, r.start};
        for (std::size_t t = 0; t < rank; ++t) in.stop[t] += r.extent[t];
        for (const index_box& b : rim_reads_) add_job(receive_to_rim_, intersect(in, b), r.extent, r.start, r.offset, rim_shape_, zero);
        for (side_array* a : {&left_, &right_}) {
            if (a->size == 0) continue;
            const index_box part = intersect(in, a->box);
            add_job(a->receive_core, intersect(part, core), r.extent, r.start, r.offset, a->shape, a->origin);
            for (const index_box& b : rim_reads_)
                add_job(a->receive_rim, intersect(part, b), r.extent, r.start, r.offset, a->shape, a->origin);
        }
    }
    for (const index_box& b : rim_reads_)
        add_job(piece_to_rim_, intersect(b, piece_in_rim), piece_shape_, piece_origin, 0, rim_shape_, zero);
}

template <class T>
pool_window<T>::~pool_window() = default;

template <class T>
std::string pool_window<T>::shape_problem(const tensor<T>& t, const shape_t& expected, const char* what) const {
    if (t.dimension() == expected.size() && std::equal(expected.begin(), expected.end(), t.shape().begin())) return {};
    std::ostringstream msg;
    msg << name_ << ": " << P_x_.worker_name() << " of P_x shape "
        << format_list(P_x_.shape()) << " expects " << what << " of shape " << format_list(expected) << ", got "
        << format_piece_shape(shape_of(t));
    return msg.str();
}

template <class T>
void pool_window<T>::pack_sends(const T* x) {
    T* out = send_buffer_.data();
    for (const auto& box : sends_)
        detail::for_each_run(piece_shape_, box.start, box.extent, shape_t(box.extent.size(), 0), box.extent,
                             [&](std::size_t a, std::size_t b, std::size_t run) {
                                 for (std::size_t i = 0; i < run; ++i) out[box.offset + b + i] = x[a + i];
                             });
}

template <class T>
template <class F>
void pool_window<T>::run(const copy_job& job, F&& f) {
    detail::for_each_run(job.a_shape, job.a_start, job.b_shape, job.b_start, job.extent,
                         [&](std::size_t a, std::size_t b, std::size_t run) { f(job.a_base + a, b, run); });
}

template <class T>
void pool_window<T>::unpack_receives() {
    const T* in = receive_buffer_.data();
    T* w = buffer_.get();
    for (const auto& job : receive_to_rim_)
        run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) w[b + i] = in[a + i];
        });
    for (side_array* side : {&left_, &right_}) {
        T* v = side->values.get();
        for (const auto* jobs : {&side->receive_core, &side->receive_rim})
            for (const auto& job : *jobs)
                run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
                    for (std::size_t i = 0; i < n; ++i) v[b + i] = in[a + i];
                });
    }
}

template <class T>
kernels::pool_sides<const T> pool_window<T>::sides() const {
    return {left_.values.get(), side_left_, right_.values.get(), side_right_};
}

template <class T>
kernels::pool_sides<T> pool_window<T>::side_gradients() {
    for (side_array* side : {&left_, &right_})
        std::fill_n(side->gradient.get(), side->size, T(0));
    return {left_.gradient.get(), side_left_, right_.gradient.get(), side_right_};
}

template <class T>
void pool_window<T>::gather(const tensor<T>& x) {
    communicator& comm = *P_x_.comm();
    if (learn_) {
        // The shape is learnt: at the first call, and again when any worker's piece changes
        // (every worker learns that from the call's status, which travels as before).
        bool relearn = !planned_;
        if (!relearn) {
            const bool changed = !has_shape(x, piece_shape_);
            if (!exchange_) {
                relearn = detail::agree_on_call(comm, {}, changed);
            } else {
                if (!changed) pack_sends(x.data());
                traffic_scope scope(P_x_.world_comm()->traffic(), "halo_exchange");
                relearn = exchange_->forward(comm, send_buffer_.data(), receive_buffer_.data(), std::string(), changed);
            }
            if (!relearn) return copy_own_rim(x);
        }
        const std::string problem = agree_on_piece_layout(P_x_, name_, shape_of(x), learnt_shape_,
                                                          "N × C × " + std::to_string(dims_) + " spatial extents");
        if (!problem.empty()) planned_ = false;
        DISTDL_REQUIRE(problem.empty(), problem);  // the same on every worker: they judged the same shapes
        plan(learnt_shape_);
        if (exchange_) {
            pack_sends(x.data());
            traffic_scope scope(P_x_.world_comm()->traffic(), "halo_exchange");
            exchange_->forward(comm, send_buffer_.data(), receive_buffer_.data());
        }
        return copy_own_rim(x);
    }
    const std::string problem = shape_problem(x, piece_shape_, "a tensor");
    if (!exchange_) {
        detail::agree_on_call(comm, problem, false);
        return;
    }
    if (problem.empty()) pack_sends(x.data());  // otherwise the peers throw before reading it
    {
        traffic_scope scope(P_x_.world_comm()->traffic(), "halo_exchange");
        exchange_->forward(comm, send_buffer_.data(), receive_buffer_.data(), problem, false);  // throws everywhere on a problem
    }
    copy_own_rim(x);
}

template <class T>
void pool_window<T>::copy_own_rim(const tensor<T>& x) {
    if (!exchange_) return;
    unpack_receives();
    // My own part of what the rim slabs read.
    const T* in = x.data();
    T* w = buffer_.get();
    for (const auto& job : piece_to_rim_)
        run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) w[b + i] = in[a + i];
        });
}

template <class T>
T* pool_window<T>::rim_gradient() {
    T* g = gradient_.get();
    for (const index_box& b : rim_reads_)
        detail::for_each_run(rim_shape_, b.start, rim_shape_, b.start, b.extent(),
                             [&](std::size_t a, std::size_t, std::size_t run) {
                                 for (std::size_t i = 0; i < run; ++i) g[a + i] = T(0);
                             });
    return g;
}

template <class T>
void pool_window<T>::scatter(const std::string& problem, tensor<T>& dx) {
    communicator& comm = *P_x_.comm();
    if (!exchange_) {
        detail::agree_on_call(comm, problem, false);
        return;
    }
    const T* g = gradient_.get();
    T* d = dx.data();
    if (problem.empty()) {
        // My own part of the rim gradient, then the ghosts packed for their owners: the rim
        // gradient's, then the side arrays' (assigned in the core's rows, which the rim
        // slabs do not read, and added in the others).
        for (const auto& job : piece_to_rim_)
            run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
                for (std::size_t i = 0; i < n; ++i) d[a + i] += g[b + i];
            });
        T* out = receive_buffer_.data();
        for (const auto& job : receive_to_rim_)
            run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
                for (std::size_t i = 0; i < n; ++i) out[a + i] = g[b + i];
            });
        for (side_array* side : {&left_, &right_}) {
            const T* v = side->gradient.get();
            for (const auto& job : side->receive_core)
                run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
                    for (std::size_t i = 0; i < n; ++i) out[a + i] = v[b + i];
                });
            for (const auto& job : side->receive_rim)
                run(job, [&](std::size_t a, std::size_t b, std::size_t n) {
                    for (std::size_t i = 0; i < n; ++i) out[a + i] += v[b + i];
                });
        }
    }
    {
        traffic_scope scope(P_x_.world_comm()->traffic(), "halo_exchange");
        exchange_->reverse(comm, receive_buffer_.data(), send_buffer_.data(), detail::box_op::assign, problem, false);
    }
    // The gradients of my piece from the peers' rims, added in peer order (bit-reproducible).
    const T* in = send_buffer_.data();
    for (const auto& box : sends_)
        detail::for_each_run(piece_shape_, box.start, box.extent, shape_t(box.extent.size(), 0), box.extent,
                             [&](std::size_t a, std::size_t b, std::size_t run) {
                                 for (std::size_t i = 0; i < run; ++i) d[a + i] += in[box.offset + b + i];
                             });
}

template class pool_window<float>;
template class pool_window<double>;

}  // namespace distdl
