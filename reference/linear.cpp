#include "reference/linear.hpp"

#include "core/error.hpp"

namespace distdl::ref {

namespace {

template <class T>
void require_matrix(const tensor<T>& t, const char* what) {
    DISTDL_REQUIRE(t.dimension() == 2, "ref::linear: " << what << " must be a matrix, got shape " << format_list(shape_of(t)));
}

}  // namespace

template <class T>
tensor<T> linear(const tensor<T>& x, const tensor<T>& W) {
    require_matrix(x, "x");
    require_matrix(W, "W");
    const std::size_t batch = x.shape()[0], in = x.shape()[1], out = W.shape()[0];
    DISTDL_REQUIRE(W.shape()[1] == in, "ref::linear: W of shape " << format_list(shape_of(W)) << " does not take x of shape "
                                                                  << format_list(shape_of(x)));
    tensor<T> y(shape_t{batch, out});
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t o = 0; o < out; ++o) {
            T sum = 0;
            for (std::size_t i = 0; i < in; ++i) sum += x(n, i) * W(o, i);
            y(n, o) = sum;
        }
    return y;
}

template <class T>
tensor<T> linear(const tensor<T>& x, const tensor<T>& W, const tensor<T>& b) {
    DISTDL_REQUIRE(b.dimension() == 1 && W.dimension() == 2 && b.shape()[0] == W.shape()[0],
                   "ref::linear: bias of shape " << format_list(shape_of(b)) << " does not fit W of shape "
                                                 << format_list(shape_of(W)));
    tensor<T> y = linear(x, W);
    for (std::size_t n = 0; n < y.shape()[0]; ++n)
        for (std::size_t o = 0; o < y.shape()[1]; ++o) y(n, o) = b(o) + y(n, o);
    return y;
}

template <class T>
tensor<T> linear_adjoint_input(const tensor<T>& dy, const tensor<T>& W) {
    require_matrix(dy, "dy");
    require_matrix(W, "W");
    const std::size_t batch = dy.shape()[0], out = dy.shape()[1], in = W.shape()[1];
    DISTDL_REQUIRE(W.shape()[0] == out, "ref::linear_adjoint_input: dy of shape " << format_list(shape_of(dy))
                                                                                   << " does not fit W of shape "
                                                                                   << format_list(shape_of(W)));
    tensor<T> dx(shape_t{batch, in});
    for (std::size_t n = 0; n < batch; ++n)
        for (std::size_t i = 0; i < in; ++i) {
            T sum = 0;
            for (std::size_t o = 0; o < out; ++o) sum += dy(n, o) * W(o, i);
            dx(n, i) = sum;
        }
    return dx;
}

template <class T>
tensor<T> linear_adjoint_weight(const tensor<T>& dy, const tensor<T>& x) {
    require_matrix(dy, "dy");
    require_matrix(x, "x");
    const std::size_t batch = dy.shape()[0], out = dy.shape()[1], in = x.shape()[1];
    DISTDL_REQUIRE(x.shape()[0] == batch, "ref::linear_adjoint_weight: dy of shape " << format_list(shape_of(dy))
                                                                                     << " and x of shape "
                                                                                     << format_list(shape_of(x))
                                                                                     << " differ in batch");
    tensor<T> dW(shape_t{out, in});
    for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) {
            T sum = 0;
            for (std::size_t n = 0; n < batch; ++n) sum += dy(n, o) * x(n, i);
            dW(o, i) = sum;
        }
    return dW;
}

template <class T>
tensor<T> linear_adjoint_bias(const tensor<T>& dy) {
    require_matrix(dy, "dy");
    const std::size_t batch = dy.shape()[0], out = dy.shape()[1];
    tensor<T> db(shape_t{out});
    for (std::size_t o = 0; o < out; ++o) {
        T sum = 0;
        for (std::size_t n = 0; n < batch; ++n) sum += dy(n, o);
        db(o) = sum;
    }
    return db;
}

#define DISTDL_REF_LINEAR_INSTANTIATE(T)                                                \
    template tensor<T> linear<T>(const tensor<T>&, const tensor<T>&);                   \
    template tensor<T> linear<T>(const tensor<T>&, const tensor<T>&, const tensor<T>&); \
    template tensor<T> linear_adjoint_input<T>(const tensor<T>&, const tensor<T>&);     \
    template tensor<T> linear_adjoint_weight<T>(const tensor<T>&, const tensor<T>&);    \
    template tensor<T> linear_adjoint_bias<T>(const tensor<T>&);

DISTDL_REF_LINEAR_INSTANTIATE(float)
DISTDL_REF_LINEAR_INSTANTIATE(double)

#undef DISTDL_REF_LINEAR_INSTANTIATE

}  // namespace distdl::ref
