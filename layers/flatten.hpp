#pragma once
// Flatten: y[n, f] = x[n, i_1, …, i_k] with f the row-major index of (i_1, …, i_k), the step
// between a convolutional part and DistributedLinear (which takes N × features).
//
//   x: N × D_1 × … × D_k (k = 1…4), balanced over P_x of shape [P_b, 1, …, 1]: only the batch
//      is split, so every worker holds whole samples;
//   y: N × (D_1 ⋯ D_k), balanced over P_y of shape [P_b, 1]: the same workers in the same order.
//   Each worker reshapes its own piece; no data moves. Adjoint: dy back to the last forward's
//   input shape.
//
// A convolution's output split over its spatial dimensions is first gathered with a
// Repartition to a partition that splits the batch only (e.g. [1, 1, 1, 1]: one worker); a
// DistributedLinear whose P_x is [1, P] takes the flat features after a Repartition from P_y.
//
// Errors: the partitions are agreed on every worker of the world at construction and refused
// there (P_x splitting a dimension other than the batch, P_y not [P_b, 1] or on other workers).
// At a call, when P_x has more than one worker, they agree on it (a two-word all-reduce; an
// all-gather of the piece shapes when one changed): pieces that are not the balanced split of
// one shape, and a dy of another shape than the last output, are refused on every worker of
// P_x. Workers outside P_x pass a zero-volume tensor and get {0}. adjoint() needs a successful
// forward() first.
#include <memory>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

template <class T>
class flatten : public module<T> {
  public:
    flatten(const cartesian_partition& P_x, const cartesian_partition& P_y);
    ~flatten() override;

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
