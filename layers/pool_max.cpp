#include "layers/pool_max.hpp"

#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "layers/detail/idle_call.hpp"

namespace distdl {

template <class T>
distributed_max_pool<T>::distributed_max_pool(const cartesian_partition& P_x,
                                              pool_options options)
    : window_("MaxPool", P_x, options, true), kernel_(window_.local_geometry()) {
    this->set_partitions(&P_x, &P_x);
}

template <class T>
distributed_max_pool<T>::~distributed_max_pool() = default;

template <class T>
void distributed_max_pool<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    forward_done_ = false;
    if (!window_.active()) {
        idle_call(window_.partition(), name(), x, y, "an input");
        forward_done_ = true;
        return;
    }
    window_.gather(x);  // throws on every worker of P_x when a piece is wrong
    const shape_t& out = window_.output_shape();
    detail::prepare_output(y, out);
    argmax_.resize(y.size());
    // The maxima are saved (as positions in x or in the rim buffer), so the adjoint needs
    // neither x nor a copy of it. Padding is never a maximum (the kernels clip it).
    kernel_.forward_box(x.data(), window_.piece_shape(), window_.interior(), y.data(), out, argmax_.data(),
                        window_.sides());
    for (const auto& slab : window_.rim())
        kernel_.forward_box(window_.rim_buffer(), window_.rim_shape(), slab, y.data(), out, argmax_.data());
    forward_done_ = true;
}

template <class T>
void distributed_max_pool<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    if (!window_.active()) return idle_call(window_.partition(), name(), dy, dx, "an output gradient");
    // Forward succeeds or fails on every worker of P_x alike, so all of them stop here together.
    DISTDL_REQUIRE(forward_done_, name() << ": adjoint() needs a successful forward() first (the gradient goes to "
                                            "the maxima of that input)");
    const std::string problem = window_.shape_problem(dy, window_.output_shape(), "an output gradient");
    const shape_t& out = window_.output_shape();
    detail::prepare_output(dx, window_.piece_shape());
    if (problem.empty()) {
        kernel_.backward_box(argmax_.data(), dy.data(), out, window_.interior(), dx.data(), window_.piece_shape(),
                             window_.side_gradients(), kernels::pool_dx::overwrite);
        if (!window_.direct()) {
            T* rim_gradient = window_.rim_gradient();
            for (const auto& slab : window_.rim())
                kernel_.backward_box(argmax_.data(), dy.data(), out, slab, rim_gradient, window_.rim_shape());
        }
    }
    window_.scatter(problem, dx);  // throws on every worker of P_x when any dy is wrong
}

template class distributed_max_pool<float>;
template class distributed_max_pool<double>;

}  // namespace distdl
