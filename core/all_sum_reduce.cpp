#include "core/all_sum_reduce.hpp"

#include "core/detail/argument_agreement.hpp"
#include "core/detail/team_collectives.hpp"

namespace distdl {

// One team per combination of indices outside the reduced axes (spec 001); the partition code
// rejects axes out of range or repeated, identically on every worker.
template <class T>
struct all_sum_reduce<T>::state {
    partition team;
    std::shared_ptr<communicator> world;
    detail::team_scratch<T> forward_scratch, adjoint_scratch;
};

namespace {

// Checked here for a message that names the layer; every worker sees the same shapes.
const std::vector<std::size_t>& checked_axes(const cartesian_partition& P_x, const std::vector<std::size_t>& axes) {
    std::vector<bool> seen(P_x.dim(), false);
    for (auto a : axes) {
        DISTDL_REQUIRE_AS(a < P_x.dim(), partition_error,
                          "AllSumReduce: axis " << a << " out of range for P_x shape " << format_list(P_x.shape()));
        DISTDL_REQUIRE_AS(!seen[a], partition_error,
                          "AllSumReduce: axis " << a << " repeated in axes_reduce " << format_list(axes));
        seen[a] = true;
    }
    return axes;
}

}  // namespace

template <class T>
all_sum_reduce<T>::all_sum_reduce(const cartesian_partition& P_x, std::vector<std::size_t> axes_reduce) {
    // Before the axes are checked and the teams built, both of which must happen everywhere alike.
    detail::argument_agreement("AllSumReduce")
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("axes_reduce", axes_reduce)
        .require(*P_x.world_comm());
    state_ = std::make_unique<state>(
        state{P_x.create_allreduction_partition(checked_axes(P_x, axes_reduce)), P_x.world_comm(), {}, {}});
    this->set_partitions(&P_x, &P_x);
}

template <class T>
all_sum_reduce<T>::~all_sum_reduce() = default;

template <class T>
void all_sum_reduce<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    traffic_scope scope(state_->world->traffic(), "all_sum_reduce");
    detail::all_sum(state_->team, x, y, "AllSumReduce", state_->forward_scratch);
}

// Self-adjoint: the sum over a team, handed to every member, is a symmetric operator.
template <class T>
void all_sum_reduce<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    traffic_scope scope(state_->world->traffic(), "all_sum_reduce");
    detail::all_sum(state_->team, dy, dx, "AllSumReduce", state_->adjoint_scratch);
}

template class all_sum_reduce<float>;
template class all_sum_reduce<double>;

}  // namespace distdl
