#pragma once
// The layers' check of the parameters a worker owns, at every call: parameter<T> is a plain
// struct, so a program may assign a tensor of another shape to a value or a gradient (the whole
// weight instead of the block, a flattened copy). The layer would then compute with the wrong
// block or fail on that worker alone while the others wait for it; so the owner names the
// problem and the layer refuses the call on every worker.
#include <string>

#include "core/error.hpp"
#include "core/module.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

// This owner's problem with `p` (empty: none): its value must have the shape `block` the layer
// gave it and, when `with_grad` (adjoint, which adds to it), its gradient too. `worker()` names
// the owner (made only for a problem: the check runs at every call).
template <class T, class Worker>
std::string parameter_problem(const std::string& layer, const Worker& worker, const parameter<T>& p,
                              const shape_t& block, bool with_grad) {
    if (!has_shape(p.value, block))
        return layer + ": " + p.name + " on " + worker() + " has shape " + format_list(shape_of(p.value)) +
               ", expected " + format_list(block) + " (the block it owns: a parameter takes new values, not a new shape)";
    if (with_grad && !has_shape(p.grad, block))
        return layer + ": the gradient of " + p.name + " on " + worker() + " has shape " +
               format_list(shape_of(p.grad)) + ", expected " + format_list(block) + " (the shape of " + p.name +
               ": adjoint adds to it)";
    return {};
}

// The first problem of an owner's weight and, when it owns one (non-null), bias, against the
// blocks the layer gave them. `P` is the partition whose workers own blocks, `P_name` its name.
template <class T>
std::string owner_problem(const std::string& layer, const char* P_name, const cartesian_partition& P,
                          const parameter<T>& weight, const shape_t& weight_block, const parameter<T>* bias,
                          const shape_t& bias_block, bool with_grad) {
    const auto worker = [&] { return std::string(P_name) + " " + P.worker_name(); };
    std::string problem = parameter_problem(layer, worker, weight, weight_block, with_grad);
    if (problem.empty() && bias) problem = parameter_problem(layer, worker, *bias, bias_block, with_grad);
    return problem;
}

}  // namespace distdl::detail
