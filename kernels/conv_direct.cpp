#include "kernels/conv_direct.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#define DISTDL_DIRECT_X86 1
#endif

namespace distdl::kernels::detail {

namespace {

using idx = std::ptrdiff_t;

// One convolution call in two spatial dimensions (1-d: one row).
struct plane_problem {
    idx N = 0, C_in = 0, C_out = 0, L_h = 1, L_w = 1, k_h = 1, k_w = 1, p_h = 0, p_w = 0, m_h = 1, m_w = 1;
};

plane_problem lift_to_plane(const conv_geometry& g, const shape_t& x_shape) {
    const shape_t y_shape = conv_output_shape(g, x_shape);
    plane_problem c;
    c.N = idx(x_shape[0]);
    c.C_in = idx(g.in_channels);
    c.C_out = idx(g.out_channels);
    const std::size_t w = g.kernel_size.size() - 1, h = w - 1;  // the last dimension is the width
    c.L_w = idx(x_shape[2 + w]);
    c.k_w = idx(g.kernel_size[w]);
    c.p_w = idx(g.padding[w]);
    c.m_w = idx(y_shape[2 + w]);
    if (w == 1) {
        c.L_h = idx(x_shape[2 + h]);
        c.k_h = idx(g.kernel_size[h]);
        c.p_h = idx(g.padding[h]);
        c.m_h = idx(y_shape[2 + h]);
    }
    return c;
}

idx round_up(idx v, idx to) { return (v + to - 1) / to * to; }

// Output rows per band of an image: each pass works band by band, so that the rows one band
// copies, reads and writes (`bytes_per_row` per output row, about one L2 per band) are still in
// L2 for its passes, instead of going out to the shared L3 as a whole image does. Measured on
// conv_bench (two cores, 1 MB L2 each): four workers each on a quarter of the batch of 16 -> 16
// on 256 x 256 cost 1.15x the serial kernel unbanded, 1.00x in 1 MB bands (batch_kernels_2x2);
// 512 KB bands did as well, 256 KB and 128 KB ones a little worse. A multiple of 8, the weights
// pass's row block, so its sums add in the same order as without bands.
idx band_rows(idx bytes_per_row) {
    static const idx budget = [] {
        const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);  // 0 or -1 where the system does not say
        return l2 > 0 ? std::clamp<idx>(l2, 256 * 1024, 4 * 1024 * 1024) : idx(1024 * 1024);
    }();
    return std::max<idx>(8, budget / std::max<idx>(bytes_per_row, 1) / 8 * 8);
}

// The rows of x (unpadded) that output rows 0 … i1 − 1 read, at stride 1.
idx x_rows_read(const plane_problem& c, idx i1) { return std::clamp(i1 + c.k_h - 1 - c.p_h, idx(0), c.L_h); }

// Packs w (C_out × C_in × k_h × k_w) as the forward kernel reads it: [outs / 8 rounded up][ins]
// [k_h][k_w][8], the 8 output channels of a tile side by side. `flipped_transposed`: for the
// backward-data pass, whose outputs are the C_in input channels and whose taps are reversed.
void pack_weights(const float* w, idx C_out, idx C_in, idx taps, bool flipped_transposed, std::vector<float>& packed) {
    const idx outs = flipped_transposed ? C_in : C_out, ins = flipped_transposed ? C_out : C_in;
    packed.assign(std::size_t(round_up(outs, 8) * ins * taps), 0.0f);  // keeps its capacity
    for (idx o = 0; o < outs; ++o)
        for (idx i = 0; i < ins; ++i)
            for (idx t = 0; t < taps; ++t)
                packed[std::size_t((((o / 8) * ins + i) * taps + t) * 8 + o % 8)] =
                    flipped_transposed ? w[(i * C_in + o) * taps + (taps - 1 - t)] : w[(o * C_in + i) * taps + t];
}

// One forward-type pass over one image: out[o, i, j] = bias[o] + Σ in[c, i + ky, j + kx] · w.
struct image_pass {
    const float* in = nullptr;  // the padded copy, at what output (0, 0) reads with tap (0, 0)
    idx in_plane = 0, in_stride = 0;
    idx C_in = 0, C_out = 0, m_h = 0, m_w = 0, k_h = 0, k_w = 0;
    const float* packed = nullptr;  // pack_weights
    const float* bias = nullptr;    // C_out, or null
    float* out = nullptr;           // C_out planes of out_plane floats: m_h rows of out_stride (m_w of them out)
    idx out_plane = 0, out_stride = 0;
    // Backward data with a redirect (direct_convolution::dx_redirect, at this image).
    const direct_convolution::dx_redirect* redirect = nullptr;
    float* redirect_target = nullptr;
};

// The backward-weights pass over one image: sums[c, ky, kx, o] += in[c, i + ky, j + kx] · dy[o, i, j]
// in 16 lanes (the lanes of j).
struct weights_pass {
    const float* in = nullptr;  // the padded copy of x
    idx in_plane = 0, in_stride = 0;
    const float* dy = nullptr;  // C_out planes of dy_plane floats: m_h rows of dy_stride (m_w of them dy)
    idx dy_plane = 0, dy_stride = 0;
    idx C_in = 0, C_out = 0, m_h = 0, m_w = 0, k_h = 0, k_w = 0;
    float* sums = nullptr;  // [C_in][k_h][k_w][C_out][16]
};

#ifdef DISTDL_DIRECT_X86

#define DISTDL_AVX512 __attribute__((target("avx512f,avx512vl,avx512bw,avx2,fma")))

DISTDL_AVX512 inline __mmask16 first_lanes(idx n) {
    return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << unsigned(n)) - 1u);
}

