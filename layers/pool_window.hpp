#pragma once
// The data movement shared by the distributed pooling layers (layers/pool_max.hpp,
// layers/pool_avg.hpp): each worker of P_x holds its balanced piece of the global input
// x: N × C × L_1…L_D (D = 1, 2, 3) and must compute its balanced block of the global output
// (DESIGN §3) with a local pooling kernel of padding 0. pool_window gives it the window of the
// padded global input that block reads (HaloExchange, core/halo_exchange.hpp), with the
// boundary padding set to the value the pooling needs (0 for average, −∞ for max: a zero
// padding would win a max window whose inputs are all negative), and sends window gradients
// back to their owners (the HaloExchange adjoint).
//
// Direct mode: when no worker's window differs from its own piece (no halo, no padding: e.g.
// kernel = stride dividing every piece evenly), nothing moves and the piece itself is the
// window; the layer then pools x straight into y and dy straight into dx.
//
// Every worker of the world constructs it (collective). The construction agrees on the
// arguments over the world before any check, so a refusal is the same on every worker. Per
// call: a wrong piece shape on one worker of P_x is the same invalid_argument on every worker
// of P_x (the HaloExchange's per-call status, or, in direct mode, one status all-reduce).
#include <memory>
#include <string>

#include "core/halo_exchange.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_options.hpp"

namespace distdl {

template <class T>
class pool_window {
  public:
    // kind: "MaxPool" or "AvgPool" (messages name the layer as kind + "1d"/"2d"/"3d").
    // global_shape: N × C × spatial; P_x of the same rank (any split, usually 1 × 1 × P_d…).
    pool_window(const char* kind, const cartesian_partition& P_x, shape_t global_shape, const pool_options& options,
                bool dilation_allowed);
    ~pool_window();

    const std::string& name() const { return name_; }  // e.g. "MaxPool2d"
    bool active() const { return P_x_.active(); }
    const cartesian_partition& partition() const { return P_x_; }
    bool direct() const { return direct_; }
    // The local kernel's geometry (padding 0) and this worker's shapes (active workers).
    const kernels::pool_geometry& local_geometry() const { return local_; }
    const shape_t& piece_shape() const { return piece_shape_; }
    const shape_t& window_shape() const { return window_shape_; }
    const shape_t& output_shape() const { return output_shape_; }
    // Whether the local kernel has anything to compute (every spatial window extent > 0).
    bool computes() const { return computes_; }

    // Forward (active workers): the window of the padded input this worker's block reads, with
    // padding set to `padding_value`: x itself in direct mode, otherwise a member reused
    // between calls. Throws the same invalid_argument on every worker of P_x when a piece
    // has the wrong shape.
    const tensor<T>& gather(const tensor<T>& x, T padding_value);
    // Adjoint (active workers): `problem` is this worker's complaint about its output gradient
    // (empty: none); throws on every worker of P_x when any worker has one. In direct mode it
    // is the only agreement of the call; otherwise scatter() agrees again on its own argument.
    void agree(const std::string& problem);
    // Adjoint, exchange mode: adds the window gradient into the owners' pieces (dx: piece shape).
    void scatter(const tensor<T>& dwindow, tensor<T>& dx);

    // "<name>: worker r of P_x shape [...] expects <what> of shape [...], got [...]" or empty.
    std::string shape_problem(const tensor<T>& t, const shape_t& expected, const char* what) const;

  private:
    cartesian_partition P_x_;
    std::string name_;
    kernels::pool_geometry local_;
    shape_t piece_shape_, window_shape_, output_shape_;
    shape_t inside_start_, inside_extent_;  // the part of the window that is not padding
    bool has_padding_ = false, computes_ = false, direct_ = false;
    std::unique_ptr<halo_exchange<T>> halo_;
    tensor<T> window_;
};

}  // namespace distdl
