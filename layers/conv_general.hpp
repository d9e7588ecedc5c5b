#pragma once
// GeneralConv1d/2d/3d (spec 004, DESIGN §3): y = w * x + b with x, y, w and b spread over three
// Cartesian partitions of one world; the one implementation of the distributed convolutions —
// FeatureConvNd (layers/conv_feature.hpp) and ChannelConvNd (layers/conv_channel.hpp) are its
// configurations and run this very code.
//
//   x: N x C_in x L_1..L_D   on P_x = 1 x P_ci x P_1..P_D   (balanced pieces)
//   y: N x C_out x m_1..m_D  on P_y = 1 x P_co x P_1..P_D   (balanced blocks of the output)
//   w: C_out x C_in x k_1..k_D on P_w = P_co x P_ci x P_1..P_D
// with m = floor((L + 2p - d(k-1) - 1)/s) + 1 per spatial dimension (stride s, zero padding p,
// dilation d, kernel k). Worker (co, ci, j) of P_w computes the contribution of input channels
// balanced(C_in, P_ci, ci) to output channels balanced(C_out, P_co, co) on output block
// balanced(m, P_j, j) (per spatial dimension).
//
// Forward:  1. The parameters go from their owners, the workers (co, ci, 0..0) of P_w, to the
//              rest of P_w (one broadcast of weight and bias together; none when P_1..P_D = 1).
//           2. HaloExchange on P_x: each worker's window of the zero-padded input for its output
//              block, padded in every spatial dimension (an unpartitioned one keeps its whole
//              extent plus its padding), so the local kernel pads nothing and reads the window
//              as it is; without any partitioned spatial dimension there is no exchange and the
//              kernel pads. Any geometry: halos wider than a neighbour's piece, pieces of size
//              zero, fewer outputs than workers.
//           3. Broadcast of the windows along P_co (none when P_x is P_w; the source of its own
//              copy keeps no copy when the kernel keeps its own for the backward pass).
//           4. Local convolution (kernels/convolution.hpp) without padding in the partitioned
//              dimensions; the bias is added on the workers whose input-channel index is 0.
//           5. SumReduce along P_ci into P_y (none when the reduction is the identity).
// Adjoint:  the transposes in reverse order: dy broadcast along P_ci, local backward (data and
//           weights), SumReduce of the window gradients along P_co into P_x, the HaloExchange's
//           adjoint; the weight and bias gradients are sum-reduced to their owners and ADDED to
//           their gradients (as autograd does); zero_grad() clears them.
//
// Parameters: "weight" on workers (co, ci, 0..0) of P_w: the block of the global weight with
// those output and input channels (possibly empty); "bias" on workers (co, 0, 0..0): its output
// channels. Initial values depend only on (seed, channels, kernel) (layers/conv_initial.hpp).
//
// Outputs: P_y workers get N x (their output channels) x (their output block); every other
// worker {0}. The adjoint gives P_x workers their input piece's shape, others {0}. Input on
// workers outside P_x is ignored.
//
// Errors: options and partitions are agreed on every worker of the world and checked at
// construction (before any other communication). With options.input_shape given, the layout is
// planned at construction and a piece off the plan is refused on every worker (the
// HaloExchange's per-call status carries it; without spatial partitioning, a marker along P_co
// and the disagreement it causes in the sum along P_ci, when every P_x worker is in P_w; else a
// two-word status all-reduce over P_x). Without it, the input pieces are checked at the first
// forward and whenever some piece changes shape (a new batch or extent): the P_x workers gather
// their shapes once and refuse pieces that are not the balanced split of one global tensor of
// the right channels, or a kernel that does not fit. Once shapes are known, a call moves data
// only: a change of shape is noticed by the HaloExchange's per-call status, or, without spatial
// partitioning and with every P_x worker in P_w, by the marker above (every worker of the layer
// then meets once in relayout(), the P_x workers plan again and the forward runs again; a
// two-word status all-reduce over P_x where the marker cannot reach everyone). The output
// gradient is checked against the last forward's output shape and the P_y workers agree on it
// (a two-word status all-reduce when P_y has several workers), except where the data carries a
// refusal: with a halo exchange when P_x = P_w and every P_y worker is in P_x (the
// HaloExchange's adjoint), and without spatial partitioning when every P_y worker is in P_w or
// P_x (a marker along P_ci, then a disagreement in the sum along P_co). At batch 0 with spatial
// partitioning (no halo exchange) a two-word status all-reduce over P_x stands in for it.
// A parameter (adjoint: or its gradient) that the program gave another shape than its block is
// refused on every worker too: its owner marks the parameters' broadcast, the windows' broadcast
// along P_co or dy's along P_ci, and the workers that know mark their terms of the sums; where
// that cannot reach every worker in time (forward: P_x workers outside P_w and P_y with P_ci > 1,
// or a worker of both at other positions in each; adjoint: P_y workers outside P_w and P_x) the
// workers of the layer agree on the parameters' shapes at the call's start (a two-word status
// all-reduce).
// adjoint() needs a successful forward().
//
// A refusal reaches every worker of the layer through the data; then, on the error path only,
// the workers of the layer (P_x, P_y and P_w together, a communicator made at construction) meet
// once more and the lowest-ranked one that knows the reason tells the others, so every worker
// throws the same message naming the refusing worker, what it was given and what was expected.
//
// Memory: windows, partial outputs, gradient buffers and the packed parameters are members,
// reused while shapes stay the same. Where the local kernel keeps its own copy of its input
// (kernels::convolution::retains_input: the direct engine) the layer keeps none for
// the weight gradient and hands the kernel x itself when the window is the piece; where the
// window of a halo exchange goes to this very worker's kernel, the exchange leaves its middle
// out and the kernel reads that from x (kernels::x_patch). A worker that
// receives a sum of which its own contribution is a term (y along P_ci, the window gradient
// along P_co) computes that term straight into its output and the sum runs in place there.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "core/partition.hpp"
#include "layers/conv_options.hpp"
#include "layers/conv_partitions.hpp"

namespace distdl {

template <class T>
class general_conv : public module<T> {
  public:
    // Collective over the world of the partitions (every worker constructs every layer).
    general_conv(std::size_t spatial_dims, const cartesian_partition& P_x, const cartesian_partition& P_y,
                 const cartesian_partition& P_w, std::size_t in_channels, std::size_t out_channels,
                 conv_options options);
    ~general_conv() override;

    std::vector<parameter<T>*> parameters() override;

    const std::string& name() const;  // "GeneralConv2d", "FeatureConv1d", ...
    conv_kind kind() const;
    const conv_spec& spec() const;

  protected:
    // The configurations: `kind` selects the partition rules and the name.
    general_conv(conv_kind kind, std::size_t spatial_dims, const cartesian_partition& P_x,
                 const cartesian_partition& P_y, const cartesian_partition& P_w, std::size_t in_channels,
                 std::size_t out_channels, conv_options options);

    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
};

}  // namespace distdl
