#pragma once
// DistributedLinear (spec 002, DESIGN §3): the affine layer y = x W^T + b with x, y, W and b
// spread over three Cartesian partitions of one world.
//
//   x: batch x in_features     on P_x = 1 x P_fi   (features split, batch whole)
//   y: batch x out_features    on P_y = 1 x P_fo
//   W: out_features x in_features on P_W = P_fo x P_fi; b: out_features, on column 0 of P_W
//
// Worker (r, c) of P_W owns the block of W with rows balanced(out_features, P_fo, r) and
// columns balanced(in_features, P_fi, c) (DESIGN §3 balanced split; n < P gives empty blocks);
// worker (r, 0) also owns the piece of b with those rows (when bias is on). P_x worker c holds
// x[:, balanced(in_features, P_fi, c)]; P_y worker r receives y[:, balanced(out_features, P_fo, r)].
//
// Forward:  1. Broadcast the x pieces from P_x down the columns of P_W.
//           2. Local GEMM on every P_W worker: y_rc = x_c W_rc^T (+ b_r on column 0).
//           3. SumReduce the rows of P_W into P_y (P_W transposed: row r reduces into P_y worker r).
// Adjoint:  1. Broadcast dy from P_y along the rows of P_W (the SumReduce's adjoint).
//           2. Local: dx_rc = dy_r W_rc; dW_rc += dy_r^T x_c; db_r += sum over the batch of dy_r.
//           3. SumReduce the dx pieces down the columns of P_W into P_x (the Broadcast's adjoint).
// The three partitions may share workers in any way (identical, overlapping, disjoint).
//
// Outputs: P_y workers get batch x (their share of out_features); every other worker gets a
// zero-volume {0}. The adjoint gives P_x workers batch x (their share of in_features), others {0}.
// Input on workers outside P_x is ignored.
//
// Parameters: "weight" on every P_W worker (its block, possibly empty), "bias" on column 0 of
// P_W. adjoint() ACCUMULATES into their gradients (as autograd does); zero_grad() clears them.
// Initial values depend only on (seed, in_features, out_features), never on the partitions:
// element e of W (row-major global index) and of b is bound * u(seed, e) with u a counter-based
// hash in [-1, 1) (multiples of 2^-23) and bound = 1/sqrt(in_features), as PyTorch's default
// range. So a serial run and every distributed run start from the same model.
//
// Errors: inconsistent partitions are refused at construction on every worker, before any
// communication. A bad input piece (wrong rank or feature extent, batch differing between P_x
// workers) or a bad output gradient is refused on every worker of the layer: the P_x (P_y)
// workers agree on it (one small all-gather among them per call when P_fi (P_fo) > 1) and
// send an empty marker through the pipeline instead of data, so nobody waits for a partner
// that stopped. adjoint() needs a forward() first; it uses the input of the last forward.
//
// Memory: the broadcast x piece, the partial products and the gradient buffers are members,
// reused while shapes stay the same (the primitives of core/ still return fresh tensors).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/broadcast.hpp"
#include "core/module.hpp"
#include "core/partition.hpp"
#include "core/sum_reduce.hpp"

namespace distdl {

struct linear_options {
    bool bias = true;
    std::uint64_t seed = 0;  // initial W and b (see above)
};

// The global initial parameters the layer starts from, whatever its partitions: weight
// out x in, bias out (shape {0} when options.bias is false).
template <class T>
struct linear_parameters {
    tensor<T> weight;
    tensor<T> bias;
};
template <class T>
linear_parameters<T> linear_initial_parameters(std::size_t in_features, std::size_t out_features,
                                               const linear_options& options = {});

template <class T>
class distributed_linear : public module<T> {
  public:
    // Collective over the world of the partitions (every worker constructs every layer).
    distributed_linear(const cartesian_partition& P_x, const cartesian_partition& P_y, const cartesian_partition& P_W,
                       std::size_t in_features, std::size_t out_features, linear_options options = {});
    ~distributed_linear() override;

    std::vector<parameter<T>*> parameters() override;
    void zero_grad();

    std::size_t in_features() const { return in_features_; }
    std::size_t out_features() const { return out_features_; }

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    // Empty when this worker's piece is acceptable for the agreed batch; collective over
    // `team` (P_x or P_y) when it has more than one worker, so every member returns the same.
    std::string agree_on_piece(const cartesian_partition& team, const tensor<T>& piece, std::size_t features,
                               const std::size_t* expected_batch, const char* what) const;

    cartesian_partition P_x_, P_y_, P_W_;
    std::size_t in_features_, out_features_;
    linear_options options_;
    std::size_t local_in_ = 0, local_out_ = 0;  // this worker's share of each feature dimension
    bool holds_weight_ = false, holds_bias_ = false;

    std::unique_ptr<broadcast<T>> broadcast_x_;    // P_x -> P_W columns
    std::unique_ptr<sum_reduce<T>> reduce_y_;      // P_W rows -> P_y (P_W transposed)

    parameter<T> weight_, bias_;
    // Reused between calls.
    tensor<T> x_piece_;    // the broadcast input piece (kept for dW)
    tensor<T> y_partial_;  // y_rc
    tensor<T> dx_partial_; // dx_rc
    tensor<T> dy_piece_;   // the broadcast output gradient
    tensor<T> received_;   // what a primitive hands back before it is checked
    tensor<T> empty_;      // {0}: what a worker without data passes on
    tensor<T> marker_;     // {0}: sent instead of data after a refusal
    bool forward_done_ = false;
    std::size_t batch_ = 0;  // batch of the last successful forward
};

}  // namespace distdl
