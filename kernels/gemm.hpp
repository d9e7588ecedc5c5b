#pragma once
// Local matrix product on one worker through BLAS (OpenBLAS cblas_sgemm / cblas_dgemm):
//   C = alpha * op(A) * op(B) + beta * C        op(M) = M or M^T
// with row-major operands, C m x n, op(A) m x k, op(B) k x n. The output is written into the
// caller's preallocated storage (nothing is allocated per call); beta = 1 accumulates (the
// parameter gradients of a layer). Empty extents are fine: m = 0 or n = 0 does nothing, k = 0
// scales C by beta (C = 0 for beta = 0, whatever C held, NaN included).
// OpenBLAS runs single-threaded: each worker of a distributed run is one thread or process.
#include <cstddef>

#include "core/tensor.hpp"

namespace distdl::kernels {

enum class transpose : bool { no = false, yes = true };

// Raw form: leading dimensions are the row strides of A, B and C as stored (row-major).
template <class T>
void gemm(transpose trans_a, transpose trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a,
          std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc);

// Tensor form: A, B matrices (rank 2); C must already have shape m x n (checked, never
// reshaped, so a caller's buffer is reused as it is).
template <class T>
void gemm(transpose trans_a, transpose trans_b, T alpha, const tensor<T>& a, const tensor<T>& b, T beta, tensor<T>& c);

}  // namespace distdl::kernels
