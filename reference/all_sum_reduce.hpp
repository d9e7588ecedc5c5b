#pragma once
// Serial meaning of AllSumReduce (spec 001): every worker of P_x ends with the sum of the
// pieces of the workers whose coordinates agree with its own outside `axes_reduce`. No axes:
// the identity (copies); all axes: the sum over P_x on every worker. Self-adjoint.
// Pieces are indexed by the row-major rank of P_x. Axes out of range or repeated throw
// distdl::partition_error.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::ref {

// For every rank of P_x, the rank of the first (lowest-ranked) worker of its summing team.
std::vector<std::size_t> all_sum_reduce_teams(const shape_t& P_x_shape, const std::vector<std::size_t>& axes_reduce);

// x[p]: the piece of P_x rank p. Returns y[p] for every rank p: the sum of the pieces of p's
// team, added in increasing rank (they must share one shape). Self-adjoint: the adjoint is this
// same operator on dy.
template <class T>
std::vector<tensor<T>> all_sum_reduce(const std::vector<tensor<T>>& x, const shape_t& P_x_shape,
                                      const std::vector<std::size_t>& axes_reduce);

}  // namespace distdl::ref
