#include "kernels/pooling.hpp"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/per_dimension.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace distdl::kernels {

namespace {

pool_geometry normalize(const pool_geometry& g, const char* layer, bool dilation_allowed) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(dims >= 1 && dims <= 3,
                   layer << ": kernel_size " << format_list(g.kernel_size) << " must have 1, 2 or 3 entries");
    pool_geometry out;
    out.kernel_size = g.kernel_size;
    out.stride = per_dimension(g.stride, dims, g.kernel_size, layer, "stride");
    out.padding = per_dimension(g.padding, dims, std::vector<std::size_t>(dims, 0), layer, "padding");
    out.dilation = per_dimension(g.dilation, dims, std::vector<std::size_t>(dims, 1), layer, "dilation");
    for (std::size_t e = 0; e < dims; ++e) {
        DISTDL_REQUIRE(out.kernel_size[e] >= 1 && out.stride[e] >= 1 && out.dilation[e] >= 1,
                       layer << ": kernel_size " << format_list(out.kernel_size) << ", stride "
                             << format_list(out.stride) << ", dilation " << format_list(out.dilation)
                             << " must all be at least 1");
        DISTDL_REQUIRE(dilation_allowed || out.dilation[e] == 1,
                       layer << ": dilation " << format_list(out.dilation) << " given, expected 1");
    }
    return out;
}

shape_t output_shape_of(const pool_geometry& g, const shape_t& x_shape, const char* layer) {
    const std::size_t dims = g.kernel_size.size();
    DISTDL_REQUIRE(x_shape.size() == dims + 2, layer << ": input shape " << format_list(x_shape) << ", expected N × C × "
                                                     << dims << " spatial extents");
    shape_t out{x_shape[0], x_shape[1]};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t span = g.dilation[e] * (g.kernel_size[e] - 1) + 1;
        const std::size_t padded = x_shape[e + 2] + 2 * g.padding[e];
        DISTDL_REQUIRE(padded >= span, layer << ": kernel " << g.kernel_size[e] << " with dilation " << g.dilation[e]
                                             << " does not fit in spatial dimension " << e << " of input shape "
                                             << format_list(x_shape) << " with padding " << g.padding[e]);
        out.push_back((padded - span) / g.stride[e] + 1);
    }
    return out;
}

// The problem lifted to three spatial dimensions, with the valid kernel offsets [lo, hi) of
// every output index j precomputed per dimension (input index s·j + d·t − p inside [0, L)),
// and the box of outputs [jb, je) to compute (p: the region's offset).
struct pool_plan {
    std::int64_t planes = 0;  // N · C
    std::array<std::int64_t, 3> L{1, 1, 1}, m{1, 1, 1}, s{1, 1, 1}, p{0, 0, 0}, d{1, 1, 1}, k{1, 1, 1};
    std::array<std::int64_t, 3> jb{0, 0, 0}, je{1, 1, 1};
    std::array<std::vector<std::int64_t>, 3> lo, hi;
    std::int64_t left = 0, right = 0;  // widths of the side columns (pool_sides)

