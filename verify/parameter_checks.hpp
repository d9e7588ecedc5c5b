#pragma once
// The parameter part of both checks (DESIGN §5) on one worker, for layers with a
// parameter_hook (layer_runner.hpp): gradient equivalence against the reference, and the
// dot-product test with respect to each parameter.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "verify/checks.hpp"
#include "verify/layer_runner.hpp"

namespace distdl::verify {

template <class T>
struct parameter_check_result {
    std::string problem;          // the first problem found (empty: none)
    double gradient_error = 0;    // largest relative error of this worker's gradients
    std::vector<dot_terms> terms; // this worker's share of the test for each of hook.names
};

// The serial side of the parameter checks, the same for every worker: computed once per case
// (at thousands of workers, once per worker would cost thousands of whole-model references).
template <class T>
struct parameter_reference {
    std::vector<std::vector<parameter<T>>> expected;  // per world rank: the parameters it owns
    // Per parameter name: the largest |gradient| or sum of |terms| over every worker's block,
    // the scale that block's rounding is judged against.
    std::map<std::string, double> gradient_scale;
};

template <class T>
parameter_reference<T> reference_parameters(const parameter_hook<T>& hook, const std::vector<tensor<T>>& x,
                                            const std::vector<tensor<T>>& probe);

// Call right after the first forward(x[rank]) and adjoint(probe[rank]) of the fresh layer.
// Collective: every worker of the case calls it (it runs forward and adjoint again). When the
// layer has offsets, y and dx are replaced by the layer's output and adjoint with the offsets
// zero (the linear part the input's dot-product test needs). Leaves the parameters as built
// and their gradients zero.
template <class T>
parameter_check_result<T> check_parameters(module<T>& layer, const parameter_hook<T>& hook,
                                           const parameter_reference<T>& reference, const std::vector<tensor<T>>& x,
                                           const std::vector<tensor<T>>& probe,
                                           std::size_t rank, std::uint64_t seed, double tolerance, tensor<T>& y,
                                           tensor<T>& dx);

}  // namespace distdl::verify