// The packed weights (pack_weights) of the block of 8 output channels that starts at oc0.
const float* block_weights(const image_pass& p, idx oc0) { return p.packed + (oc0 / 8) * p.C_in * p.k_h * p.k_w * 8; }

// OCB output channels × NV vectors of 16 output columns of one row; the last vector stored
// under `last` (the columns that exist). A single vector (the row's tail) also loads its inputs
// under `last`, so that lanes past the row compute on zeros.
template <int OCB, int NV>
DISTDL_AVX512 void forward_tile(const image_pass& p, const float* in, const float* w, const float* bias, float* out,
                                idx out_plane, __mmask16 last) {
    __m512 acc[OCB][NV];
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o) {
        const __m512 b = bias ? _mm512_set1_ps(bias[o]) : _mm512_setzero_ps();
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[o][v] = b;
    }
    for (idx c = 0; c < p.C_in; ++c)
        for (idx ky = 0; ky < p.k_h; ++ky) {
            const float* row = in + c * p.in_plane + ky * p.in_stride;
            for (idx kx = 0; kx < p.k_w; ++kx, w += 8) {
                __m512 xv[NV];
#pragma GCC unroll 4
                for (int v = 0; v < NV; ++v)
                    xv[v] = NV == 1 ? _mm512_maskz_loadu_ps(last, row + kx + 16 * v) : _mm512_loadu_ps(row + kx + 16 * v);
#pragma GCC unroll 8
                for (int o = 0; o < OCB; ++o) {
                    const __m512 wv = _mm512_set1_ps(w[o]);
#pragma GCC unroll 4
                    for (int v = 0; v < NV; ++v) acc[o][v] = _mm512_fmadd_ps(wv, xv[v], acc[o][v]);
                }
            }
        }
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o) {
#pragma GCC unroll 4
        for (int v = 0; v + 1 < NV; ++v) _mm512_storeu_ps(out + o * out_plane + 16 * v, acc[o][v]);
        _mm512_mask_storeu_ps(out + o * out_plane + 16 * (NV - 1), last, acc[o][NV - 1]);
    }
}

// Columns j0 … j1 − 1 of output row i of output channels oc0 … oc0 + OCB − 1, into `out` (at
// column j0 of channel oc0; channels out_plane apart). Few channels take wider tiles, so that at
// least 8 independent sums hide the latency of the multiply-adds. Each column's sum is the same
// wherever its tile starts.
template <int OCB>
DISTDL_AVX512 void forward_cols(const image_pass& p, idx i, idx oc0, idx j0, idx j1, float* out, idx out_plane) {
    constexpr int NV = OCB <= 2 ? 4 : 2;
    const float* in = p.in + i * p.in_stride;
    const float* w = block_weights(p, oc0);
    const float* bias = p.bias ? p.bias + oc0 : nullptr;
    idx j = j0;
    for (; j + 16 * NV <= j1; j += 16 * NV)
        forward_tile<OCB, NV>(p, in + j, w, bias, out + (j - j0), out_plane, 0xFFFF);
    for (; j < j1; j += 16) forward_tile<OCB, 1>(p, in + j, w, bias, out + (j - j0), out_plane, first_lanes(j1 - j));
}

