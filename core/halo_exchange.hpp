#pragma once
// HaloExchange (spec 004, DESIGN §3): each worker of P_x holds its balanced piece of a global
// tensor; forward returns the window of the zero-padded global tensor that the worker needs to
// compute its balanced block of the output of a kernel (size k, stride s, padding p,
// dilation d per dimension): for output indices [a, b) that window is padded indices
// [s*a, s*(b-1) + d*(k-1) + 1) (empty when the block is empty). Halos may be negative or
// wider than a neighbour's piece. Adjoint: ghost values are added back into their owners.
#include <memory>
#include <vector>

#include "core/module.hpp"
#include "core/partition.hpp"

namespace distdl {

struct kernel_geometry {
    std::vector<std::size_t> kernel_size;  // one entry per tensor dimension
    std::vector<std::size_t> stride;
    std::vector<std::size_t> padding;
    std::vector<std::size_t> dilation;
};

// Output length of a kernel along one dimension: floor((n + 2p - d(k-1) - 1)/s) + 1, or 0
// when the kernel does not fit.
std::size_t kernel_output_length(std::size_t n, std::size_t k, std::size_t s, std::size_t p, std::size_t d);

template <class T>
class halo_exchange : public module<T> {
  public:
    // global_shape: the global input shape (rank == dim(P_x)).
    halo_exchange(const cartesian_partition& P_x, shape_t global_shape, kernel_geometry geometry);
    ~halo_exchange() override;

    // For a caller that keeps its window to itself between calls (the convolution layers), so
    // that no copy and no fill serves only the distribution:
    //   forward_kept(x, window)      forward(x, window), except that the padding is zeroed
    //                                only when the window is (re)allocated or is not the tensor
    //                                of the last forward_kept (by address and shape): the
    //                                caller must not write into the window in between.
    //                                own_part_left_out: the own part (own_part's box) is not
    //                                copied, its elements of the window are unspecified: for a
    //                                caller that reads them from x itself (the direct conv
    //                                engine's x_patch), one pass over the piece less.
    //   own_part(...)                the box of the window that this worker's own piece fills:
    //                                false when there is none; else its start in the window,
    //                                its start in the piece and its extent.
    //   adjoint_own_part_placed(dy, dx)  adjoint(dy, dx) where the caller has already put dy's
    //                                own part into dx (of the piece's shape; own_part's box):
    //                                that part of dy is not read, the rest of dx is zeroed and
    //                                the peers' parts are added as adjoint() does (the same bits).
    void forward_kept(const tensor<T>& x, tensor<T>& window, bool own_part_left_out = false);
    bool own_part(shape_t& window_start, shape_t& piece_start, shape_t& extent) const;
    void adjoint_own_part_placed(const tensor<T>& dy, tensor<T>& dx);

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override;
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override;

  private:
    struct state;
    std::unique_ptr<state> state_;
    void run_forward(const tensor<T>& x, tensor<T>& y, bool fill_padding, bool own_part_left_out);
    void run_adjoint(const tensor<T>& dy, tensor<T>& dx, bool own_part_placed);
};

}  // namespace distdl
