#pragma once
// A chain of modules: y = F_n(...F_2(F_1(x))), adjoint dx = F_1*(F_2*(...F_n*(dy))) (reverse
// order), parameters() the concatenation of every module's, in order. Each module's output
// partition must be the next one's input partition; the modules check their pieces.
// The container owns its modules and keeps the intermediate tensors between calls, so a
// steady-state loop reuses their storage. An empty chain is the identity (a copy).
// Construction is collective like any layer's: every worker appends the same modules in
// the same order.
//
// Errors. A module refuses bad input on every worker of that module, but the chain's other
// workers would then wait in a later module (in the adjoint, an earlier one) for a worker that
// left the chain. So a worker whose module threw goes on through the rest of the chain with a
// zero-dimensional tensor in place of its input, which every module refuses (on all of its
// workers) wherever it needs that worker's data, and throws its first error at the end. Every
// worker whose result depends on the failure ends with an error (later ones name the
// zero-dimensional tensor, shape []); no worker waits forever.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "core/module.hpp"

namespace distdl {

template <class T>
class sequential : public module<T> {
  public:
    sequential() = default;
    explicit sequential(std::vector<std::unique_ptr<module<T>>> modules);

    // Appends a module (not null) and returns it.
    module<T>& append(std::unique_ptr<module<T>> m);
    // Constructs a module of type M in place and returns it.
    template <class M, class... Args>
    M& emplace(Args&&... args) {
        auto owned = std::make_unique<M>(std::forward<Args>(args)...);
        M& m = *owned;
        append(std::move(owned));
        return m;
    }

    std::size_t size() const { return modules_.size(); }
    module<T>& operator[](std::size_t i) { return *modules_.at(i); }

    std::vector<parameter<T>*> parameters() override;
    // Sets every gradient of every module to zero (adjoint accumulates into them).
    void zero_grad();

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    // Runs the chain forward (x -> y) or adjoint (dy -> dx) as described under Errors.
    void run_chain(const tensor<T>& in, tensor<T>& out, bool adjoint);

    std::vector<std::unique_ptr<module<T>>> modules_;
    std::vector<tensor<T>> activations_;  // output of module i, i < size-1
    std::vector<tensor<T>> gradients_;    // adjoint output of module i, 0 < i
    const tensor<T> after_failure_{shape_t{}};  // what a worker whose module threw passes on
};

}  // namespace distdl