using cols_kernel = void (*)(const image_pass&, idx, idx, idx, idx, float*, idx);
constexpr cols_kernel cols_kernels[8] = {forward_cols<1>, forward_cols<2>, forward_cols<3>, forward_cols<4>,
                                         forward_cols<5>, forward_cols<6>, forward_cols<7>, forward_cols<8>};

// One column of one output row beside a redirected box (backward data, so no bias): what it
// reads with input channel 0, tap (0, 0), and where its block's first output channel goes.
struct column_job {
    const float* in = nullptr;
    float* out = nullptr;
};

// K columns of one block of at most 8 output channels (`w`: the block's packed weights) at once,
// vectorized over the channels: per column one chain of multiply-adds in the tiles' order (the
// same bits), K chains side by side so that their latencies overlap, each weight vector loaded
// once for all K. A tile would spend 16 lanes on each such column: with 1-column strips on both
// sides of every redirected row, those partial tiles cost as much as the scratch row and its
// copy that they replaced (perf on FeatureConv2d, session 27).
template <int K>
DISTDL_AVX512 void forward_columns(const image_pass& p, const float* w, idx channels, const column_job* jobs) {
    __m256 acc[K];
#pragma GCC unroll 8
    for (int q = 0; q < K; ++q) acc[q] = _mm256_setzero_ps();
    for (idx c = 0; c < p.C_in; ++c)
        for (idx ky = 0; ky < p.k_h; ++ky)
            for (idx kx = 0; kx < p.k_w; ++kx, w += 8) {
                const idx in_at = c * p.in_plane + ky * p.in_stride + kx;
                const __m256 wv = _mm256_loadu_ps(w);
#pragma GCC unroll 8
                for (int q = 0; q < K; ++q) acc[q] = _mm256_fmadd_ps(wv, _mm256_set1_ps(jobs[q].in[in_at]), acc[q]);
            }
    for (int q = 0; q < K; ++q) {
        alignas(32) float lanes[8];
        _mm256_store_ps(lanes, acc[q]);
        for (idx o = 0; o < channels; ++o) jobs[q].out[o * p.out_plane] = lanes[o];
    }
}

using columns_kernel = void (*)(const image_pass&, const float*, idx, const column_job*);
constexpr int max_column_jobs = 8;
constexpr columns_kernel columns_kernels[max_column_jobs] = {
    forward_columns<1>, forward_columns<2>, forward_columns<3>, forward_columns<4>,
    forward_columns<5>, forward_columns<6>, forward_columns<7>, forward_columns<8>};

// Output rows i0 … i1 − 1, row by row (the rows one output row reads stay in L1 for every block
// of output channels). A redirected row's box goes straight to the target in tiles that start
// at the box (aligned like the target's rows), strips of 8 or more columns on either side to out
// in tiles too; the narrower ones (a halo's width) afterwards as column jobs, block by block, 8
// columns at a time across the rows. (A scratch row copied out afterwards, until session 27,
// made a forward and backward on 8 -> 16 channels of 130 x 258 ~0.55 ms slower than without a
// redirect, one core.)
void forward_rows(const image_pass& p, idx i0, idx i1) {
    constexpr idx narrow = 8;
    const auto* r = p.redirect;
    const idx first = r ? std::max(i0, r->row0) : 0, last = r ? std::min(i1, r->row0 + r->rows) : 0;
    const idx tail = r ? r->col0 + r->cols : 0;
    const bool narrow_left = r && r->col0 < narrow, narrow_right = r && p.m_w - tail < narrow;
    for (idx i = i0; i < i1; ++i) {
        const bool redirected = i >= first && i < last;
        for (idx oc0 = 0; oc0 < p.C_out; oc0 += 8) {
            const cols_kernel cols = cols_kernels[std::min<idx>(8, p.C_out - oc0) - 1];
            float* out = p.out + oc0 * p.out_plane + i * p.out_stride;
            if (!redirected) {
                cols(p, i, oc0, 0, p.m_w, out, p.out_plane);
                continue;
            }
            if (!narrow_left) cols(p, i, oc0, 0, r->col0, out, p.out_plane);
            cols(p, i, oc0, r->col0, tail, p.redirect_target + oc0 * r->plane + (i - r->row0) * r->stride, r->plane);
            if (!narrow_right) cols(p, i, oc0, tail, p.m_w, out + tail, p.out_plane);
        }
    }
    if (first >= last || !(narrow_left || narrow_right)) return;
    for (idx oc0 = 0; oc0 < p.C_out; oc0 += 8) {
        const float* w = block_weights(p, oc0);
        const idx channels = std::min<idx>(8, p.C_out - oc0);
        column_job jobs[max_column_jobs];
        int pending = 0;
        const auto add = [&](idx i, idx j) {
            jobs[pending++] = {p.in + i * p.in_stride + j, p.out + oc0 * p.out_plane + i * p.out_stride + j};
            if (pending < max_column_jobs) return;
            columns_kernels[pending - 1](p, w, channels, jobs);
            pending = 0;
        };
        for (idx i = first; i < last; ++i) {
            for (idx j = 0; narrow_left && j < r->col0; ++j) add(i, j);
            for (idx j = tail; narrow_right && j < p.m_w; ++j) add(i, j);
        }
        if (pending > 0) columns_kernels[pending - 1](p, w, channels, jobs);
    }
}

