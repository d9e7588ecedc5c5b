#pragma once
// The adjoint's check in the layers that move no data (Flatten, ReLU): dy must have the shape of
// the last forward's output. A worker alone refuses at once; several workers of P_x agree on it
// (a two-word all-reduce), so a bad dy on one worker is refused on every worker of P_x, with the
// text of the lowest-ranked one that has it.
#include <string>

#include "core/detail/call_status.hpp"
#include "core/error.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl {

// Collective over P_x when it has more than one worker; this worker must be in P_x. `why` ends
// the message (e.g. " (the last forward's x)").
template <class T>
void require_gradient_shape(const cartesian_partition& P_x, const char* name, const tensor<T>& dy,
                            const shape_t& expected, const char* why = "") {
    std::string problem;
    if (!has_shape(dy, expected)) {
        problem = std::string(name) + ": dy on P_x " + P_x.worker_name() + " has shape " +
                  format_piece_shape(shape_of(dy)) + ", expected " + format_list(expected) + why;
    }
    if (P_x.size() > 1) detail::agree_on_call(*P_x.comm(), problem, false);
    DISTDL_REQUIRE(problem.empty(), problem);
}

}  // namespace distdl