    pool_plan(const pool_geometry& g, const shape_t& x_shape, const shape_t& y_shape, const pool_region& r,
              const char* layer, std::size_t left_width = 0, std::size_t right_width = 0)
        : left(std::int64_t(left_width)), right(std::int64_t(right_width)) {
        const std::size_t dims = g.kernel_size.size();
        DISTDL_REQUIRE(x_shape.size() == dims + 2 && y_shape.size() == dims + 2 && x_shape[0] == y_shape[0] &&
                           x_shape[1] == y_shape[1] && r.offset.size() == dims && r.start.size() == dims &&
                           r.stop.size() == dims,
                       layer << ": input shape " << format_list(x_shape) << " and output shape "
                             << format_list(y_shape) << " must be N × C × " << dims
                             << " spatial extents with the same N, C, and the region one entry per spatial dimension");
        planes = std::int64_t(x_shape[0] * x_shape[1]);
        for (std::size_t e = 0; e < dims; ++e) {
            const std::size_t a = 3 - dims + e;
            L[a] = std::int64_t(x_shape[e + 2]);
            m[a] = std::int64_t(y_shape[e + 2]);
            k[a] = std::int64_t(g.kernel_size[e]);
            s[a] = std::int64_t(g.stride[e]);
            p[a] = r.offset[e];
            d[a] = std::int64_t(g.dilation[e]);
            DISTDL_REQUIRE(r.start[e] <= r.stop[e] && r.stop[e] <= y_shape[e + 2],
                           layer << ": output box [" << format_list(r.start) << ", " << format_list(r.stop)
                                 << ") outside the output shape " << format_list(y_shape));
            jb[a] = std::int64_t(r.start[e]);
            je[a] = std::int64_t(r.stop[e]);
        }
        DISTDL_REQUIRE(L[0] * L[1] * (L[2] + left + right) <= std::int64_t(INT32_MAX),
                       layer << ": input planes of " << L[0] * L[1] * (L[2] + left + right) << " elements (shape "
                             << format_list(x_shape) << " with " << left + right
                             << " side columns) exceed the 2^31 − 1 the saved maxima can index");
        for (int a = 0; a < 3; ++a) {
            lo[a].resize(std::size_t(m[a]));
            hi[a].resize(std::size_t(m[a]));
            for (std::int64_t j = jb[a]; j < je[a]; ++j) {
                const std::int64_t base = s[a] * j - p[a];  // input index of t = 0
                std::int64_t l = base >= 0 ? 0 : (-base + d[a] - 1) / d[a];
                std::int64_t h = L[a] - 1 - base < 0 ? 0 : (L[a] - 1 - base) / d[a] + 1;
                l = std::min(l, k[a]);
                h = std::min(std::max(h, l), k[a]);
                lo[a][std::size_t(j)] = l;
                hi[a][std::size_t(j)] = h;
            }
        }
    }
    bool empty() const { return planes == 0 || je[0] <= jb[0] || je[1] <= jb[1] || je[2] <= jb[2]; }
    std::int64_t in_volume() const { return L[0] * L[1] * L[2]; }
    std::int64_t left_volume() const { return L[0] * L[1] * left; }
    std::int64_t right_volume() const { return L[0] * L[1] * right; }
    std::int64_t out_volume() const { return m[0] * m[1] * m[2]; }
    std::int64_t index(int a, std::int64_t j, std::int64_t t) const { return s[a] * j + d[a] * t - p[a]; }
    // The last input row (index i0 · L1 + i1 in a plane) that output row (j0, j1) reads, −1 if none.
    std::int64_t last_row(std::int64_t j0, std::int64_t j1) const {
        const std::int64_t h0 = hi[0][std::size_t(j0)], h1 = hi[1][std::size_t(j1)];
        if (h0 <= lo[0][std::size_t(j0)] || h1 <= lo[1][std::size_t(j1)]) return -1;
        return index(0, j0, h0 - 1) * L[1] + index(1, j1, h1 - 1);
    }
};

// 1 / the kernel's volume: padding counts (count_include_pad). The volume in double, exact below
// 2^53, where the product of three 64-bit extents could overflow.
template <class T>
T average_scale(const pool_plan& c) {
    return T(1) / T(double(c.k[0]) * double(c.k[1]) * double(c.k[2]));
}

// Zeroes n elements with 16-byte vector stores. Not memset: glibc's clears 2 KiB and more
// with `rep stosb`, and rows zeroed that way (or more rows than the next gradients reach) made
// the backward passes below slower on this Zen 5 (see plane_zeroed_ahead).
template <class T>
void zero_elements(T* p, std::int64_t n) {
#if defined(__SSE2__)
    char* bytes = reinterpret_cast<char*>(p);
    const std::int64_t size = n * std::int64_t(sizeof(T));
    std::int64_t i = 0;
    for (; i + 16 <= size; i += 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(bytes + i), _mm_setzero_si128());
    for (; i < size; ++i) bytes[i] = 0;
#else
    std::fill_n(p, n, T(0));
#endif
}

