#pragma once
// Every primitive and layer is a module: a linear (or affine) operator with forward and
// adjoint. There is no autograd: adjoint(dy) returns dx and accumulates parameter gradients.
#include <string>
#include <vector>

#include "core/tensor.hpp"

namespace distdl {

template <class T>
struct parameter {
    std::string name;  // "weight", "bias"
    tensor<T> value;
    tensor<T> grad;
};

template <class T>
class module {
  public:
    virtual ~module() = default;
    virtual tensor<T> forward(const tensor<T>& x) = 0;
    virtual tensor<T> adjoint(const tensor<T>& dy) = 0;
    // Parameters this worker owns (empty for data movement and on workers owning none).
    virtual std::vector<parameter<T>*> parameters() { return {}; }
};

}  // namespace distdl
