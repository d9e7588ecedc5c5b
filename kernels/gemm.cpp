#include "kernels/gemm.hpp"

#include <climits>
#include <mutex>

#include <cblas.h>

#include "core/error.hpp"

namespace distdl::kernels {

namespace {

// Every worker is already a thread (simulator) or a process (MPI): BLAS threads on top of
// them would oversubscribe the cores.
void single_threaded_blas() {
    static std::once_flag once;
    std::call_once(once, [] { openblas_set_num_threads(1); });
}

blasint as_blas_int(std::size_t value, const char* what) {
    DISTDL_REQUIRE(value <= static_cast<std::size_t>(INT_MAX),
                   "gemm: " << what << " = " << value << " exceeds the BLAS integer range (" << INT_MAX << ")");
    return static_cast<blasint>(value);
}

CBLAS_TRANSPOSE flag(transpose t) { return t == transpose::yes ? CblasTrans : CblasNoTrans; }

void call(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, float alpha, const float* a,
          blasint lda, const float* b, blasint ldb, float beta, float* c, blasint ldc) {
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void call(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, double alpha, const double* a,
          blasint lda, const double* b, blasint ldb, double beta, double* c, blasint ldc) {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

template <class T>
void gemm(transpose trans_a, transpose trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a,
          std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    DISTDL_REQUIRE(ldc >= n, "gemm: ldc " << ldc << " < n " << n);
    if (k == 0 || alpha == T(0)) {
        // BLAS would read no operand; do the scaling here so empty operands need no valid pointers.
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
        return;
    }
    // Row-major: op(A) is m x k, stored as m x k (lda >= k) or, transposed, as k x m (lda >= m).
    const std::size_t a_cols = trans_a == transpose::yes ? m : k;
    const std::size_t b_cols = trans_b == transpose::yes ? k : n;
    DISTDL_REQUIRE(lda >= a_cols, "gemm: lda " << lda << " < " << a_cols);
    DISTDL_REQUIRE(ldb >= b_cols, "gemm: ldb " << ldb << " < " << b_cols);
    single_threaded_blas();
    call(flag(trans_a), flag(trans_b), as_blas_int(m, "m"), as_blas_int(n, "n"), as_blas_int(k, "k"), alpha, a,
         as_blas_int(lda, "lda"), b, as_blas_int(ldb, "ldb"), beta, c, as_blas_int(ldc, "ldc"));
}

template <class T>
void gemm(transpose trans_a, transpose trans_b, T alpha, const tensor<T>& a, const tensor<T>& b, T beta, tensor<T>& c) {
    DISTDL_REQUIRE(a.dimension() == 2 && b.dimension() == 2 && c.dimension() == 2,
                   "gemm: operands must be matrices, got A " << format_list(shape_of(a)) << ", B "
                                                             << format_list(shape_of(b)) << ", C "
                                                             << format_list(shape_of(c)));
    const bool ta = trans_a == transpose::yes, tb = trans_b == transpose::yes;
    const std::size_t m = ta ? a.shape()[1] : a.shape()[0];
    const std::size_t k = ta ? a.shape()[0] : a.shape()[1];
    const std::size_t kb = tb ? b.shape()[1] : b.shape()[0];
    const std::size_t n = tb ? b.shape()[0] : b.shape()[1];
    DISTDL_REQUIRE(k == kb && c.shape()[0] == m && c.shape()[1] == n,
                   "gemm: op(A) " << m << "x" << k << " times op(B) " << kb << "x" << n << " does not give C of shape "
                                  << format_list(shape_of(c)));
    gemm(trans_a, trans_b, m, n, k, alpha, a.data(), a.shape()[1], b.data(), b.shape()[1], beta, c.data(), n);
}

#define DISTDL_GEMM_INSTANTIATE(T)                                                                                  \
    template void gemm<T>(transpose, transpose, std::size_t, std::size_t, std::size_t, T, const T*, std::size_t,    \
                          const T*, std::size_t, T, T*, std::size_t);                                               \
    template void gemm<T>(transpose, transpose, T, const tensor<T>&, const tensor<T>&, T, tensor<T>&);

DISTDL_GEMM_INSTANTIATE(float)
DISTDL_GEMM_INSTANTIATE(double)

#undef DISTDL_GEMM_INSTANTIATE

}  // namespace distdl::kernels