// A plane of dx in a backward that overwrites it: each row is zeroed just before the first
// gradient lands in it (rows below `zeroed` are zeroed; no later row has received any), the
// rows never reached at the end (finish). One pass over dx while its rows are in cache,
// instead of a fill of all of dx and a second pass adding into it: 2x2 average pooling's
// backward on 8 x 16 x 256 x 256 floats took 1.9 ms instead of 5.1. When adding, nothing is
// zeroed. Exactly the rows reached are zeroed, with vector stores (zero_elements): zeroing
// 2 KiB at a time with memset, as session 14 measured best on the older CPU, made 2x2/2 on
// 128-wide rows (the layers' pieces on 2x2 workers) cost 3.4-3.9 ms per backward of 32 x 16 x
// 128 x 128 floats against 2.1 (average) and 2.9-3.4 against 1.7-1.8 (max) on Zen 5, and the
// whole tensor's 256-wide rows 2.3 against 2.0 (average; session 26).
template <class T>
class plane_zeroed_ahead {
  public:
    plane_zeroed_ahead(T* plane, const pool_plan& c, pool_dx mode)
        : plane_(plane), row_length_(c.L[2]), rows_(c.L[0] * c.L[1]), zeroed_(mode == pool_dx::add ? rows_ : 0) {}
    // Rows up to `row` are zeroed from now on.
    void through(std::int64_t row) {
        if (row < zeroed_) return;
        const std::int64_t end = std::min(rows_, row + 1);
        zero_elements(plane_ + zeroed_ * row_length_, (end - zeroed_) * row_length_);
        zeroed_ = end;
    }
    // Zeroes the rows no gradient reached.
    void finish() { through(rows_ - 1); }

  private:
    T* plane_;
    std::int64_t row_length_, rows_, zeroed_;
};

pool_region whole(const pool_geometry& g, const shape_t& y_shape) {
    pool_region r;
    for (std::size_t e = 0; e < g.kernel_size.size(); ++e) {
        r.offset.push_back(std::int64_t(g.padding[e]));
        r.start.push_back(0);
        r.stop.push_back(y_shape[e + 2]);
    }
    return r;
}

// The outputs j in the box [jb, je) whose input index s·j + off lies in [a, b).
void outputs_reading(std::int64_t s, std::int64_t off, std::int64_t a, std::int64_t b, std::int64_t jb,
                     std::int64_t je, std::int64_t& lo, std::int64_t& hi) {
    lo = a - off <= 0 ? 0 : (a - off + s - 1) / s;
    hi = b - off <= 0 ? 0 : (b - off + s - 1) / s;
    lo = std::clamp(lo, jb, je);
    hi = std::clamp(hi, lo, je);
}

// f(s), s the stride: a compile-time constant for strides 1 and 2, so that the strided loops
// vectorize (at a run-time stride the loads compile to single elements), else the value. Called
// once per box around the whole row walk: called per tap, GCC made each tap a call.
template <class F>
void with_stride(std::int64_t stride, F&& f) {
    switch (stride) {
        case 1: return f(std::integral_constant<std::int64_t, 1>{});
        case 2: return f(std::integral_constant<std::int64_t, 2>{});
        default: return f(stride);
    }
}

// row_scratch: the forward kernels accumulate each output row in a small buffer of their own and
// store it into y once, rather than reading and writing y's row at every tap. On this AMD EPYC,
// max pooling's y row and argmax row (the same offsets in two arrays whose distance is a
// multiple of 4 KiB) at some addresses seem to evict each other from L1 at every tap
// (presumably its way predictor, which tells lines apart by a hash of their address): 3x3/2
// padding 1 on 8 x 16 x 256 x 256 floats took 39 ms per forward at such addresses (every run
// with ASLR off, about half the runs with it) against 9-10 ms; with the row buffers 8.0-8.2 ms
// at every address tried.
// Average pooling's rows gain a little too (2x2/2 2.3 -> 2.0-2.1 ms per forward).
// Max pooling stores rows_per_store rows into y, then the same rows into argmax: stored a row
// of each at a time, four 8 x 16 x 128 x 128 pieces (the layers' on 2x2 workers) still cost
// 1.4-1.7x the whole tensor on one core when each piece's y and argmax were separate
// allocations 2 MB + 8 KiB apart (session 26, Zen 5); by four rows, the rate of the whole
// tensor wherever they lie, and pool_bench's kernels alone went from 1.46-1.58 to 1.11-1.14 of
// the serial kernel (2x2/2).
constexpr std::int64_t rows_per_store = 4;

