#pragma once
// Private helper of Broadcast, SumReduce and AllSumReduce: the three team collectives they are
// made of.
//
//   copy_out: this worker is rank 0 of `provide` and sends its x to every member of it; as a
//             member of `obtain` it receives a copy of rank 0's tensor. Broadcast forward and
//             SumReduce adjoint.
//   sum_in:   as a member of `provide` this worker adds its x into rank 0 of it; as rank 0 of
//             `obtain` it receives the sum of the members' tensors. SumReduce forward and
//             Broadcast adjoint.
//   all_sum:  every member of `team` receives the sum of the members' tensors (AllSumReduce).
//
// Shapes. Receivers do not know the incoming shape on the first call, so a fixed-size header
// (dtype, rank, extents) travels first ("<label>.shapes" in the traffic log). Every member then
// remembers the agreed shape of that team (team_cache). While it is known, a call moves data
// only, with a status that every member adds to and every member learns, in the same
// collective for small tensors and as a collective of one or two words ahead of the bulk for
// large ones (the bulk then goes straight from x into y, no copy, as a nonblocking broadcast on
// every member, so that a root that also receives copies x into its own y while it is in flight):
//   - copy: an all-reduce of [the root's data as raw bits | status] (the other members add
//     zero words, so the sum is the root's bits exactly: bit-exact for any value), the root
//     adding "changed" and each receiver "problem" (its own argument is wrong);
//   - sum: the data summed with [changed count | problem count].
// Every member takes part with the cached count whatever its own argument, so counts always
// match; on "changed" every member falls back to the header path together, and on "problem"
// every member throws the same error (core/detail/call_status.hpp). A shape change between
// calls therefore works, and a disagreement or a bad argument on any member is refused on
// every member. Why an all-reduce also for a copy, where raw MPI broadcasts: a member that
// only receives has no other way to tell the others that its own argument is wrong.
//
// A worker with two teams uses them in the order `provide_first` gives (the global team order
// of the partition code, so no two workers wait on each other in a cycle). When both teams are
// the same, the worker is rank 0 of it and its own tensor takes part. Outputs, written into
// `y` (reshaped only when its shape differs):
//   - obtain active: the received tensor (never x's storage);
//   - only provide active: zero-volume {0}, or {batch, 0} with preserve_batch, batch = x's
//     first extent;
//   - neither: a copy of x, which must be zero-volume (anything else is refused).
// A worker that receives but does not provide must pass a zero-volume x; anything else is
// refused on every member of the team it receives in (agreed through the status above). A
// worker active in neither team takes part in nothing and refuses alone.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

// Largest tensor rank the shape header carries.
constexpr std::size_t max_header_rank = 10;

// The shape every member of one team agreed on when the header last travelled.
struct team_cache {
    bool known = false;
    shape_t shape;
};

// Reused across calls of one direction (forward or adjoint) of one module: the caches of its
// two teams, the header words and the fused [data | status] buffers.
template <class T>
struct team_scratch {
    team_cache provide_cache, obtain_cache;
    std::vector<std::uint64_t> header;
    std::vector<std::uint64_t> gathered;  // the header words summed over a team
    std::vector<T> fused_in, fused_out;
    std::vector<std::uint64_t> bits_in, bits_out;  // a copy's fused [data bits | status]
    std::vector<request> requests;  // a nonblocking broadcast's
};

// `source_copies` false: a worker that is the source of its own copy (the one case where y would
// be a copy of x) leaves y untouched, and copy_out returns false (its output is x itself);
// otherwise y is written and copy_out returns true.
template <class T>
bool copy_out(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x, tensor<T>& y,
              bool preserve_batch, const char* layer, team_scratch<T>& scratch, bool source_copies = true);

// x may be y itself on a worker that sums_in_place(provide, obtain): y then holds its term on
// entry (an in-place sum: no separate term, no copy); elsewhere x and y must be distinct.
template <class T>
void sum_in(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x, tensor<T>& y,
            bool preserve_batch, const char* layer, team_scratch<T>& scratch);

// Whether this worker receives a sum that its own term is part of (sum_in may then sum in y).
bool sums_in_place(const partition& provide, const partition& obtain);

template <class T>
void all_sum(const partition& team, const tensor<T>& x, tensor<T>& y, const char* layer, team_scratch<T>& scratch);

// Tensors up to this many bytes travel fused with their status in one collective.
constexpr std::size_t fused_status_limit = 64 * 1024;

}  // namespace distdl::detail
