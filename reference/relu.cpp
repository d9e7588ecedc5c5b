#include "reference/relu.hpp"

#include <cmath>

#include "core/error.hpp"

namespace distdl::ref {

template <class T>
tensor<T> relu(const tensor<T>& x) {
    tensor<T> y(shape_of(x));
    for (std::size_t i = 0; i < x.size(); ++i) {
        const T v = x.data()[i];
        y.data()[i] = std::isnan(v) || v >= T(0) ? v : T(0);
    }
    return y;
}

template <class T>
tensor<T> relu_adjoint(const tensor<T>& x, const tensor<T>& dy) {
    DISTDL_REQUIRE(shape_of(dy) == shape_of(x),
                   "ref::relu_adjoint: dy has shape " << format_list(shape_of(dy)) << ", x " << format_list(shape_of(x)));
    tensor<T> dx(shape_of(x));
    for (std::size_t i = 0; i < x.size(); ++i) dx.data()[i] = x.data()[i] > T(0) ? dy.data()[i] : T(0);
    return dx;
}

template tensor<float> relu(const tensor<float>&);
template tensor<double> relu(const tensor<double>&);
template tensor<float> relu_adjoint(const tensor<float>&, const tensor<float>&);
template tensor<double> relu_adjoint(const tensor<double>&, const tensor<double>&);

}  // namespace distdl::ref
