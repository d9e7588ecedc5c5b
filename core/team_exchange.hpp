#pragma once
// Private helper of Broadcast, SumReduce and AllSumReduce: the two team operations they are
// made of, with the shape metadata that travels ahead of the data.
//
//   copy_out: this worker is rank 0 of `provide` and sends its x to every member of it; as a
//             member of `obtain` it receives a copy of rank 0's tensor. Broadcast forward and
//             SumReduce adjoint.
//   sum_in:   as a member of `provide` this worker adds its x into rank 0 of it; as rank 0 of
//             `obtain` it receives the sum of the members' tensors. SumReduce forward and
//             Broadcast adjoint.
//   all_sum:  every member of `team` receives the sum of the members' tensors (AllSumReduce).
//
// Receivers do not know the incoming shape, so a fixed-size header (dtype, rank, extents)
// goes first on every call: shapes may change between calls. A worker with two teams uses
// them in the order `provide_first` gives (the global team order of the partition code, so
// no two workers wait on each other in a cycle). When both teams are the same, the worker is
// rank 0 of it and its own tensor takes part. Outputs:
//   - obtain active: the received tensor (a fresh tensor, never x's storage);
//   - only provide active: zero-volume {0}, or {batch, 0} with preserve_batch, batch = x's
//     first extent;
//   - neither: a copy of x (which should be zero-volume).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/dtype_agreement.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

// Largest tensor rank the shape header carries.
constexpr std::size_t max_header_rank = 10;

// Reused across calls: the header words and a never-written block of zeros (the send buffer of
// a reduction root that does not contribute).
template <class T>
struct exchange_scratch {
    std::vector<std::uint64_t> header;
    std::vector<std::uint64_t> gathered;
    std::vector<T> zeros;
};

template <class T>
tensor<T> copy_out(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x,
                   bool preserve_batch, const char* layer, exchange_scratch<T>& scratch);

template <class T>
tensor<T> sum_in(const partition& provide, const partition& obtain, bool provide_first, const tensor<T>& x,
                 bool preserve_batch, const char* layer, exchange_scratch<T>& scratch);

template <class T>
tensor<T> all_sum(const partition& team, const tensor<T>& x, const char* layer, exchange_scratch<T>& scratch);

}  // namespace distdl::detail
