#include "reference/flatten.hpp"

#include "core/decomposition.hpp"
#include "core/error.hpp"

namespace distdl::ref {

namespace {

std::size_t features_of(const shape_t& x_shape) {
    std::size_t f = 1;
    for (std::size_t d = 1; d < x_shape.size(); ++d) f *= x_shape[d];
    return f;
}

// Calls visit(n, f, i) for every element: its batch index, flat feature index and index in x.
template <class Visit>
void for_each_element(const shape_t& x_shape, const Visit& visit) {
    const shape_t features(x_shape.begin() + 1, x_shape.end());
    const std::size_t count = features_of(x_shape);
    for (std::size_t n = 0; n < x_shape[0]; ++n)
        for (std::size_t f = 0; f < count; ++f) {
            shape_t at{n};
            const shape_t inner = unravel_index(f, features);
            at.insert(at.end(), inner.begin(), inner.end());
            visit(n, f, at);
        }
}

}  // namespace

template <class T>
tensor<T> flatten(const tensor<T>& x) {
    const shape_t x_shape = shape_of(x);
    DISTDL_REQUIRE(!x_shape.empty(), "ref::flatten: x needs a batch dimension, got a scalar");
    tensor<T> y(shape_t{x_shape[0], features_of(x_shape)});
    for_each_element(x_shape, [&](std::size_t n, std::size_t f, const shape_t& at) {
        y(n, f) = x.element(at.begin(), at.end());
    });
    return y;
}

template <class T>
tensor<T> flatten_adjoint(const tensor<T>& dy, const shape_t& x_shape) {
    DISTDL_REQUIRE(!x_shape.empty() && shape_of(dy) == shape_t({x_shape[0], features_of(x_shape)}),
                   "ref::flatten_adjoint: dy has shape " << format_list(shape_of(dy)) << ", not the flat shape of "
                                                          << format_list(x_shape));
    tensor<T> dx(x_shape);
    for_each_element(x_shape, [&](std::size_t n, std::size_t f, const shape_t& at) {
        dx.element(at.begin(), at.end()) = dy(n, f);
    });
    return dx;
}

template tensor<float> flatten(const tensor<float>&);
template tensor<double> flatten(const tensor<double>&);
template tensor<float> flatten_adjoint(const tensor<float>&, const shape_t&);
template tensor<double> flatten_adjoint(const tensor<double>&, const shape_t&);

}  // namespace distdl::ref
