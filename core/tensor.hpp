#pragma once
// The only place that includes xtensor: every module names tensors through these aliases,
// so the tensor library can be swapped or configured in one spot.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/error.hpp"

#include <xtensor/xarray.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xio.hpp>
#include <xtensor/xnoalias.hpp>

namespace distdl {

// Row-major, dynamically ranked tensor: the local piece of a distributed tensor.
template <class T>
using tensor = xt::xarray<T, xt::layout_type::row_major>;

using shape_t = std::vector<std::size_t>;

// Number of elements of a shape (1 for rank 0); a product beyond std::size_t is an error,
// never a wrapped-around count.
inline std::size_t volume(const shape_t& shape) {
    std::size_t v = 1;
    for (auto s : shape)
        DISTDL_REQUIRE(!__builtin_mul_overflow(v, s, &v), "shape " << format_list(shape) << " has more elements than "
                                                                       "std::size_t can count");
    return v;
}

template <class T>
shape_t shape_of(const tensor<T>& t) {
    return shape_t(t.shape().begin(), t.shape().end());
}

// shape_of(t) == shape without making a shape_t (steady-state calls compare on every call).
template <class T>
bool has_shape(const tensor<T>& t, const shape_t& shape) {
    return t.dimension() == shape.size() && std::equal(shape.begin(), shape.end(), t.shape().begin());
}

// Zero-volume tensor of shape {0}, or {batch, 0} when a batch size is kept.
template <class T>
tensor<T> zero_volume(std::size_t batch = 0, bool keep_batch = false) {
    return keep_batch ? tensor<T>(shape_t{batch, 0}) : tensor<T>(shape_t{0});
}

}  // namespace distdl