// Where a tap reads: the input array itself or one of its side columns (pool_sides).
enum source : int { from_x = 0, from_left = 1, from_right = 2 };

// Row-wise walk of one plane: for every output row (j0, j1) of the box — begin(q_row, last)
// first (last: pool_plan::last_row), end(q_row) last — and every valid kernel offset
// (t0, t1, t2) of that row in row-major order, calls tap(q_row, source, base, j_lo, j_hi):
// output entries q_row + j2 for j2 in [j_lo, j_hi) read that source's plane at offset
// base + s2·j2 (an offset t2 reaching both the side columns and the array is one call per
// source, left first; empty ranges are skipped, so no pointer is ever formed into an empty
// array). Per output entry, the taps come in row-major window order. begin/end cover the row's
// box part [jb2, je2).
template <class Begin, class Tap, class End>
void for_each_row_tap(const pool_plan& c, Begin&& begin, Tap&& tap, End&& end) {
    // Per t2, the j2 ranges reading the left columns, the array and the right columns.
    struct ranges {
        std::int64_t off, left_lo, left_hi, lo, hi, right_lo, right_hi;
    };
    // Only the offsets t2 in [t_lo, t_hi) reach the input or its side columns from some output
    // of the box (a huge kernel over a little input is mostly padding, never visited).
    const auto ceil_div = [](std::int64_t a, std::int64_t b) { return a >= 0 ? (a + b - 1) / b : -(-a / b); };
    const std::int64_t t_lo = std::clamp<std::int64_t>(ceil_div(c.p[2] - c.left - c.s[2] * (c.je[2] - 1), c.d[2]),
                                                       0, c.k[2]);
    const std::int64_t t_hi =
        std::clamp<std::int64_t>(ceil_div(c.L[2] + c.right + c.p[2] - c.s[2] * c.jb[2], c.d[2]), t_lo, c.k[2]);
    std::array<ranges, 16> small;
    std::vector<ranges> large;
    ranges* per_t2 = small.data();  // entry t2 - t_lo
    if (t_hi - t_lo > std::int64_t(small.size())) {
        large.resize(std::size_t(t_hi - t_lo));
        per_t2 = large.data();
    }
    for (std::int64_t t2 = t_lo; t2 < t_hi; ++t2) {
        ranges& q = per_t2[t2 - t_lo];
        q.off = c.d[2] * t2 - c.p[2];
        outputs_reading(c.s[2], q.off, -c.left, 0, c.jb[2], c.je[2], q.left_lo, q.left_hi);
        outputs_reading(c.s[2], q.off, 0, c.L[2], c.jb[2], c.je[2], q.lo, q.hi);
        outputs_reading(c.s[2], q.off, c.L[2], c.L[2] + c.right, c.jb[2], c.je[2], q.right_lo, q.right_hi);
    }
    const bool sides = c.left > 0 || c.right > 0;
    for (std::int64_t j0 = c.jb[0]; j0 < c.je[0]; ++j0)
        for (std::int64_t j1 = c.jb[1]; j1 < c.je[1]; ++j1) {
            const std::int64_t q_row = (j0 * c.m[1] + j1) * c.m[2];
            begin(q_row, c.last_row(j0, j1));
            for (std::int64_t t0 = c.lo[0][j0]; t0 < c.hi[0][j0]; ++t0)
                for (std::int64_t t1 = c.lo[1][j1]; t1 < c.hi[1][j1]; ++t1) {
                    const std::int64_t r = c.index(0, j0, t0) * c.L[1] + c.index(1, j1, t1);  // input row
                    const std::int64_t row = r * c.L[2];
                    if (!sides) {
                        for (std::int64_t t2 = t_lo; t2 < t_hi; ++t2) {
                            const ranges& q = per_t2[t2 - t_lo];
                            if (q.lo < q.hi) tap(q_row, from_x, row + q.off, q.lo, q.hi);
                        }
                        continue;
                    }
                    for (std::int64_t t2 = t_lo; t2 < t_hi; ++t2) {
                        const ranges& q = per_t2[t2 - t_lo];
                        if (q.left_lo < q.left_hi)
                            tap(q_row, from_left, r * c.left + c.left + q.off, q.left_lo, q.left_hi);
                        if (q.lo < q.hi) tap(q_row, from_x, row + q.off, q.lo, q.hi);
                        if (q.right_lo < q.right_hi)
                            tap(q_row, from_right, r * c.right + q.off - c.L[2], q.right_lo, q.right_hi);
                    }
                }
            end(q_row);
        }
}

}  // namespace

