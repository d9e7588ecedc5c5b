#pragma once
// Serial meaning of Flatten on the whole tensor: x of shape [N, D_1, …, D_k] becomes
// y[n, f] = x[n, i_1, …, i_k] with f = ((i_1 · D_2 + i_2) · D_3 + …) the row-major index of the
// features. The adjoint puts every element back: dx[n, i_1, …, i_k] = dy[n, f]. Loops over the
// indices, independent of the layer's copy of the memory.
#include "core/tensor.hpp"

namespace distdl::ref {

// x needs at least one dimension (the batch); a 1-d x gives N × 1.
template <class T>
tensor<T> flatten(const tensor<T>& x);

// dy of shape [N, D_1 ⋯ D_k], x_shape [N, D_1, …, D_k].
template <class T>
tensor<T> flatten_adjoint(const tensor<T>& dy, const shape_t& x_shape);

}  // namespace distdl::ref
