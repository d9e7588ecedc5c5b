#include "layers/pool_window.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include "core/decomposition.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/box_copy.hpp"
#include "core/detail/call_status.hpp"
#include "core/error.hpp"

namespace distdl {

namespace {

using signed_index = std::int64_t;

// One entry per spatial dimension: `values` as given, a single value repeated, or `fallback`.
std::vector<std::size_t> per_spatial(const std::vector<std::size_t>& values, std::size_t dims,
                                     const std::vector<std::size_t>& fallback, const char* what,
                                     const std::string& name) {
    if (values.empty()) return fallback;
    if (values.size() == 1) return std::vector<std::size_t>(dims, values[0]);
    DISTDL_REQUIRE(values.size() == dims, name << ": " << what << " " << format_list(values) << " has "
                                               << values.size() << " entries, expected 1 or " << dims
                                               << " (one per spatial dimension)");
    return values;
}

// Along one tensor dimension of length n split over `parts` workers: worker i's output block
// [a, b) (balanced split of the output), and the window of it in unpadded input indices,
// [lo, hi) (DESIGN §3: padded [s*a, s*(b-1) + d*(k-1) + 1), shifted by -p; empty when b == a).
struct dimension_plan {
    std::size_t n, m, k, s, p, d, parts;

    std::size_t span() const { return d * (k - 1) + 1; }
    void window(std::size_t i, signed_index& lo, signed_index& hi) const {
        const std::size_t a = balanced_start(m, parts, i), b = balanced_stop(m, parts, i);
        lo = signed_index(s * a) - signed_index(p);
        hi = b > a ? signed_index(s * (b - 1) + span()) - signed_index(p) : lo;
    }
    // The window of every worker along this dimension is exactly its own piece.
    bool windows_are_pieces() const {
        for (std::size_t i = 0; i < parts; ++i) {
            signed_index lo, hi;
            window(i, lo, hi);
            const auto start = signed_index(balanced_start(n, parts, i)), stop = signed_index(balanced_stop(n, parts, i));
            if (hi > lo ? (lo != start || hi != stop) : start != stop) return false;
        }
        return true;
    }
};

}  // namespace

template <class T>
pool_window<T>::pool_window(const char* kind, const cartesian_partition& P_x, shape_t global_shape,
                            const pool_options& options, bool dilation_allowed)
    : P_x_(P_x), name_(kind) {
    // First, before any check that could fail on some workers only: the same arguments everywhere.
    detail::argument_agreement(name_)
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("global_shape", global_shape)
        .list("kernel_size", options.kernel_size)
        .list("stride", options.stride)
        .list("padding", options.padding)
        .list("dilation", options.dilation)
        .number("spatial_dims", options.spatial_dims)
        .require(*P_x.world_comm());

    const std::size_t dims = options.spatial_dims != 0 ? options.spatial_dims
                             : global_shape.size() >= 3 ? global_shape.size() - 2
                                                        : 0;
    DISTDL_REQUIRE(dims >= 1 && dims <= 3, name_ << ": global input shape " << format_list(global_shape)
                                                 << " must be N × C × 1 to 3 spatial extents");
    name_ += std::to_string(dims) + "d";
    DISTDL_REQUIRE(global_shape.size() == dims + 2, name_ << ": global input shape " << format_list(global_shape)
                                                          << " must be N × C × " << dims << " spatial extents");
    const std::size_t rank = global_shape.size();
    DISTDL_REQUIRE_AS(P_x.dim() == rank, partition_error,
                      name_ << ": P_x shape " << format_list(P_x.shape()) << " has " << P_x.dim()
                            << " dimensions, expected " << rank << " (one per dimension of the input "
                            << format_list(global_shape) << ", e.g. 1 × 1 × P_d…)");
    DISTDL_REQUIRE(!options.kernel_size.empty(), name_ << ": kernel_size is required");
    const auto k = per_spatial(options.kernel_size, dims, {}, "kernel_size", name_);
    const auto s = per_spatial(options.stride, dims, k, "stride", name_);
    const auto p = per_spatial(options.padding, dims, std::vector<std::size_t>(dims, 0), "padding", name_);
    const auto d = per_spatial(options.dilation, dims, std::vector<std::size_t>(dims, 1), "dilation", name_);
    for (std::size_t e = 0; e < dims; ++e)
        DISTDL_REQUIRE(k[e] >= 1 && s[e] >= 1 && d[e] >= 1,
                       name_ << ": kernel_size " << format_list(k) << ", stride " << format_list(s) << " and dilation "
                             << format_list(d) << " must all be at least 1");
    if (!dilation_allowed)
        DISTDL_REQUIRE(std::all_of(d.begin(), d.end(), [](std::size_t v) { return v == 1; }),
                       name_ << ": dilation " << format_list(d) << " given, expected 1 (average pooling has no dilation)");

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
    local_ = kernels::pool_geometry{k, s, std::vector<std::size_t>(dims, 0), d};

    // Same decision on every worker of the world: it depends on global facts only.
    direct_ = std::all_of(plans.begin(), plans.end(), [](const dimension_plan& q) { return q.windows_are_pieces(); });
    if (!direct_) halo_ = std::make_unique<halo_exchange<T>>(P_x, global_shape, full);  // collective

    if (!P_x.active()) return;
    const shape_t at = P_x.index();
    piece_shape_.resize(rank);
    window_shape_.resize(rank);
    output_shape_.resize(rank);
    inside_start_.resize(rank);
    inside_extent_.resize(rank);
    computes_ = true;
    for (std::size_t t = 0; t < rank; ++t) {
        const auto& q = plans[t];
        piece_shape_[t] = balanced_size(q.n, q.parts, at[t]);
        output_shape_[t] = balanced_size(q.m, q.parts, at[t]);
        signed_index lo, hi;
        q.window(at[t], lo, hi);
        window_shape_[t] = std::size_t(hi - lo);
        const signed_index in_lo = std::clamp<signed_index>(lo, 0, signed_index(q.n));
        const signed_index in_hi = std::clamp<signed_index>(hi, in_lo, signed_index(q.n));
        inside_extent_[t] = std::size_t(in_hi - in_lo);
        inside_start_[t] = inside_extent_[t] == 0 ? 0 : std::size_t(in_lo - lo);  // all padding: no inside
        if (inside_extent_[t] != window_shape_[t]) has_padding_ = true;
        if (t >= 2 && window_shape_[t] == 0) computes_ = false;
    }
}

template <class T>
pool_window<T>::~pool_window() = default;

template <class T>
std::string pool_window<T>::shape_problem(const tensor<T>& t, const shape_t& expected, const char* what) const {
    if (t.dimension() == expected.size() && std::equal(expected.begin(), expected.end(), t.shape().begin())) return {};
    std::ostringstream msg;
    msg << name_ << ": worker " << P_x_.rank() << " of P_x shape " << format_list(P_x_.shape()) << " expects " << what
        << " of shape " << format_list(expected) << ", got " << format_list(shape_of(t));
    return msg.str();
}

template <class T>
void pool_window<T>::agree(const std::string& problem) {
    detail::agree_on_call(*P_x_.comm(), problem, false);
}

template <class T>
const tensor<T>& pool_window<T>::gather(const tensor<T>& x, T padding_value) {
    if (direct_) {
        agree(shape_problem(x, piece_shape_, "a tensor"));  // worded as the HaloExchange's
        return x;
    }
    try {
        halo_->forward(x, window_);
    } catch (const invalid_argument& e) {  // agreed by every worker of P_x
        throw invalid_argument(name_ + ": " + e.what());
    }
    DISTDL_REQUIRE_AS(shape_of(window_) == window_shape_, error,
                      "internal error: " << name_ << " window " << format_list(shape_of(window_)) << ", planned "
                                         << format_list(window_shape_));
    if (has_padding_ && padding_value != T(0))
        detail::fill_outside_box(window_.data(), window_shape_, inside_start_, inside_extent_, padding_value);
    return window_;
}

template <class T>
void pool_window<T>::scatter(const tensor<T>& dwindow, tensor<T>& dx) {
    try {
        halo_->adjoint(dwindow, dx);
    } catch (const invalid_argument& e) {
        throw invalid_argument(name_ + ": " + e.what());
    }
}

template class pool_window<float>;
template class pool_window<double>;

}  // namespace distdl
