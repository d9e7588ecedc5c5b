#pragma once
// ReLU: y = max(x, 0) element by element, on any partition P_x (each worker its own piece, no
// data moved; NaN stays NaN). The adjoint is taken at the input of the last forward:
// dx = dy where x > 0, else 0 (0 at x = 0, as the usual convention).
//
// x is this worker's piece of any shape (ReLU is defined element by element, so the forward
// refuses nothing and communicates with nobody); y has its shape. The forward keeps one byte per
// element (whether x > 0) for the adjoint, reused between calls.
//
// Errors: P_x's shape is agreed on every worker of the world at construction. A dy of another
// shape than the last forward's x is refused; when P_x has more than one worker, each adjoint
// agrees on that over P_x (a two-word all-reduce), so the refusal reaches every worker of P_x
// with the same text. Workers outside P_x pass a zero-volume tensor and get {0}. adjoint() needs
// a successful forward() first.
#include <memory>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

template <class T>
class relu : public module<T> {
  public:
    explicit relu(const cartesian_partition& P_x);
    ~relu() override;

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