template <int OCB, int KXB, bool MASKED>
DISTDL_AVX512 inline __attribute__((always_inline)) void weights_step(const float* x, const float* dy, idx dy_plane,
                                                                      __mmask16 m, __m512 (&s)[OCB][KXB]) {
    __m512 d[OCB];
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o)
        d[o] = MASKED ? _mm512_maskz_loadu_ps(m, dy + o * dy_plane) : _mm512_loadu_ps(dy + o * dy_plane);
    // In registers, each read once: GCC would otherwise fold a load into every multiply-add.
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o) asm("" : "+v"(d[o]));
#pragma GCC unroll 3
    for (int kx = 0; kx < KXB; ++kx) {
        // Masked: the columns past the row's end read as zero (never 0 · inf from stale lanes).
        const __m512 xv = MASKED ? _mm512_maskz_loadu_ps(m, x + kx) : _mm512_loadu_ps(x + kx);
#pragma GCC unroll 8
        for (int o = 0; o < OCB; ++o) s[o][kx] = _mm512_fmadd_ps(d[o], xv, s[o][kx]);
    }
}

// Rows i0 … i1 − 1 of the sums of input channel c, kernel row ky, kernel columns kx0 … kx0 +
// KXB − 1 and output channels oc0 … oc0 + OCB − 1; prefetch_ahead > 0: each x row read, that
// many rows further down, into L2.
template <int OCB, int KXB>
DISTDL_AVX512 void weights_tile(const weights_pass& a, idx c, idx ky, idx kx0, idx oc0, idx i0, idx i1,
                                idx prefetch_ahead) {
    float* sums = a.sums + (((c * a.k_h + ky) * a.k_w + kx0) * a.C_out + oc0) * 16;
    __m512 s[OCB][KXB];
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o)
#pragma GCC unroll 3
        for (int kx = 0; kx < KXB; ++kx) s[o][kx] = _mm512_loadu_ps(sums + (kx * a.C_out + o) * 16);
    const idx dy_plane = a.dy_plane, full = a.m_w / 16 * 16;
    const __mmask16 tail = first_lanes(a.m_w - full);
    for (idx i = i0; i < i1; ++i) {
        const float* x = a.in + c * a.in_plane + (i + ky) * a.in_stride + kx0;
        const float* dy = a.dy + oc0 * a.dy_plane + i * a.dy_stride;
        if (prefetch_ahead > 0)
            for (idx j = 0; j < a.m_w + a.k_w - 1; j += 16)
                _mm_prefetch(reinterpret_cast<const char*>(x + prefetch_ahead * a.in_stride + j), _MM_HINT_T1);
        for (idx j = 0; j < full; j += 16) weights_step<OCB, KXB, false>(x + j, dy + j, dy_plane, 0xFFFF, s);
        if (full < a.m_w) weights_step<OCB, KXB, true>(x + full, dy + full, dy_plane, tail, s);
    }
#pragma GCC unroll 8
    for (int o = 0; o < OCB; ++o)
#pragma GCC unroll 3
        for (int kx = 0; kx < KXB; ++kx) _mm512_storeu_ps(sums + (kx * a.C_out + o) * 16, s[o][kx]);
}

