#pragma once
// Private helper of the primitives: outputs are written into the caller's tensor, whose
// storage is reused when it already has the shape (a steady-state loop maps no fresh pages).
#include <algorithm>

#include "core/tensor.hpp"

namespace distdl::detail {

// Gives `t` the shape `shape`; its elements are left as they were (reallocated only when
// the number of elements changes), so the caller must write every element.
template <class T>
void prepare_output(tensor<T>& t, const shape_t& shape) {
    if (!has_shape(t, shape)) t.resize(shape);
}

// t = x as a copy into t's storage (never an alias of x).
template <class T>
void copy_into(const tensor<T>& x, tensor<T>& t) {
    prepare_output(t, shape_of(x));
    std::copy(x.data(), x.data() + x.size(), t.data());
}

}  // namespace distdl::detail
