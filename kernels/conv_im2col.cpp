#include "kernels/conv_im2col.hpp"

#include <algorithm>
#include <cstring>

#include <cblas.h>

namespace distdl::kernels::detail {

namespace {

constexpr std::int64_t tile_bytes = 512 * 1024;

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, std::int64_t m, std::int64_t n, std::int64_t k, float beta,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c, std::int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, std::int64_t m, std::int64_t n, std::int64_t k, double beta,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), beta, c, int(ldc));
}

// Output positions per tile: the tile of K rows stays within tile_bytes.
template <class T>
std::int64_t tile_width(std::int64_t K, std::int64_t M) {
    const std::int64_t t = std::max<std::int64_t>(1, tile_bytes / (K * std::int64_t(sizeof(T))));
    return std::min(t, M);
}

// Calls body(n, q0, width) for every tile of `width` output positions from q0 on of every image
// n, after sizing `col` for one tile of K rows.
template <class T, class Body>
void for_each_tile(const conv_problem& c, std::int64_t K, std::vector<T>& col, Body&& body) {
    const std::int64_t M = c.out_volume(), t = tile_width<T>(K, M);
    col.resize(std::size_t(K * t));
    for (std::int64_t n = 0; n < c.N; ++n)
        for (std::int64_t q0 = 0; q0 < M; q0 += t) body(n, q0, std::min(t, M - q0));
}

// For kernel offset `off` = d·t − p along the innermost dimension: the output indices j with
// 0 <= s·j + off < L form [lo, hi).
void valid_range(std::int64_t off, std::int64_t s, std::int64_t L, std::int64_t m, std::int64_t& lo,
                 std::int64_t& hi) {
    lo = off >= 0 ? 0 : (-off + s - 1) / s;
    hi = L - 1 - off < 0 ? 0 : (L - 1 - off) / s + 1;
    lo = std::min(lo, m);
    hi = std::min(std::max(hi, lo), m);
}

// Walks the rows r = (ci, t0, t1, t2) and, for output positions [q0, q0 + width), the runs of
// consecutive j2 that share (j0, j1): calls run(r, t2, pos, input_row_or_null, j2_begin, j2_end),
// where input_row is the input row (n fixed by the caller's base pointer) at (ci, i0, i1), or
// null when (i0, i1) falls into the padding.
template <class Base, class Run>
void for_each_run(const conv_problem& c, Base* x, std::int64_t q0, std::int64_t width, Run&& run) {
    const std::int64_t V = c.in_volume();
    std::int64_t r = 0;
    for (std::int64_t ci = 0; ci < c.C_in; ++ci)
        for (std::int64_t t0 = 0; t0 < c.k[0]; ++t0)
            for (std::int64_t t1 = 0; t1 < c.k[1]; ++t1)
                for (std::int64_t t2 = 0; t2 < c.k[2]; ++t2, ++r) {
                    const std::int64_t off0 = c.d[0] * t0 - c.p[0], off1 = c.d[1] * t1 - c.p[1];
                    std::int64_t j2 = q0 % c.m[2], j1 = (q0 / c.m[2]) % c.m[1], j0 = q0 / (c.m[2] * c.m[1]);
                    std::int64_t pos = 0;
                    while (pos < width) {
                        const std::int64_t len = std::min(c.m[2] - j2, width - pos);
                        const std::int64_t i0 = c.s[0] * j0 + off0, i1 = c.s[1] * j1 + off1;
                        Base* row = (i0 >= 0 && i0 < c.L[0] && i1 >= 0 && i1 < c.L[1])
                                        ? x + ci * V + (i0 * c.L[1] + i1) * c.L[2]
                                        : nullptr;
                        run(r, t2, pos, row, j2, j2 + len);
                        pos += len;
                        j2 = 0;
                        if (++j1 == c.m[1]) {
                            j1 = 0;
                            ++j0;
                        }
                    }
                }
}

// col[r, pos…] = x_padded values for tile [q0, q0 + width) (col is K × width).
template <class T>
void im2col(const conv_problem& c, const T* x, std::int64_t q0, std::int64_t width, T* col) {
    for_each_run(c, x, q0, width,
                 [&](std::int64_t r, std::int64_t t2, std::int64_t pos, const T* row, std::int64_t jb,
                     std::int64_t je) {
                     T* out = col + r * width + pos - jb;  // out[j2] for j2 in [jb, je)
                     if (!row) {
                         std::fill(out + jb, out + je, T(0));
                         return;
                     }
                     const std::int64_t off = c.d[2] * t2 - c.p[2];
                     std::int64_t lo, hi;
                     valid_range(off, c.s[2], c.L[2], c.m[2], lo, hi);
                     lo = std::clamp(lo, jb, je);
                     hi = std::clamp(hi, lo, je);
                     std::fill(out + jb, out + lo, T(0));
                     if (c.s[2] == 1) std::memcpy(out + lo, row + lo + off, std::size_t(hi - lo) * sizeof(T));
                     else
                         for (std::int64_t j = lo; j < hi; ++j) out[j] = row[c.s[2] * j + off];
                     std::fill(out + hi, out + je, T(0));
                 });
}