using tile_kernel = void (*)(const weights_pass&, idx, idx, idx, idx, idx, idx, idx);
#define DISTDL_TILES(o) {weights_tile<o, 1>, weights_tile<o, 2>, weights_tile<o, 3>}
constexpr tile_kernel tile_kernels[4][3] = {DISTDL_TILES(1), DISTDL_TILES(2), DISTDL_TILES(3), DISTDL_TILES(4)};
#undef DISTDL_TILES

// Output rows r0 … r1 − 1 in tiles of 4 output channels (their dy vectors held in registers: 12
// sums + 4 dy + 1 x) over blocks of 8 rows (measured on conv_bench's slices: 8 channels in one
// tile holds 24 sums but reads dy from memory at every multiply-add, and ran 10-20% slower).
// x's padded copy was written by the forward long before, so its rows come from memory: the
// first tile of each input channel's last kernel row prefetches into L2 the rows the next block
// will read. Without it, few output channels (few tiles to share each fetch) waited on memory:
// conv_local 8 -> 8 on 256 x 256 13.0 -> 10.7 ms per step, 16 -> 8 26.1 -> 20.8, 16 -> 16
// 43.2 -> 37.2 (Zen 5, session 26).
void weights_rows(const weights_pass& a, idx r0, idx r1) {
    constexpr idx channels = 4, block = 8;
    for (idx i0 = r0; i0 < r1; i0 += block) {
        const idx i1 = std::min(r1, i0 + block);
        for (idx oc0 = 0; oc0 < a.C_out; oc0 += channels)
            for (idx c = 0; c < a.C_in; ++c)
                for (idx ky = 0; ky < a.k_h; ++ky)
                    for (idx kx0 = 0; kx0 < a.k_w; kx0 += 3) {
                        const bool prefetch = oc0 == 0 && ky == a.k_h - 1 && kx0 == 0;
                        tile_kernels[std::min(channels, a.C_out - oc0) - 1][std::min<idx>(3, a.k_w - kx0) - 1](
                            a, c, ky, kx0, oc0, i0, i1, prefetch ? block : 0);
                    }
    }
}

// Copies rows r0 … r1 − 1 of one image of dy (C × rows × width) into planes of `plane` floats of
// rows of `stride` floats (64-byte aligned), adding each channel's values into its 16 lanes of
// `sums` when not null (the bias gradient, read on the way).
DISTDL_AVX512 void copy_rows(const float* dy, idx C, idx rows, idx r0, idx r1, idx width, idx stride, idx plane,
                             float* copy, float* sums) {
    const idx full = width / 16 * 16;
    const __mmask16 tail = first_lanes(width - full);
    for (idx c = 0; c < C; ++c) {
        __m512 s[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
        for (idx r = r0; r < r1; ++r) {
            const float* from = dy + (c * rows + r) * width;
            float* to = copy + c * plane + r * stride;
            idx j = 0;
            for (; j + 64 <= full; j += 64)
#pragma GCC unroll 4
                for (int v = 0; v < 4; ++v) {
                    const __m512 value = _mm512_loadu_ps(from + j + 16 * v);
                    _mm512_store_ps(to + j + 16 * v, value);
                    s[v] = _mm512_add_ps(s[v], value);
                }
            for (; j < full; j += 16) {
                const __m512 value = _mm512_loadu_ps(from + j);
                _mm512_store_ps(to + j, value);
                s[0] = _mm512_add_ps(s[0], value);
            }
            if (full < width) {
                const __m512 value = _mm512_maskz_loadu_ps(tail, from + full);
                _mm512_mask_storeu_ps(to + full, tail, value);
                s[1] = _mm512_add_ps(s[1], value);
            }
        }
        if (sums)
            _mm512_storeu_ps(sums + 16 * c, _mm512_add_ps(_mm512_loadu_ps(sums + 16 * c),
                                                           _mm512_add_ps(_mm512_add_ps(s[0], s[1]),
                                                                         _mm512_add_ps(s[2], s[3]))));
    }
}

#else  // no x86-64: supports() is false, nothing below runs

[[noreturn]] void unsupported() { throw std::logic_error("direct_convolution: no kernels for this CPU"); }
void forward_rows(const image_pass&, idx, idx) { unsupported(); }
void weights_rows(const weights_pass&, idx, idx) { unsupported(); }
void copy_rows(const float*, idx, idx, idx, idx, idx, idx, idx, float*, float*) { unsupported(); }

#endif

}  // namespace

