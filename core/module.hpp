#pragma once
// Every primitive and layer is a module: a linear (or affine) operator with forward and
// adjoint. There is no autograd: adjoint(dy) returns dx and accumulates parameter gradients.
//
// Two ways to call: `y = m.forward(x)` returns a new tensor; `m.forward(x, y)` writes into the
// caller's y, reusing its storage when y already has the output shape (a steady-state loop
// then allocates nothing), and reshaping it otherwise. y may be x itself (`m.forward(x, x)`):
// the result then goes through a temporary, as no module computes in place. The same holds for
// adjoint(dy) / adjoint(dy, dx). A tensor of another element type is a compile error, never a
// silent conversion.
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl {

// A layer's parameter block on its owner. Its values and gradient may be changed in place or
// assigned, but keep the shape the layer gave them: a layer refuses, on all of its workers, a
// call that would use one of another shape.
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

    tensor<T> forward(const tensor<T>& x) {
        tensor<T> y;
        do_forward(x, y);
        return y;
    }
    void forward(const tensor<T>& x, tensor<T>& y) {
        if (&x == &y) {
            y = forward(x);
            return;
        }
        do_forward(x, y);
    }
    tensor<T> adjoint(const tensor<T>& dy) {
        tensor<T> dx;
        do_adjoint(dy, dx);
        return dx;
    }
    void adjoint(const tensor<T>& dy, tensor<T>& dx) {
        if (&dy == &dx) {
            dx = adjoint(dy);
            return;
        }
        do_adjoint(dy, dx);
    }

    // Another element type: refused at compile time (xtensor would convert element by element).
    template <class U, class = std::enable_if_t<!std::is_same_v<U, T>>>
    tensor<T> forward(const tensor<U>&) = delete;
    template <class U, class = std::enable_if_t<!std::is_same_v<U, T>>>
    void forward(const tensor<U>&, tensor<T>&) = delete;
    template <class U, class = std::enable_if_t<!std::is_same_v<U, T>>>
    tensor<T> adjoint(const tensor<U>&) = delete;
    template <class U, class = std::enable_if_t<!std::is_same_v<U, T>>>
    void adjoint(const tensor<U>&, tensor<T>&) = delete;

    // Parameters this worker owns (empty for data movement and on workers owning none).
    virtual std::vector<parameter<T>*> parameters() { return {}; }
    // The same, each with its path: the parameter's name ("weight"), and inside a sequential the
    // module's position before it ("2.weight"; "1.0.bias" in a nested one), as PyTorch names
    // them: what an optimizer's state or a checkpoint can be keyed by.
    virtual std::vector<std::pair<std::string, parameter<T>*>> named_parameters() {
        std::vector<std::pair<std::string, parameter<T>*>> named;
        for (auto* p : parameters()) named.emplace_back(p->name, p);
        return named;
    }
    // Clears the gradients of parameters(), which adjoint accumulates into.
    void zero_grad() {
        for (auto* p : parameters()) p->grad.fill(T(0));
    }

    // Where forward takes its input and leaves its output (adjoint: the other way round), for a
    // chain to check that each module reads its input where the one before left it; null where
    // a module does not say (HaloExchange's windows, a transposed Broadcast or SumReduce).
    virtual const cartesian_partition* input_partition() const { return input_ ? &*input_ : nullptr; }
    virtual const cartesian_partition* output_partition() const { return output_ ? &*output_ : nullptr; }

  protected:
    // For a constructor: the partitions above (null: it does not say).
    void set_partitions(const cartesian_partition* input, const cartesian_partition* output) {
        if (input) input_ = *input;
        if (output) output_ = *output;
    }

    // Write the result into y (dx), reusing its storage when it already has the right shape.
    virtual void do_forward(const tensor<T>& x, tensor<T>& y) = 0;
    virtual void do_adjoint(const tensor<T>& dy, tensor<T>& dx) = 0;

  private:
    std::optional<cartesian_partition> input_, output_;
};

}  // namespace distdl
