#include "layers/pool_max.hpp"

#include <limits>

#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "layers/detail/pool_idle.hpp"

namespace distdl {

template <class T>
distributed_max_pool<T>::distributed_max_pool(const cartesian_partition& P_x, shape_t global_shape,
                                              pool_options options)
    : window_("MaxPool", P_x, std::move(global_shape), options, true), kernel_(window_.local_geometry()) {}

template <class T>
distributed_max_pool<T>::~distributed_max_pool() = default;

template <class T>
void distributed_max_pool<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    forward_done_ = false;
    point_ = nullptr;
    if (!window_.active()) {
        pool_idle_call(window_.partition(), name(), x, y, "an input");
        forward_done_ = true;
        return;
    }
    // Boundary padding is −∞ (as the reference): a zero would beat an all-negative window.
    const tensor<T>& in = window_.gather(x, -std::numeric_limits<T>::infinity());
    if (window_.direct()) {
        detail::copy_into(x, saved_);  // the caller may change x before the adjoint
        point_ = &saved_;
    } else {
        point_ = &in;
    }
    if (window_.computes()) kernel_.forward(in, y);
    else detail::prepare_output(y, window_.output_shape());  // an empty block
    forward_done_ = true;
}

template <class T>
void distributed_max_pool<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    if (!window_.active()) return pool_idle_call(window_.partition(), name(), dy, dx, "an output gradient");
    // Forward succeeds or fails on every worker of P_x alike, so all of them stop here together.
    DISTDL_REQUIRE(forward_done_, name() << ": adjoint() needs a successful forward() first (the gradient goes to "
                                            "the maxima of that input)");
    window_.agree(window_.shape_problem(dy, window_.output_shape(), "an output gradient"));
    tensor<T>& target = window_.direct() ? dx : dwindow_;
    if (window_.computes()) kernel_.backward(*point_, dy, target);
    else detail::prepare_output(target, window_.window_shape());  // zero volume
    if (!window_.direct()) window_.scatter(dwindow_, dx);
}

template class distributed_max_pool<float>;
template class distributed_max_pool<double>;

}  // namespace distdl
