#include "layers/relu.hpp"

#include <vector>

#include "core/detail/argument_agreement.hpp"
#include "core/detail/output.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "layers/detail/gradient_shape.hpp"
#include "layers/detail/idle_call.hpp"

namespace distdl {

namespace {

constexpr const char* name = "ReLU";

}  // namespace

template <class T>
struct relu<T>::state {
    explicit state(const cartesian_partition& P) : P_x(P) {}
    cartesian_partition P_x;
    bool forward_done = false;
    shape_t x_shape;                     // this worker's piece at the last forward
    std::vector<unsigned char> positive;  // x > 0 there, element by element
};

template <class T>
relu<T>::relu(const cartesian_partition& P_x) : state_(std::make_unique<state>(P_x)) {
    detail::argument_agreement(name).element_type(dtype_of<T>()).list("P_x shape", P_x.shape()).require(
        *P_x.world_comm());
    this->set_partitions(&P_x, &P_x);
}

template <class T>
relu<T>::~relu() = default;

template <class T>
void relu<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    auto& st = *state_;
    st.forward_done = false;
    if (!st.P_x.active()) return idle_call(st.P_x, name, x, y, "an input");
    st.x_shape = shape_of(x);
    st.positive.resize(x.size());
    detail::prepare_output(y, st.x_shape);
    const T* in = x.data();
    T* out = y.data();
    for (std::size_t i = 0; i < x.size(); ++i) {
        st.positive[i] = in[i] > T(0);
        out[i] = in[i] < T(0) ? T(0) : in[i];  // NaN passes
    }
    st.forward_done = true;
}

template <class T>
void relu<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    auto& st = *state_;
    if (!st.P_x.active()) return idle_call(st.P_x, name, dy, dx, "an output gradient");
    DISTDL_REQUIRE(st.forward_done, name << ": adjoint() needs a successful forward() first (the gradient depends on "
                                            "its input)");
    require_gradient_shape(st.P_x, name, dy, st.x_shape, " (the last forward's x)");
    detail::prepare_output(dx, st.x_shape);
    const T* g = dy.data();
    T* out = dx.data();
    for (std::size_t i = 0; i < dy.size(); ++i) out[i] = st.positive[i] ? g[i] : T(0);
}

template class relu<float>;
template class relu<double>;

}  // namespace distdl
