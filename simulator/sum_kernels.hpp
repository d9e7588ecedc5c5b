#pragma once
// The element-wise sum of the simulator's reductions, for every summable dtype.
#include <cstddef>

#include "core/dtype.hpp"

namespace distdl::sim {

// out[i] = ((terms[0][i] + terms[1][i]) + terms[2][i]) + ... for i < count: the fold in the
// order given, in one pass over the terms and one write of out (no copy of the first term,
// no partial sums in memory); bit-identical to adding the terms one by one into a copy of the
// first. One term is a copy. Works a cache line at a time (every term of a line is read before
// the line is written), which compiles to vector code without an overlap check and stays
// exact when out is one of the terms (the very same pointer; partial overlaps are not allowed).
void fold_sum(void* out, const void* const* terms, std::size_t term_count, std::size_t count, dtype type);

}  // namespace distdl::sim