template <class T>
max_pool<T>::max_pool(const pool_geometry& geometry) : g_(normalize(geometry, "kernels::max_pool", true)) {}

template <class T>
shape_t max_pool<T>::output_shape(const shape_t& x_shape) const {
    return output_shape_of(g_, x_shape, "kernels::max_pool");
}

template <class T>
void max_pool<T>::forward_box(const T* x, const shape_t& x_shape, const pool_region& r, T* y, const shape_t& y_shape,
                              std::int32_t* argmax, const pool_sides<const T>& sides) const {
    const pool_plan c(g_, x_shape, y_shape, r, "kernels::max_pool", sides.left_width, sides.right_width);
    if (c.empty()) return;
    const std::int64_t V = c.in_volume(), M = c.out_volume(), stride = c.s[2];
    const std::int64_t VL = c.left_volume(), VR = c.right_volume();
    const std::int64_t jb = c.jb[2], width = c.je[2] - c.jb[2];
    // The argmax index of a source's offset 0 (pool_argmax).
    const std::array<std::int32_t, 3> index_base{0, std::int32_t(V), std::int32_t(V + VL)};
    // A few output rows' maxima and their positions, stored into y and then into argmax a block
    // of rows at a time (see row_scratch).
    std::vector<T> row_max(static_cast<std::size_t>(width * rows_per_store));
    std::vector<std::int32_t> row_at(static_cast<std::size_t>(width * rows_per_store));
    std::array<std::int64_t, rows_per_store> pending_rows{};  // the buffered rows' offsets in a plane
    std::int64_t pending = 0;
    with_stride(stride, [&](auto s) {
        for (std::int64_t plane = 0; plane < c.planes; ++plane) {
            const std::array<const T*, 3> in{x + plane * V, sides.left + plane * VL, sides.right + plane * VR};
            T* out = y + plane * M;
            std::int32_t* at = argmax + plane * M;
            const auto store = [&] {
                for (std::int64_t k = 0; k < pending; ++k)
                    std::copy_n(row_max.data() + k * width, width, out + pending_rows[std::size_t(k)] + jb);
                for (std::int64_t k = 0; k < pending; ++k)
                    std::copy_n(row_at.data() + k * width, width, at + pending_rows[std::size_t(k)] + jb);
                pending = 0;
            };
            // The window's first element is taken, then any strictly greater one (the reference's
            // rule, also for NaN); a window of padding only keeps −∞ and no maximum.
            for_each_row_tap(
                c,
                [&](std::int64_t, std::int64_t) {
                    if (pending == rows_per_store) store();
                    std::fill_n(row_max.data() + pending * width, width, -std::numeric_limits<T>::infinity());
                    std::fill_n(row_at.data() + pending * width, width, std::int32_t(-1));
                },
                [&](std::int64_t, int from, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                    const T* src = in[std::size_t(from)] + base + s * lo;
                    const auto first = index_base[std::size_t(from)] + std::int32_t(base + s * lo);
                    T* o = row_max.data() + pending * width + (lo - jb);
                    std::int32_t* a = row_at.data() + pending * width + (lo - jb);
                    for (std::int64_t j = 0; j < hi - lo; ++j) {
                        const T v = src[s * j];
                        const bool take = v > o[j] || a[j] < 0;
                        o[j] = take ? v : o[j];
                        a[j] = take ? first + std::int32_t(s * j) : a[j];
                    }
                },
                [&](std::int64_t q_row) { pending_rows[std::size_t(pending++)] = q_row; });
            store();
        }
    });
}

