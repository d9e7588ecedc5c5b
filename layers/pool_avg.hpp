#pragma once
// AvgPool1d/2d/3d on a feature partition (DESIGN §3, issue 10): the serial average pooling of
// reference/pool.hpp (count_include_pad, no dilation), computed by the workers of P_x together.
//
//   x: N × C × L_1…L_D (D = 1, 2, 3), balanced over P_x (rank D + 2; usually 1 × 1 × P_1…P_D,
//      but batch and channels may be split too: pooling never mixes them)
//   y: N × C × m_1…m_D, m = floor((L + 2p − k)/s) + 1, balanced over the same P_x
//   y[n,c,j] = (Σ over the window {s·j + t − p : t = 0…k−1} of x, padding counting as 0) / (k_1⋯k_D)
//   Adjoint: dy[n,c,j] / (k_1⋯k_D) spread over its window (linear: no saved input).
//
// Algorithm (layers/pool_window.hpp): the interior of each worker's output block is pooled
// straight from its piece, the rim from a small buffer holding the ghosts and the rim of the
// piece; the adjoint spreads dy over the windows, and the ghosts' gradients go back to their
// owners. When no worker's window reaches outside its piece, nothing moves.
//
// Shapes, errors and memory as layers/pool_max.hpp, except that the adjoint needs no forward
// where the input shape is given (it depends on that shape only: the last forward may even have
// been refused); a dilation other than 1 is refused.
#include "core/module.hpp"
#include "core/partition.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_options.hpp"
#include "layers/pool_window.hpp"

namespace distdl {

template <class T>
class distributed_avg_pool : public module<T> {
  public:
    // Collective over the world of P_x (every worker constructs every layer).
    distributed_avg_pool(const cartesian_partition& P_x, pool_options options);
    ~distributed_avg_pool() override;

    const std::string& name() const { return window_.name(); }

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    pool_window<T> window_;
    kernels::avg_pool<T> kernel_;
};

}  // namespace distdl
