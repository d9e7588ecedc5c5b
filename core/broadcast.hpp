#pragma once
// Broadcast (spec 000/001, DESIGN §3): y = B x. Each worker of P_x copies its piece to the
// workers of P_y that share its index on the matched dimensions (P_x padded on the left with
// ones to dim(P_y); in every dimension P_x == P_y or P_x == 1). Adjoint: SumReduce back.
//   x: this worker's piece on P_x (zero-volume elsewhere); y: the copy on P_y.
#include <memory>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

struct broadcast_options {
    bool transpose_src = false;
    bool transpose_dest = false;
    bool preserve_batch = true;  // zero-volume outputs keep the batch (first) dimension
};

template <class T>
class broadcast : public module<T> {
  public:
    broadcast(const cartesian_partition& P_x, const cartesian_partition& P_y, broadcast_options options = {});
    ~broadcast() override;

    // forward(x, y) without the one copy it can skip: on a worker whose y would be a copy of
    // its own x (the P_x worker that is also a P_y worker of its team), y is left untouched and
    // false is returned — that worker's result is x itself. Elsewhere y is written, true.
    bool forward_unless_own(const tensor<T>& x, tensor<T>& y);

    // Whether this worker's adjoint receives a sum that its own term is part of (the P_x worker
    // that is also a P_y worker of its team). There adjoint_in_place(dx) is adjoint(dy, dx)
    // with dy held in dx itself: dx holds this worker's term on entry and the sum on return (no
    // separate term, no copy of it). Elsewhere adjoint_in_place is refused: call adjoint(dy, dx).
    bool sums_in_place() const;
    void adjoint_in_place(tensor<T>& dx);
  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