template <class T>
void max_pool<T>::backward_box(const std::int32_t* argmax, const T* dy, const shape_t& y_shape, const pool_region& r,
                               T* dx, const shape_t& x_shape, const pool_sides<T>& sides, pool_dx mode) const {
    const pool_plan c(g_, x_shape, y_shape, r, "kernels::max_pool::backward", sides.left_width, sides.right_width);
    const std::int64_t V = c.in_volume(), M = c.out_volume();
    if (c.empty()) {
        if (mode == pool_dx::overwrite) std::fill_n(dx, c.planes * V, T(0));
        return;
    }
    const std::int64_t VL = c.left_volume(), VR = c.right_volume();
    const bool with_sides = VL > 0 || VR > 0;
    for (std::int64_t plane = 0; plane < c.planes; ++plane) {
        const std::int32_t* at = argmax + plane * M;
        const T* grad = dy + plane * M;
        T* out = dx + plane * V;
        T* left = sides.left + plane * VL;
        T* right = sides.right + plane * VR;
        plane_zeroed_ahead<T> zeroing(out, c, mode);
        for (std::int64_t j0 = c.jb[0]; j0 < c.je[0]; ++j0)
            for (std::int64_t j1 = c.jb[1]; j1 < c.je[1]; ++j1) {
                const std::int64_t q_row = (j0 * c.m[1] + j1) * c.m[2];
                zeroing.through(c.last_row(j0, j1));  // the maxima lie in the row's windows
                for (std::int64_t j2 = c.jb[2]; j2 < c.je[2]; ++j2) {
                    const std::int64_t a = at[q_row + j2];
                    if (a < 0) continue;
                    // Maxima saved for another input (another length can give as many outputs).
                    DISTDL_REQUIRE(a < V + VL + VR, "kernels::max_pool::backward: a saved maximum at "
                                                        << a << " lies outside the input planes of " << V + VL + VR
                                                        << " elements (input shape " << format_list(x_shape)
                                                        << "): maxima of another input's forward?");
                    if (!with_sides || a < V) out[a] += grad[q_row + j2];
                    else if (a < V + VL) left[a - V] += grad[q_row + j2];
                    else right[a - V - VL] += grad[q_row + j2];
                }
            }
        zeroing.finish();
    }
}

template <class T>
void max_pool<T>::forward(const tensor<T>& x, tensor<T>& y, pool_argmax& argmax) const {
    const shape_t x_shape = shape_of(x), y_shape = output_shape(x_shape);
    if (shape_of(y) != y_shape) y.resize(y_shape);
    argmax.resize(y.size());
    forward_box(x.data(), x_shape, whole(g_, y_shape), y.data(), y_shape, argmax.data());
}

template <class T>
void max_pool<T>::forward(const tensor<T>& x, tensor<T>& y) const {
    pool_argmax argmax;
    forward(x, y, argmax);
}

template <class T>
void max_pool<T>::backward(const pool_argmax& argmax, const tensor<T>& dy, const shape_t& x_shape, tensor<T>& dx) const {
    const shape_t y_shape = output_shape(x_shape);
    DISTDL_REQUIRE(shape_of(dy) == y_shape && argmax.size() == dy.size(),
                   "kernels::max_pool::backward: output gradient shape " << format_list(dy.shape()) << " and "
                                                                         << argmax.size() << " saved maxima, expected "
                                                                         << format_list(y_shape));
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    backward_box(argmax.data(), dy.data(), y_shape, whole(g_, y_shape), dx.data(), x_shape, {}, pool_dx::overwrite);
}

template <class T>
void max_pool<T>::backward(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dx) const {
    tensor<T> y;
    pool_argmax argmax;
    forward(x, y, argmax);
    backward(argmax, dy, shape_of(x), dx);
}

template <class T>
avg_pool<T>::avg_pool(const pool_geometry& geometry) : g_(normalize(geometry, "kernels::avg_pool", false)) {}

template <class T>
shape_t avg_pool<T>::output_shape(const shape_t& x_shape) const {
    return output_shape_of(g_, x_shape, "kernels::avg_pool");
}

