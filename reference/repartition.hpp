#pragma once
// Serial meaning of Repartition (spec 003, DESIGN §3). A repartition is the identity on the
// global tensor: only the decomposition changes. Given the global tensor, these functions say
// which piece each worker holds, independently of core/'s code paths (plain index arithmetic
// and xtensor views), so the distributed primitive can be checked against them.
//
// Workers of a Cartesian partition of shape P are listed in row-major order of their grid
// index (worker r has index unravel(r, P)), as in core/partition.hpp.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::ref {

// How a length-n dimension is split over `parts` workers.
//   balanced:   worker i gets n/P + (i < n%P), the first n%P workers one extra (DESIGN §3);
//   unbalanced: worker 0 gets n/P + n%P, every other worker n/P (case files' "unbalanced").
enum class split_kind { balanced, unbalanced };

// Extents of the pieces along one dimension, in worker order (sums to n).
std::vector<std::size_t> split_sizes(std::size_t n, std::size_t parts, split_kind kind = split_kind::balanced);

// The piece of `global` held by each worker of a partition of shape `parts`
// (parts.size() == global.dimension()), in row-major worker order. Pieces may be empty
// (n < P); an empty piece keeps its rank, e.g. shape {2,0,3}.
template <class T>
std::vector<tensor<T>> split(const tensor<T>& global, const shape_t& parts, split_kind kind = split_kind::balanced);

// Inverse of split: glues pieces (row-major worker order, any split consistent across each
// grid row/column) back into the global tensor. Throws distdl::invalid_argument when the
// pieces do not tile a global tensor.
template <class T>
tensor<T> assemble(const std::vector<tensor<T>>& pieces, const shape_t& parts);

// Expected output of Repartition on every worker of P_y (shape P_y_shape): its balanced piece
// of the global tensor, whatever the input decomposition was. (Workers outside P_y return a
// zero-volume tensor: {0}, or {global.shape[0], 0} with preserve_batch.) The adjoint's
// expected output is the input decomposition again: split(global, P_x_shape, input kind).
template <class T>
std::vector<tensor<T>> repartition(const tensor<T>& global, const shape_t& P_y_shape);

}  // namespace distdl::ref
