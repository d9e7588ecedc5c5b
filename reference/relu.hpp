#pragma once
// Serial meaning of ReLU on the whole tensor: y = x where x >= 0 or x is NaN, else 0; the
// adjoint at the point x: dx = dy where x > 0, else 0.
#include "core/tensor.hpp"

namespace distdl::ref {

template <class T>
tensor<T> relu(const tensor<T>& x);

// dy and x of one shape.
template <class T>
tensor<T> relu_adjoint(const tensor<T>& x, const tensor<T>& dy);

}  // namespace distdl::ref
