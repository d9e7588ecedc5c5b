#include "core/broadcast.hpp"

#include "core/detail/pair_agreement.hpp"
#include "core/error.hpp"
#include "core/detail/team_collectives.hpp"

namespace distdl {

// The teams come from the partition code (one per worker of P_x, source first); it also
// rejects partitions that break the broadcast rules, identically on every worker and before
// any communication.
template <class T>
struct broadcast<T>::state {
    team_pair teams;
    broadcast_options options;
    std::shared_ptr<communicator> world;
    detail::team_scratch<T> forward_scratch, adjoint_scratch;
};

template <class T>
broadcast<T>::broadcast(const cartesian_partition& P_x, const cartesian_partition& P_y, broadcast_options options) {
    detail::require_pair_agreement("Broadcast", dtype_of<T>(), P_x, P_y, options);
    state_ = std::make_unique<state>(state{P_x.create_broadcast_partition_to(P_y, options.transpose_src, options.transpose_dest),
                                           options, P_x.world_comm(), {}, {}});
    this->set_partitions(options.transpose_src ? nullptr : &P_x, options.transpose_dest ? nullptr : &P_y);
}

template <class T>
broadcast<T>::~broadcast() = default;

template <class T>
void broadcast<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    traffic_scope scope(state_->world->traffic(), "broadcast");
    const auto& t = state_->teams;
    detail::copy_out(t.send, t.recv, t.send_first, x, y, state_->options.preserve_batch, "Broadcast",
                     state_->forward_scratch);
}

// Adjoint: SumReduce from P_y back to P_x over the same teams, used in the same order.
template <class T>
void broadcast<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    traffic_scope scope(state_->world->traffic(), "broadcast");
    const auto& t = state_->teams;
    detail::sum_in(t.recv, t.send, !t.send_first, dy, dx, state_->options.preserve_batch, "Broadcast",
                   state_->adjoint_scratch);
}

template <class T>
bool broadcast<T>::forward_unless_own(const tensor<T>& x, tensor<T>& y) {
    traffic_scope scope(state_->world->traffic(), "broadcast");
    const auto& t = state_->teams;
    return detail::copy_out(t.send, t.recv, t.send_first, x, y, state_->options.preserve_batch, "Broadcast",
                            state_->forward_scratch, false);
}

template <class T>
bool broadcast<T>::sums_in_place() const {
    return detail::sums_in_place(state_->teams.recv, state_->teams.send);
}

template <class T>
void broadcast<T>::adjoint_in_place(tensor<T>& dx) {
    DISTDL_REQUIRE(sums_in_place(), "Broadcast: adjoint_in_place on world rank "
                                        << state_->world->rank()
                                        << ", which does not receive a sum of its own term; call adjoint(dy, dx)");
    traffic_scope scope(state_->world->traffic(), "broadcast");
    const auto& t = state_->teams;
    detail::sum_in(t.recv, t.send, !t.send_first, dx, dx, state_->options.preserve_batch, "Broadcast",
                   state_->adjoint_scratch);
}

template class broadcast<float>;
template class broadcast<double>;

}  // namespace distdl
