#pragma once
// Serial meaning of the Linear (affine) layer, as obvious loop nests (the oracle):
//   y = x W^T + b        x: batch x in_features, W: out_features x in_features, b: out_features
//   y[n][o] = b[o] + sum_i x[n][i] W[o][i]
// and the adjoints of its Jacobian for an output gradient dy (batch x out_features):
//   dx = dy W            dx[n][i] = sum_o dy[n][o] W[o][i]
//   dW = dy^T x          dW[o][i] = sum_n dy[n][o] x[n][i]
//   db = sum_batch dy    db[o]    = sum_n dy[n][o]
// Sums run in increasing index order and accumulate in T.
#include "core/tensor.hpp"

namespace distdl::ref {

// Without bias (y = x W^T); shapes are checked (distdl::invalid_argument naming them).
template <class T>
tensor<T> linear(const tensor<T>& x, const tensor<T>& W);
template <class T>
tensor<T> linear(const tensor<T>& x, const tensor<T>& W, const tensor<T>& b);

template <class T>
tensor<T> linear_adjoint_input(const tensor<T>& dy, const tensor<T>& W);
template <class T>
tensor<T> linear_adjoint_weight(const tensor<T>& dy, const tensor<T>& x);
template <class T>
tensor<T> linear_adjoint_bias(const tensor<T>& dy);

}  // namespace distdl::ref
