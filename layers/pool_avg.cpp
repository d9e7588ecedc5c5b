#include "layers/pool_avg.hpp"

#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "layers/detail/idle_call.hpp"

namespace distdl {

template <class T>
distributed_avg_pool<T>::distributed_avg_pool(const cartesian_partition& P_x,
                                              pool_options options)
    : window_("AvgPool", P_x, options, false), kernel_(window_.local_geometry()) {
    this->set_partitions(&P_x, &P_x);
}

template <class T>
distributed_avg_pool<T>::~distributed_avg_pool() = default;

template <class T>
void distributed_avg_pool<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    if (!window_.active()) return idle_call(window_.partition(), name(), x, y, "an input");
    window_.gather(x);  // throws on every worker of P_x when a piece is wrong
    const shape_t& out = window_.output_shape();
    detail::prepare_output(y, out);
    // Padding counts as 0 and in the divisor (the kernels clip it).
    kernel_.forward_box(x.data(), window_.piece_shape(), window_.interior(), y.data(), out,
                        window_.sides());
    for (const auto& slab : window_.rim())
        kernel_.forward_box(window_.rim_buffer(), window_.rim_shape(), slab, y.data(), out);
}

template <class T>
void distributed_avg_pool<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    if (!window_.active()) return idle_call(window_.partition(), name(), dy, dx, "an output gradient");
    // Planned or not alike on every worker of P_x (the shape is learnt by all of them together).
    DISTDL_REQUIRE(window_.planned(), name() << ": adjoint() needs a forward() first (the input shape is learnt there)");
    const std::string problem = window_.shape_problem(dy, window_.output_shape(), "an output gradient");
    const shape_t& out = window_.output_shape();
    detail::prepare_output(dx, window_.piece_shape());
    if (problem.empty()) {
        kernel_.backward_box(dy.data(), out, window_.interior(), dx.data(), window_.piece_shape(),
                             window_.side_gradients(), kernels::pool_dx::overwrite);
        if (!window_.direct()) {
            T* rim_gradient = window_.rim_gradient();
            for (const auto& slab : window_.rim())
                kernel_.backward_box(dy.data(), out, slab, rim_gradient, window_.rim_shape());
        }
    }
    window_.scatter(problem, dx);  // throws on every worker of P_x when any dy is wrong
}

template class distributed_avg_pool<float>;
template class distributed_avg_pool<double>;

}  // namespace distdl