template <class T>
void avg_pool<T>::forward_box(const T* x, const shape_t& x_shape, const pool_region& r, T* y,
                              const shape_t& y_shape, const pool_sides<const T>& sides) const {
    const pool_plan c(g_, x_shape, y_shape, r, "kernels::avg_pool", sides.left_width, sides.right_width);
    if (c.empty()) return;
    const std::int64_t V = c.in_volume(), M = c.out_volume(), stride = c.s[2];
    const std::int64_t VL = c.left_volume(), VR = c.right_volume();
    const std::int64_t jb = c.jb[2], je = c.je[2];
    const T scale = average_scale<T>(c);
    std::vector<T> row_sum(static_cast<std::size_t>(je - jb));  // one output row's sums (see row_scratch)
    with_stride(stride, [&](auto s) {
        for (std::int64_t plane = 0; plane < c.planes; ++plane) {
            const std::array<const T*, 3> in{x + plane * V, sides.left + plane * VL, sides.right + plane * VR};
            T* out = y + plane * M;
            for_each_row_tap(
                c, [&](std::int64_t, std::int64_t) { std::fill_n(row_sum.data(), je - jb, T(0)); },
                [&](std::int64_t, int from, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                    T* o = row_sum.data() + (lo - jb);
                    const T* src = in[std::size_t(from)] + base + s * lo;
                    for (std::int64_t j = 0; j < hi - lo; ++j) o[j] += src[s * j];
                },
                [&](std::int64_t q_row) {
                    for (std::int64_t j = 0; j < je - jb; ++j) out[q_row + jb + j] = row_sum[std::size_t(j)] * scale;
                });
        }
    });
}

template <class T>
void avg_pool<T>::backward_box(const T* dy, const shape_t& y_shape, const pool_region& r, T* dx,
                               const shape_t& x_shape, const pool_sides<T>& sides, pool_dx mode) const {
    const pool_plan c(g_, x_shape, y_shape, r, "kernels::avg_pool::backward", sides.left_width, sides.right_width);
    const std::int64_t V = c.in_volume(), M = c.out_volume(), stride = c.s[2];
    if (c.empty()) {
        if (mode == pool_dx::overwrite) std::fill_n(dx, c.planes * V, T(0));
        return;
    }
    const std::int64_t VL = c.left_volume(), VR = c.right_volume();
    const T scale = average_scale<T>(c);
    with_stride(stride, [&](auto s) {
        for (std::int64_t plane = 0; plane < c.planes; ++plane) {
            const T* grad = dy + plane * M;
            const std::array<T*, 3> out{dx + plane * V, sides.left + plane * VL, sides.right + plane * VR};
            plane_zeroed_ahead<T> zeroing(out[from_x], c, mode);
            for_each_row_tap(
                c, [&](std::int64_t, std::int64_t last_row) { zeroing.through(last_row); },
                [&](std::int64_t q_row, int from, std::int64_t base, std::int64_t lo, std::int64_t hi) {
                    const T* g = grad + q_row;
                    T* dst = out[std::size_t(from)] + base;
                    for (std::int64_t j = lo; j < hi; ++j) dst[s * j] += g[j] * scale;
                },
                [](std::int64_t) {});
            zeroing.finish();
        }
    });
}

template <class T>
void avg_pool<T>::forward(const tensor<T>& x, tensor<T>& y) const {
    const shape_t x_shape = shape_of(x), y_shape = output_shape(x_shape);
    if (shape_of(y) != y_shape) y.resize(y_shape);
    forward_box(x.data(), x_shape, whole(g_, y_shape), y.data(), y_shape);
}

template <class T>
void avg_pool<T>::backward(const tensor<T>& dy, const shape_t& x_shape, tensor<T>& dx) const {
    const shape_t y_shape = output_shape(x_shape);
    DISTDL_REQUIRE(shape_of(dy) == y_shape, "kernels::avg_pool::backward: output gradient shape "
                                                << format_list(dy.shape()) << ", expected " << format_list(y_shape));
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    backward_box(dy.data(), y_shape, whole(g_, y_shape), dx.data(), x_shape, {}, pool_dx::overwrite);
}

template class max_pool<float>;
template class max_pool<double>;
template class avg_pool<float>;
template class avg_pool<double>;

}  // namespace distdl::kernels