// x_padded values (inside x) += col[r, pos…] for tile [q0, q0 + width).
template <class T>
void col2im_add(const conv_problem& c, const T* col, std::int64_t q0, std::int64_t width, T* x) {
    for_each_run(c, x, q0, width,
                 [&](std::int64_t r, std::int64_t t2, std::int64_t pos, T* row, std::int64_t jb, std::int64_t je) {
                     if (!row) return;
                     const T* in = col + r * width + pos - jb;
                     const std::int64_t off = c.d[2] * t2 - c.p[2];
                     std::int64_t lo, hi;
                     valid_range(off, c.s[2], c.L[2], c.m[2], lo, hi);
                     lo = std::clamp(lo, jb, je);
                     hi = std::clamp(hi, lo, je);
                     for (std::int64_t j = lo; j < hi; ++j) row[c.s[2] * j + off] += in[j];
                 });
}

}  // namespace

template <class T>
void im2col_convolution<T>::forward(const conv_problem& c, const T* x, const T* w, const T* b, T* y) {
    const std::int64_t K = c.C_in * c.kernel_volume(), M = c.out_volume(), V = c.in_volume();
    for_each_tile(c, K, col_, [&](std::int64_t n, std::int64_t q0, std::int64_t width) {
        im2col(c, x + n * c.C_in * V, q0, width, col_.data());
        T* yt = y + n * c.C_out * M + q0;
        gemm(CblasNoTrans, CblasNoTrans, c.C_out, width, K, T(0), w, K, col_.data(), width, yt, M);
        if (b)
            for (std::int64_t co = 0; co < c.C_out; ++co)
                for (std::int64_t q = 0; q < width; ++q) yt[co * M + q] += b[co];
    });
}

template <class T>
void im2col_convolution<T>::backward_data(const conv_problem& c, const T* dy, const T* w, T* dx) {
    const std::int64_t Kv = c.kernel_volume(), M = c.out_volume(), V = c.in_volume();
    if (c.s[0] == 1 && c.s[1] == 1 && c.s[2] == 1) {
        // dx = forward convolution of dy with w'[ci, co, t] = w[co, ci, k−1−t], padding d(k−1) − p.
        flipped_.resize(std::size_t(c.C_in * c.C_out * Kv));
        for (std::int64_t co = 0; co < c.C_out; ++co)
            for (std::int64_t ci = 0; ci < c.C_in; ++ci) {
                const T* src = w + (co * c.C_in + ci) * Kv;
                T* dst = flipped_.data() + (ci * c.C_out + co) * Kv;
                for (std::int64_t t = 0; t < Kv; ++t) dst[t] = src[Kv - 1 - t];
            }
        conv_problem f = c;
        f.C_in = c.C_out;
        f.C_out = c.C_in;
        f.L = c.m;
        f.m = c.L;
        for (int e = 0; e < 3; ++e) f.p[e] = c.d[e] * (c.k[e] - 1) - c.p[e];
        if (f.C_in == 0) {
            std::fill(dx, dx + c.N * c.C_in * V, T(0));
            return;
        }
        forward(f, dy, flipped_.data(), nullptr, dx);
        return;
    }
    const std::int64_t K = c.C_in * Kv;
    std::fill(dx, dx + c.N * c.C_in * V, T(0));
    if (c.C_out == 0) return;
    for_each_tile(c, K, col_, [&](std::int64_t n, std::int64_t q0, std::int64_t width) {
        gemm(CblasTrans, CblasNoTrans, K, width, c.C_out, T(0), w, K, dy + n * c.C_out * M + q0, M, col_.data(),
             width);
        col2im_add(c, col_.data(), q0, width, dx + n * c.C_in * V);
    });
}

template <class T>
void im2col_convolution<T>::backward_weights(const conv_problem& c, const T* x, const T* dy, T* dw, T* db) {
    const std::int64_t K = c.C_in * c.kernel_volume(), M = c.out_volume(), V = c.in_volume();
    if (db)
        for (std::int64_t n = 0; n < c.N; ++n)
            for (std::int64_t co = 0; co < c.C_out; ++co) {
                const T* row = dy + (n * c.C_out + co) * M;
                double sum = 0;  // long sums of float: accumulate in double
                for (std::int64_t q = 0; q < M; ++q) sum += row[q];
                db[co] += T(sum);
            }
    if (K == 0 || c.C_out == 0) return;
    for_each_tile(c, K, col_, [&](std::int64_t n, std::int64_t q0, std::int64_t width) {
        im2col(c, x + n * c.C_in * V, q0, width, col_.data());
        gemm(CblasNoTrans, CblasTrans, c.C_out, K, width, T(1), dy + n * c.C_out * M + q0, M, col_.data(), width, dw, K);
    });
}

template class im2col_convolution<float>;
template class im2col_convolution<double>;

}  // namespace distdl::kernels::detail
