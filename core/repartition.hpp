#pragma once
// Repartition (spec 003): the same global tensor, moved from its decomposition over P_x to
// the balanced decomposition over P_y (dim(P_x) == dim(P_y) == rank of the tensor). Input may
// be unbalanced: the real local shapes are learnt collectively (once; again when they change).
// Adjoint moves every piece back (to the input layout seen by the last forward).
#include <memory>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

struct repartition_options {
    bool preserve_batch = true;  // zero-volume outputs keep the batch (first) dimension
    // Optional: the global shape, when the input is its balanced split over P_x (as layers
    // know up front). The plan is then built at construction, and the first call moves data
    // only. An input of another shape still works (the plan is rebuilt).
    shape_t global_shape = {};
};

template <class T>
class repartition : public module<T> {
  public:
    repartition(const cartesian_partition& P_x, const cartesian_partition& P_y, repartition_options options = {});
    ~repartition() override;
  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
