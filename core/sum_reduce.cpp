#include "core/sum_reduce.hpp"

#include "core/detail/pair_agreement.hpp"
#include "core/error.hpp"
#include "core/detail/team_collectives.hpp"

namespace distdl {

// The teams come from the partition code (one per worker of P_y, destination first); it also
// rejects partitions that break the reduction rules, identically on every worker and before
// any communication.
template <class T>
struct sum_reduce<T>::state {
    team_pair teams;
    sum_reduce_options options;
    std::shared_ptr<communicator> world;
    detail::team_scratch<T> forward_scratch, adjoint_scratch;
};

template <class T>
sum_reduce<T>::sum_reduce(const cartesian_partition& P_x, const cartesian_partition& P_y, sum_reduce_options options) {
    detail::require_pair_agreement("SumReduce", dtype_of<T>(), P_x, P_y, options);
    state_ = std::make_unique<state>(state{P_x.create_reduction_partition_to(P_y, options.transpose_src, options.transpose_dest),
                                           options, P_x.world_comm(), {}, {}});
    this->set_partitions(options.transpose_src ? nullptr : &P_x, options.transpose_dest ? nullptr : &P_y);
}

template <class T>
sum_reduce<T>::~sum_reduce() = default;

template <class T>
void sum_reduce<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    traffic_scope scope(state_->world->traffic(), "sum_reduce");
    const auto& t = state_->teams;
    detail::sum_in(t.send, t.recv, t.send_first, x, y, state_->options.preserve_batch, "SumReduce",
                   state_->forward_scratch);
}

// Adjoint: Broadcast from P_y back to P_x over the same teams, used in the same order.
template <class T>
void sum_reduce<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    traffic_scope scope(state_->world->traffic(), "sum_reduce");
    const auto& t = state_->teams;
    detail::copy_out(t.recv, t.send, !t.send_first, dy, dx, state_->options.preserve_batch, "SumReduce",
                     state_->adjoint_scratch);
}

template <class T>
bool sum_reduce<T>::adjoint_unless_own(const tensor<T>& dy, tensor<T>& dx) {
    traffic_scope scope(state_->world->traffic(), "sum_reduce");
    const auto& t = state_->teams;
    return detail::copy_out(t.recv, t.send, !t.send_first, dy, dx, state_->options.preserve_batch, "SumReduce",
                            state_->adjoint_scratch, false);
}

template <class T>
bool sum_reduce<T>::sums_in_place() const {
    return detail::sums_in_place(state_->teams.send, state_->teams.recv);
}

template <class T>
void sum_reduce<T>::forward_in_place(tensor<T>& y) {
    DISTDL_REQUIRE(sums_in_place(), "SumReduce: forward_in_place on world rank "
                                        << state_->world->rank()
                                        << ", which does not receive a sum of its own term; call forward(x, y)");
    traffic_scope scope(state_->world->traffic(), "sum_reduce");
    const auto& t = state_->teams;
    detail::sum_in(t.send, t.recv, t.send_first, y, y, state_->options.preserve_batch, "SumReduce",
                   state_->forward_scratch);
}

template class sum_reduce<float>;
template class sum_reduce<double>;

}  // namespace distdl
