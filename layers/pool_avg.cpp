#include "layers/pool_avg.hpp"

#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "layers/detail/pool_idle.hpp"

namespace distdl {

template <class T>
distributed_avg_pool<T>::distributed_avg_pool(const cartesian_partition& P_x, shape_t global_shape,
                                              pool_options options)
    : window_("AvgPool", P_x, std::move(global_shape), options, false), kernel_(window_.local_geometry()) {}

template <class T>
distributed_avg_pool<T>::~distributed_avg_pool() = default;

template <class T>
void distributed_avg_pool<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    if (!window_.active()) return pool_idle_call(window_.partition(), name(), x, y, "an input");
    const tensor<T>& in = window_.gather(x, T(0));  // padding counts as 0 (and in the divisor)
    if (window_.computes()) kernel_.forward(in, y);
    else detail::prepare_output(y, window_.output_shape());  // an empty block
}

template <class T>
void distributed_avg_pool<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    if (!window_.active()) return pool_idle_call(window_.partition(), name(), dy, dx, "an output gradient");
    window_.agree(window_.shape_problem(dy, window_.output_shape(), "an output gradient"));
    tensor<T>& target = window_.direct() ? dx : dwindow_;
    if (window_.computes()) kernel_.backward(dy, window_.window_shape(), target);
    else detail::prepare_output(target, window_.window_shape());  // zero volume
    if (!window_.direct()) window_.scatter(dwindow_, dx);
}

template class distributed_avg_pool<float>;
template class distributed_avg_pool<double>;

}  // namespace distdl