namespace {

// The row stride of x's zero-padded copy: rows long enough for the last (partial) vector of 16
// outputs to read its taps.
idx padded_x_stride(const plane_problem& c) {
    return round_up(std::max(c.L_w + 2 * c.p_w, round_up(c.m_w, 16) + c.k_w - 1), 16);
}

// Sizes x's zero-padded copy, one slot per image (forward fills them, backward weights reads
// them: the backward of a forward reuses them instead of copying x again); returns its stride.
idx prepare_padded_x(direct_convolution::padded_image& x_pad, const plane_problem& c) {
    const idx stride = padded_x_stride(c);
    x_pad.prepare(c.N, c.C_in, c.L_h + 2 * c.p_h, stride, c.L_h, c.L_w, c.p_h, c.p_w);
    return stride;
}

// dy's zero-padded copy for both backward passes (one image, reused): backward data reads dy
// padded by q = k − 1 − p (a negative q crops instead: the copy is unpadded and read from
// offset −q); backward weights reads the same rows, whose data start on a 64-byte boundary (the
// data sit at column `lead`, a multiple of 16), so its vectors of dy never straddle two lines.
struct padded_dy_layout {
    idx pad_h = 0, pad_w = 0, off_h = 0, off_w = 0, lead = 0, stride = 0;
};

padded_dy_layout prepare_padded_dy(direct_convolution::padded_image& dy_pad, const plane_problem& c) {
    padded_dy_layout l;
    const idx q_h = c.k_h - 1 - c.p_h, q_w = c.k_w - 1 - c.p_w;
    l.pad_h = std::max<idx>(q_h, 0), l.pad_w = std::max<idx>(q_w, 0);
    l.off_h = l.pad_h - q_h, l.off_w = l.pad_w - q_w;
    l.lead = round_up(l.pad_w, 16);
    l.stride = round_up(std::max(l.lead + c.m_w + l.pad_w, l.lead - l.pad_w + l.off_w + round_up(c.L_w, 16) + c.k_w - 1),
                        16);
    dy_pad.prepare(1, c.C_out, c.m_h + 2 * l.pad_h, l.stride, c.m_h, c.m_w, l.pad_h, l.lead);
    return l;
}

}  // namespace

bool direct_convolution::cpu_supported() {
#ifdef DISTDL_DIRECT_X86
    static const bool has_avx512 = __builtin_cpu_supports("avx512f");
    return has_avx512;
#else
    return false;
#endif
}

bool direct_convolution::supports(const conv_geometry& g) {
    if (g.kernel_size.size() > 2) return false;
    for (std::size_t e = 0; e < g.kernel_size.size(); ++e)
        if (g.stride[e] != 1 || g.dilation[e] != 1) return false;
    return cpu_supported();
}

const char* direct_convolution::isa() { return "avx512"; }

direct_convolution::direct_convolution(const conv_geometry& g)
    : g_(g) {}

void direct_convolution::padded_image::prepare(idx n, idx c, idx r, idx s, idx h, idx w, idx ph, idx ld) {
    if (n == images && c == channels && r == rows && s == stride && h == height && w == width && ph == pad_h &&
        ld == lead)
        return;
    images = n, channels = c, rows = r, stride = s, height = h, width = w, pad_h = ph, lead = ld;
    data.resize(std::size_t(n * c * r * s));  // the padding stays zero from here on
}

void direct_convolution::aligned_floats::resize(std::size_t n) {
    storage_.assign(n + 15, 0.0f);
    const auto address = reinterpret_cast<std::uintptr_t>(storage_.data());
    start_ = storage_.data() + (((64 - address % 64) % 64) / sizeof(float));
}

