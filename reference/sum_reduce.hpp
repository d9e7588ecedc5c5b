#pragma once
// Serial meaning of SumReduce (spec 000): y = R x, adjoint R^T (a broadcast back).
//
// Pieces are indexed by the row-major rank of their partition. Rules (spec 000): P_x's shape
// is reversed when transpose_src, P_y's when transpose_dest; then P_y is padded on the left
// with ones to dim(P_x) (dim(P_y) <= dim(P_x)); in every dimension P_x[d] == P_y[d] or
// P_y[d] == 1. Pairing (DESIGN §3, the mirror of reference/broadcast.hpp): a P_x worker's key
// is the row-major flat index of its coordinates over the matched dimensions (equal extents;
// for a transposed P_x, over the corresponding original dimensions in original order); it is
// summed into P_y rank key.
// Violations throw distdl::partition_error, e.g. (spec 000 example 5)
// "SumReduce: P_x shape [3,3,2] cannot reduce to P_y shape [1,1,3] (dimension 2: 2 vs 3)".
//
// Outputs cover only the workers that receive; elsewhere the distributed layer returns
// distdl::zero_volume<T>(batch, preserve_batch) on workers active in the input partition
// (batch = first extent of that worker's input) and a copy of the input on idle workers.
// Sums here add in increasing P_x rank; the distributed layer may add in another order, so
// compare sums within rounding (or use data whose sums are exact).
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::ref {

// For every rank p of P_x, the rank of the P_y worker its piece is summed into.
std::vector<std::size_t> sum_reduce_destinations(const shape_t& P_x_shape, const shape_t& P_y_shape,
                                                 bool transpose_src = false, bool transpose_dest = false);

// x[p]: the piece of P_x rank p. Returns y[q] for every rank q of P_y: the sum of the x[p]
// with destination q, added in increasing p (they must share one shape).
template <class T>
std::vector<tensor<T>> sum_reduce(const std::vector<tensor<T>>& x, const shape_t& P_x_shape, const shape_t& P_y_shape,
                                  bool transpose_src = false, bool transpose_dest = false);

// dy[q]: the piece of P_y rank q. Returns dx[p] for every rank p of P_x: a copy of
// dy[sum_reduce_destinations(...)[p]].
template <class T>
std::vector<tensor<T>> sum_reduce_adjoint(const std::vector<tensor<T>>& dy, const shape_t& P_x_shape,
                                          const shape_t& P_y_shape, bool transpose_src = false,
                                          bool transpose_dest = false);

}  // namespace distdl::ref
