#pragma once
// MaxPool1d/2d/3d on a feature partition (DESIGN §3, issue 10): the serial max pooling of
// reference/pool.hpp, computed by the workers of P_x together.
//
//   x: N × C × L_1…L_D (D = 1, 2, 3), balanced over P_x (rank D + 2; usually 1 × 1 × P_1…P_D,
//      but batch and channels may be split too: pooling never mixes them)
//   y: N × C × m_1…m_D, m = floor((L + 2p − d(k−1) − 1)/s) + 1, balanced over the same P_x
//   y[n,c,j] = max over the window {s·j + d·t − p : t = 0…k−1} of x, padding counting as −∞
//   (a window of padding only gives −∞); stride defaults to the kernel size.
//   Adjoint at the input of the last forward: dy[n,c,j] goes to the FIRST maximum of its window
//   (row-major window order), as the reference.
//
// Algorithm (layers/pool_window.hpp): the interior of each worker's output block is pooled
// straight from its piece, the rim from a small buffer holding the ghosts from the neighbours
// and the rim of the piece; the forward saves each output's maximum (its position), so the
// adjoint routes dy there without x, and the ghosts' gradients go back to their owners. When
// no worker's window reaches outside its piece, nothing moves.
//
// Shapes: options.input_shape given: the global input shape is fixed (and planned) at
// construction; absent: learnt from the pieces at the first forward (one all-gather over P_x)
// and again whenever a piece changes (a piece that is not part of a balanced split is refused
// on every worker of P_x). Workers outside P_x pass and get
// {0}. An empty output block (fewer outputs than workers) gives a zero-volume block.
// Errors: arguments are agreed on every worker of the world at construction and refused there
// (kernel that does not fit, bad lists, P_x of another rank); a piece of the wrong shape is
// refused on every worker of P_x at the call. adjoint() needs a successful forward() first.
// Memory: the saved maxima (one 32-bit index per output) and the rim buffers are members,
// reused; nothing large is allocated per call. Padding is never a maximum (as the reference),
// also for windows whose real inputs are all −∞ or NaN.
#include <memory>

#include "core/module.hpp"
#include "core/partition.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_options.hpp"
#include "layers/pool_window.hpp"

namespace distdl {

template <class T>
class distributed_max_pool : public module<T> {
  public:
    // Collective over the world of P_x (every worker constructs every layer).
    distributed_max_pool(const cartesian_partition& P_x, pool_options options);
    ~distributed_max_pool() override;

    const std::string& name() const { return window_.name(); }

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    pool_window<T> window_;
    kernels::max_pool<T> kernel_;
    kernels::pool_argmax argmax_;  // each output's maximum in the last forward (x or the rim buffer)
    bool forward_done_ = false;
};

}  // namespace distdl