idx direct_convolution::padded_image::fill_up_to(idx n, const float* image, idx r0, idx r1, const x_patch* patch) {
    if (width == 0) return r1;
    float* slot = slot_data(n);
    const bool patched_image = patch && n >= patch->n0 && n < patch->n0 + patch->images;
    for (idx c = 0; c < channels; ++c)
        for (idx r = r0; r < r1; ++r) {
            float* to = slot + c * plane() + (r + pad_h) * stride + lead;
            const float* from = image + (c * height + r) * width;
            const bool patched = patched_image && c >= patch->c0 && c < patch->c0 + patch->channels &&
                                 r >= patch->row0 && r < patch->row0 + patch->rows && patch->cols > 0;
            if (!patched) {
                std::memcpy(to, from, std::size_t(width) * sizeof(float));
                continue;
            }
            const idx end = patch->col0 + patch->cols;
            std::memcpy(to, from, std::size_t(patch->col0) * sizeof(float));
            std::memcpy(to + patch->col0,
                        patch->source + (n - patch->n0) * patch->image + (c - patch->c0) * patch->plane +
                            (r - patch->row0) * patch->stride,
                        std::size_t(patch->cols) * sizeof(float));
            std::memcpy(to + end, from + end, std::size_t(width - end) * sizeof(float));
        }
    return r1;
}

bool direct_convolution::holds_input(const shape_t& x_shape, const float* x) const {
    return x_held_ && x_held_shape_ == x_shape && (x == nullptr ? x_held_from_forward_ : x == x_held_address_);
}

void direct_convolution::forward(const shape_t& x_shape, const float* x, const float* w, const float* b, float* y,
                                 const x_patch* patch) {
    const plane_problem c = lift_to_plane(g_, x_shape);
    pack_weights(w, c.C_out, c.C_in, c.k_h * c.k_w, false, packed_);
    image_pass p{nullptr, c.L_h * c.L_w, c.L_w, c.C_in, c.C_out, c.m_h, c.m_w, c.k_h, c.k_w, packed_.data(), b, nullptr};
    p.out_plane = c.m_h * c.m_w, p.out_stride = c.m_w;
    x_held_ = false;
    p.in_stride = prepare_padded_x(x_pad_, c), p.in_plane = x_pad_.plane();
    const idx band = band_rows((c.C_in * p.in_stride + c.C_out * c.m_w) * idx(sizeof(float)));
    for (idx n = 0; n < c.N; ++n) {
        const float* image = x + n * c.C_in * c.L_h * c.L_w;
        p.in = x_pad_.slot_data(n);
        p.out = y + n * c.C_out * c.m_h * c.m_w;
        idx filled = 0;  // rows of x in the padded copy
        for (idx i0 = 0; i0 < c.m_h; i0 += band) {
            const idx i1 = std::min(c.m_h, i0 + band);
            filled = x_pad_.fill_up_to(n, image, filled, x_rows_read(c, i1), patch);
            forward_rows(p, i0, i1);
        }
        x_pad_.fill_up_to(n, image, filled, c.L_h, patch);  // the whole image, for the backward
    }
    x_held_ = true, x_held_from_forward_ = true, x_held_shape_ = x_shape, x_held_address_ = x;
}

void direct_convolution::backward_data(const shape_t& x_shape, const float* dy, const float* w, float* dx) {
    passes(x_shape, nullptr, dy, w, dx, nullptr, nullptr, true, false, false, nullptr);
}

void direct_convolution::backward_weights(const shape_t& x_shape, const float* x, const float* dy, float* dw,
                                          float* db) {
    passes(x_shape, x, dy, nullptr, nullptr, dw, db, false, true, false, nullptr);
}

void direct_convolution::backward(const shape_t& x_shape, const float* x, const float* dy, const float* w, float* dx,
                                  float* dw, float* db, bool reuse_x, const dx_redirect* redirect) {
    passes(x_shape, x, dy, w, dx, dw, db, dx != nullptr, true, reuse_x, redirect);
}

