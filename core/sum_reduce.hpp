#pragma once
// SumReduce (spec 000): y = R x. Pieces on P_x are summed into the P_y worker that shares
// their index on the matched dimensions (P_y padded on the left with ones to dim(P_x); in
// every dimension P_x == P_y or P_y == 1). Adjoint: Broadcast back.
#include <memory>

#include "core/broadcast.hpp"

namespace distdl {

using sum_reduce_options = broadcast_options;

template <class T>
class sum_reduce : public module<T> {
  public:
    sum_reduce(const cartesian_partition& P_x, const cartesian_partition& P_y, sum_reduce_options options = {});
    ~sum_reduce() override;

    // adjoint(dy, dx) without the one copy it can skip: on a worker whose dx would be a copy of
    // its own dy (the P_y worker that is also its team's P_x worker), dx is left untouched and
    // false is returned — that worker's result is dy itself. Elsewhere dx is written, true.
    bool adjoint_unless_own(const tensor<T>& dy, tensor<T>& dx);

    // Whether this worker receives a sum that its own term is part of (the P_y worker that is
    // also a P_x worker of its team). There forward_in_place(y) is forward(x, y) with x held in
    // y itself: y holds this worker's term on entry and the sum on return (no separate term, no
    // copy of it). Elsewhere forward_in_place is refused: call forward(x, y).
    bool sums_in_place() const;
    void forward_in_place(tensor<T>& y);
  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
