#pragma once
// Internal: convolution passes through im2col/vol2col in column tiles plus BLAS GEMM, for
// float64 (oneDNN has none) and for the float32 passes where oneDNN only has its slow gemm
// path. Columns are built for a tile of output positions at a time (a tile of C_in·k1·k2·k3 ×
// t entries, 256 KiB–1 MiB), so the scratch stays in cache and no full column matrix exists.
//
//   forward           Y[co, q] = W[co, r] · col[r, q] (+ b[co])      r = (ci, t), q = output position
//   backward data     stride 1: a forward convolution of dy with flipped, transposed weights and
//                     padding d(k−1) − p; otherwise dcol = Wᵀ · dY, scattered back (col2im)
//   backward weights  dW[co, r] += dY[co, q] · col[r, q]ᵀ;  db[co] += Σ_q dY[co, q]
// Scratch lives in the object (reused across calls); one object serves one thread at a time.
#include <vector>

#include "kernels/conv_problem.hpp"

namespace distdl::kernels::detail {

template <class T>
class im2col_convolution {
  public:
    // y (overwritten) = w * x + b; b may be null. Requires C_in > 0.
    void forward(const conv_problem& c, const T* x, const T* w, const T* b, T* y);
    // dx (overwritten) = adjoint with respect to x.
    void backward_data(const conv_problem& c, const T* dy, const T* w, T* dx);
    // dw += adjoint with respect to w; db += adjoint with respect to b (db may be null).
    void backward_weights(const conv_problem& c, const T* x, const T* dy, T* dw, T* db);

  private:
    std::vector<T> col_;
    std::vector<T> flipped_;
};

}  // namespace distdl::kernels::detail
