#pragma once
// Serial meaning of Broadcast (spec 000 rules mirrored, DESIGN §3): y = B x, adjoint B^T.
//
// Partitions are given by their shapes only; pieces are indexed by the row-major rank of a
// partition. Pairing rule, implemented here directly from shapes (independently of core/):
//   - P_x's shape is reversed when transpose_src, P_y's when transpose_dest; then P_x is padded
//     on the left with ones to dim(P_y) (dim(P_x) <= dim(P_y));
//   - in every dimension d the effective extents satisfy P_x[d] == P_y[d] or P_x[d] == 1;
//   - the matched dimensions are those where the extents are equal; a worker's key is the
//     row-major flat index of its coordinates over the matched dimensions (for a transposed
//     partition: over the corresponding original dimensions, in original order). For P_x this
//     key is always its rank. The P_y worker with key k receives a copy of P_x rank k.
//   Example: [2,2,1] -> [3,2,2] with transpose_src: P_x worker (a,b,0) feeds every (*,a,b).
// Violations throw distdl::partition_error with the message the core layer gives, e.g.
// "Broadcast: P_x shape [1,1,3] cannot broadcast to P_y shape [1,3,2] (dimension 2: 3 vs 2)".
//
// Outputs cover only the workers that receive a piece; on every other worker the distributed
// layer returns distdl::zero_volume<T>(batch, preserve_batch) (batch = first extent of that
// worker's input) when it is active in the input partition, and a copy of its (zero-volume)
// input when it is active in neither.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::ref {

// For every rank q of P_y, the rank of the P_x worker whose piece it receives.
std::vector<std::size_t> broadcast_sources(const shape_t& P_x_shape, const shape_t& P_y_shape,
                                           bool transpose_src = false, bool transpose_dest = false);

// x[p]: the piece of P_x rank p (volume(P_x_shape) pieces, any shapes). Returns y[q] for every
// rank q of P_y: a copy of x[broadcast_sources(...)[q]].
template <class T>
std::vector<tensor<T>> broadcast(const std::vector<tensor<T>>& x, const shape_t& P_x_shape, const shape_t& P_y_shape,
                                 bool transpose_src = false, bool transpose_dest = false);

// dy[q]: the piece of P_y rank q. Returns dx[p] for every rank p of P_x: the sum of the dy[q]
// paired with p, added in increasing q (the pieces summed together must share one shape).
template <class T>
std::vector<tensor<T>> broadcast_adjoint(const std::vector<tensor<T>>& dy, const shape_t& P_x_shape,
                                         const shape_t& P_y_shape, bool transpose_src = false,
                                         bool transpose_dest = false);

namespace detail {

// The pairing rule above for a broadcast (`broadcasting`: P_x is the single side) or a
// sum-reduction (P_y is the single side): for every rank of the other partition, its partner.
std::vector<std::size_t> pair_workers(const shape_t& P_x_shape, const shape_t& P_y_shape, bool transpose_src,
                                      bool transpose_dest, bool broadcasting);

// out[k] = sum of pieces[i] with partner[i] == k, added in increasing i; `layer` names errors.
template <class T>
std::vector<tensor<T>> sum_by_partner(const std::vector<tensor<T>>& pieces, const std::vector<std::size_t>& partner,
                                      std::size_t partners, const char* layer);

}  // namespace detail

}  // namespace distdl::ref
