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
// Errors. At construction every worker agrees on the arguments (element type, the three
// partition shapes, in_features, out_features, bias, seed: one digest all-reduce, core/detail/
// argument_agreement); a disagreement, and partitions that do not fit together, are refused
// on every worker. Per call, a bad input piece (wrong rank or feature extent, batch differing
// between P_x workers) or a bad output gradient (also: batch other than the last forward's)
// is refused with the same message, naming the worker and the problem, on every worker of the
// layer, and nobody waits forever. Once shapes are known a call moves data only:
//   - a worker whose piece cannot be right on its own (wrong rank or features) sends an empty
//     marker instead of it; everything else, including a batch that differs between workers,
//     travels as usual;
//   - every P_W worker hears from every P_x worker (each row of P_W holds every column), so
//     the SumReduce into P_y sees a marker or a differing batch: its teams then refuse on
//     every member (core's guarantee), or, when every piece was a marker, deliver one. So all
//     of P_W and P_y know the outcome, with no message beyond the data;
//   - a P_x worker in neither P_W nor P_y hears nothing back in forward: for such workers only,
//     P_W's first row sends them a one-element verdict (the same in adjoint for P_y workers in
//     neither P_W nor P_x, from P_W's first column);
//   - on a refusal, and only then, the workers of the layer find the reason together (the
//     pieces' shapes gathered over P_x or P_y, then one agreement over the layer's workers).
//   - a parameter (in adjoint: or its gradient) that the program gave another shape than its
//     block is refused alike: its worker marks its column's broadcast of x (in adjoint its
//     row's broadcast of dy), as its piece's marker or, as a receiver, with a non-empty input
//     that the broadcast refuses on every member; every row (column) then holds a worker that
//     knows and marks its term of the sum.
// A refused adjoint accumulates no gradient (gradients are added once the call succeeded).
// adjoint() needs a forward() first; it uses the input of the last forward.
//
// Memory: the broadcast x piece, the partial products and the gradient buffers are members,
// reused while shapes stay the same.
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

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    // Refusal path, collective over the layer's workers once every one of them knows that the
    // call failed: throws the same invalid_argument, with the reason, on all of them.
    [[noreturn]] void refuse(const cartesian_partition& team, const tensor<T>& piece, std::size_t features,
                             const std::size_t* expected_batch, const char* what, const char* direction,
                             const std::string& parameter_problem);
    // Whether the call failed: `failed` as this worker knows it, or the verdict its source sent
    // (collective over the verdict's teams; `source`: this worker sends a verdict).
    bool tell_deaf(broadcast<T>* verdict, bool source, bool failed);
    // This worker's problem with the parameters it holds, and in the adjoint their gradients
    // (empty: none; parameter_shape.hpp).
    std::string parameter_problem(bool with_grad) const;

    cartesian_partition P_x_, P_y_, P_W_;
    std::size_t local_in_ = 0, local_out_ = 0;  // this worker's share of each feature dimension
    bool holds_weight_ = false, holds_bias_ = false;

    std::unique_ptr<broadcast<T>> broadcast_x_;    // P_x -> P_W columns
    std::unique_ptr<sum_reduce<T>> reduce_y_;      // P_W rows -> P_y (P_W transposed)
    // Verdicts for the workers that would hear nothing back (null when there are none):
    // P_W(0, c) -> P_x worker c in forward, P_W(r, 0) -> P_y worker r in adjoint.
    std::unique_ptr<broadcast<T>> forward_verdict_, adjoint_verdict_;
    bool tells_forward_ = false, tells_adjoint_ = false;  // this worker is a source of one
    std::shared_ptr<communicator> layer_comm_;  // over every worker of P_x, P_y and P_W (refusals only)

    parameter<T> weight_, bias_;
    shape_t weight_block_, bias_block_;  // their shapes (the program may not change them)
    // Reused between calls.
    tensor<T> x_piece_;    // the broadcast input piece (kept for dW)
    tensor<T> y_partial_;  // y_rc
    tensor<T> dx_partial_; // dx_rc
    tensor<T> dy_piece_;   // the broadcast output gradient
    tensor<T> received_;   // what a primitive hands back before it is checked
    tensor<T> empty_;      // {0}: what a worker without data passes on
    tensor<T> marker_;     // {0}: sent instead of a piece that cannot be right
    tensor<T> poison_;     // {1}: a receiver's input that its broadcast refuses on every member
    tensor<T> verdict_out_, verdict_in_;  // {1}: 1 = the call failed
    bool forward_done_ = false;
    std::size_t batch_ = 0;  // batch of the last successful forward
};

}  // namespace distdl
