#pragma once
// A chain of modules: y = F_n(...F_2(F_1(x))), adjoint dx = F_1*(F_2*(...F_n*(dy))) (reverse
// order), parameters() the concatenation of every module's, in order (named_parameters():
// each path prefixed with its module's index, "2.weight"). Each module's output
// partition must be the next one's input partition; the modules check their pieces, and the
// chain checks the partitions where both modules say them (module::input_partition; an empty
// chain between them, the identity, is looked through): the same workers in the same order on
// the same grid (a shorter grid padded on the left with ones, as Broadcast and SumReduce read
// theirs). Pieces of the right shape on workers in another order
// would otherwise be read as other blocks: such a link fails the call as a refusal does (below),
// with the two partitions named.
// The container owns its modules and keeps the intermediate tensors between calls, so a
// steady-state loop reuses their storage. An empty chain is the identity (a copy).
// Construction is collective like any layer's: every worker appends the same modules in
// the same order.
//
// Errors. A module refuses bad input on every worker of that module, but the chain's other
// workers would then wait in a later module (in the adjoint, an earlier one) for a worker that
// left the chain. So a worker whose module threw goes on through the rest of the chain with a
// mark in place of its input: a zero-dimensional tensor holding a NaN of its own payload (a
// module's own zero-dimensional NaN, a diverged loss, is not the mark). A module that needs that
// worker's data refuses the mark on all of its workers (naming shape [] as the mark:
// format_piece_shape in core/error.hpp); one that only moves or sums it (Broadcast, SumReduce)
// delivers it, and a worker that receives it counts it as a failure of the chain. Every
// worker throws its first error at the end, so every worker whose result depends on the
// failure ends with an error, and no worker waits forever. A module's refusal (a
// distdl::invalid_argument) is named by its place: "sequential: module [2] of 3: Linear: ...";
// other errors (a subclass, a transport's) are thrown as they are.
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
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
    module<T>& operator[](std::size_t i);
    // Whether the chain is the identity: no modules, or only such chains (a placeholder). The
    // links around it are checked as if it were not there.
    bool is_identity() const;

    std::vector<parameter<T>*> parameters() override;
    std::vector<std::pair<std::string, parameter<T>*>> named_parameters() override;
    const cartesian_partition* input_partition() const override;
    const cartesian_partition* output_partition() const override;

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    // Runs the chain forward (x -> y) or adjoint (dy -> dx) as described under Errors.
    void run_chain(const tensor<T>& in, tensor<T>& out, bool adjoint);

    // Why module k cannot read what module k - 1 leaves (empty: it can), judged again when either
    // names other partitions (a nested sequential given modules after it was appended).
    const std::string& link_problem_into(std::size_t k);
    struct link {
        const cartesian_partition *left = nullptr, *read = nullptr;
        std::string problem;
    };

    std::vector<std::unique_ptr<module<T>>> modules_;
    std::vector<link> links_;  // per module k > 0: the link into it, as last judged
    std::vector<tensor<T>> activations_;  // output of module i, i < size-1
    std::vector<tensor<T>> gradients_;    // adjoint output of module i, 0 < i
    // A NaN with a payload of its own (sequential.cpp), so that a module's own NaN is not taken
    // for the mark.
    static T failure_mark_value();
    const tensor<T> failure_mark_ = tensor<T>(shape_t{}, failure_mark_value());
};

}  // namespace distdl
