#pragma once
// AllSumReduce (spec 001): every worker of P_x ends with the sum of the pieces of the workers
// that share its index outside `axes` (no axes: identity copy; all axes: the sum over P_x).
// Self-adjoint.
#include <memory>
#include <vector>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

template <class T>
class all_sum_reduce : public module<T> {
  public:
    all_sum_reduce(const cartesian_partition& P_x, std::vector<std::size_t> axes_reduce);
    ~all_sum_reduce() override;
  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