void direct_convolution::passes(const shape_t& x_shape, const float* x, const float* dy, const float* w, float* dx,
                                float* dw, float* db, bool data_pass, bool weights, bool reuse_x,
                                const dx_redirect* redirect) {
    const plane_problem c = lift_to_plane(g_, x_shape);
    const idx taps = c.k_h * c.k_w;
    const padded_dy_layout l = prepare_padded_dy(dy_pad_, c);
    const float* dy_data = dy_pad_.data.data() + l.pad_h * l.stride + l.lead;  // dy(0, 0) of channel 0

    // Backward data: the forward kernel on the padded dy with the flipped, transposed weights.
    image_pass p{dy_pad_.data.data() + l.off_h * l.stride + (l.lead - l.pad_w) + l.off_w,
                 dy_pad_.plane(),
                 l.stride,
                 c.C_out,
                 c.C_in,
                 c.L_h,
                 c.L_w,
                 c.k_h,
                 c.k_w,
                 nullptr,
                 nullptr,
                 nullptr};
    p.out_plane = c.L_h * c.L_w, p.out_stride = c.L_w;
    if (data_pass) {
        pack_weights(w, c.C_out, c.C_in, taps, true, packed_);
        p.packed = packed_.data();
        if (redirect && redirect->rows > 0 && redirect->cols > 0) p.redirect = redirect;
    }

    // Backward weights: x's padded copy (the forward's, when it holds this x), then the partial
    // sums of the weights and of the bias.
    weights_pass a{};
    float* bias_sums = nullptr;
    bool refill_x = false;
    if (weights) {
        DISTDL_REQUIRE(x != nullptr || c.C_in == 0 || holds_input(x_shape, x),
                       "kernels::convolution::backward_last: the copy of the last forward's input was replaced since "
                       "by a backward or backward_weights with another x; pass that x to backward(x, ...)");
        if (c.C_in > 0 && !(reuse_x && holds_input(x_shape, x))) {
            refill_x = true;
            prepare_padded_x(x_pad_, c);
            x_held_ = false;
        }
        partial_sums_.resize(std::size_t((c.C_in * taps + 1) * c.C_out * 16));
        bias_sums = db ? partial_sums_.data() + c.C_in * taps * c.C_out * 16 : nullptr;
        a = weights_pass{nullptr, x_pad_.plane(), padded_x_stride(c), dy_data, dy_pad_.plane(), l.stride,
                         c.C_in,  c.C_out,        c.m_h,              c.m_w,   c.k_h,           c.k_w,
                         partial_sums_.data()};
    }

    const idx band = band_rows((c.C_out * l.stride + c.C_in * (c.L_w + a.in_stride)) * idx(sizeof(float)));
    for (idx n = 0; n < c.N; ++n) {
        const float* image = x ? x + n * c.C_in * c.L_h * c.L_w : nullptr;
        if (data_pass) p.out = dx + n * c.C_in * c.L_h * c.L_w;
        if (p.redirect) p.redirect_target = redirect->target + n * redirect->image;
        const bool weights_here = weights && c.C_in > 0;
        if (weights_here) a.in = x_pad_.slot_data(n);
        idx dx_done = 0, filled = 0;  // rows of dx computed, rows of x in the padded copy
        for (idx i0 = 0; i0 < c.m_h; i0 += band) {
            const idx i1 = std::min(c.m_h, i0 + band);
            copy_rows(dy + n * c.C_out * c.m_h * c.m_w, c.C_out, c.m_h, i0, i1, c.m_w, l.stride, dy_pad_.plane(),
                      dy_pad_.data.data() + l.pad_h * l.stride + l.lead, bias_sums);
            // dx row r reads dy rows up to r + p_h (the rows of dy below are not copied yet).
            const idx dx_end = i1 == c.m_h ? c.L_h : std::clamp(i1 - c.p_h, dx_done, c.L_h);
            if (data_pass) forward_rows(p, dx_done, dx_end);
            dx_done = dx_end;
            if (refill_x) filled = x_pad_.fill_up_to(n, image, filled, x_rows_read(c, i1));
            if (weights_here) weights_rows(a, i0, i1);
        }
        if (data_pass) forward_rows(p, dx_done, c.L_h);  // only without rows of dy (m_h = 0): dx is zero
        if (refill_x) x_pad_.fill_up_to(n, image, filled, c.L_h);
    }
    if (refill_x) x_held_ = true, x_held_from_forward_ = false, x_held_shape_ = x_shape, x_held_address_ = x;
    if (!weights) return;

    for (idx ci = 0; ci < c.C_in; ++ci)
        for (idx t = 0; t < taps; ++t)
            for (idx o = 0; o < c.C_out; ++o) {
                const float* lanes = partial_sums_.data() + ((ci * taps + t) * c.C_out + o) * 16;
                float sum = 0;
                for (int l16 = 0; l16 < 16; ++l16) sum += lanes[l16];
                dw[(o * c.C_in + ci) * taps + t] += sum;
            }
    if (db)
        for (idx o = 0; o < c.C_out; ++o) {
            float sum = 0;
            for (int l16 = 0; l16 < 16; ++l16) sum += bias_sums[16 * o + l16];
            db[o] += sum;
        }
}

}  // namespace distdl::kernels::detail
