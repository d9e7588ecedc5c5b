#pragma once
// The data movement shared by the distributed pooling layers (layers/pool_max.hpp,
// layers/pool_avg.hpp): each worker of P_x holds its balanced piece of the global input
// x: N × C × L_1…L_D (D = 1, 2, 3) and must compute its balanced block of the global output
// (DESIGN §3) with the local kernels (kernels/pooling.hpp).
//
// Interior and rim (why: pooling is memory-bound, so copying the piece into a halo window
// costs as much as the pooling itself). The block is split into the interior box, whose
// windows read only this worker's piece (and boundary padding), pooled straight from x into y
// (and from dy into dx), and up to 2·D rim slabs, pooled from a rim buffer: the window of
// the block clipped to the global tensor (padding is left to the kernels, which clip), of
// which only the part the rim slabs read is filled each call (ghosts from their owners over
// the box-exchange engine, core/detail/box_exchange.hpp; the rest from x). The adjoint adds the
// rim slabs' gradients into a gradient buffer, adds its own part into dx and sends the ghosts
// back to their owners (added there). Buffers are members, allocated once, never zero-filled
// whole (pages nobody reads are never touched). Along the last dimension there are no rim
// slabs: the ghost columns beside the piece come in dense side arrays (kernels::pool_sides)
// that the interior's row sweep reads, so whole output rows are interior (a column of rim
// outputs would cost a cache line per row in every pass over it).
//
// Direct mode: when no worker's window reaches outside its piece, nothing moves and only the
// per-call shape check is agreed (a two-word status all-reduce).
//
// Every worker of the world constructs it (collective). The construction agrees on the
// arguments over the world before any check, so a refusal is the same on every worker. Per
// call: a wrong piece shape on one worker of P_x is the same invalid_argument on every worker
// of P_x (the status travels with the exchange's messages, or, in direct mode, one all-reduce).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/decomposition.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "kernels/pooling.hpp"
#include "layers/pool_options.hpp"

namespace distdl {

namespace detail {
template <class T>
class box_exchange;  // core/detail/box_exchange.hpp (private)
}

template <class T>
class pool_window {
  public:
    // kind: "MaxPool" or "AvgPool" (messages name the layer as kind + "1d"/"2d"/"3d").
    // P_x: rank N × C × spatial (any split, usually 1 × 1 × P_d…). options.input_shape given:
    // planned here; absent: learnt from the pieces at the first gather() (and again when a
    // piece changes).
    pool_window(const char* kind, const cartesian_partition& P_x, const pool_options& options, bool dilation_allowed);
    ~pool_window();

    const std::string& name() const { return name_; }  // e.g. "MaxPool2d"
    bool active() const { return P_x_.active(); }
    const cartesian_partition& partition() const { return P_x_; }
    bool direct() const { return !exchange_; }
    const kernels::pool_geometry& local_geometry() const { return local_; }
    // Whether the shapes are known (always with a given input_shape; after the first forward
    // otherwise). Before that the shapes below are empty.
    bool planned() const { return planned_; }
    // This worker's shapes (active workers).
    const shape_t& piece_shape() const { return piece_shape_; }
    const shape_t& output_shape() const { return output_shape_; }

    // The interior box of the block, pooled from x (arrays of piece_shape()).
    const kernels::pool_region& interior() const { return interior_; }
    // The rim slabs, pooled from rim_buffer() (arrays of rim_shape()).
    const std::vector<kernels::pool_region>& rim() const { return rim_; }
    const shape_t& rim_shape() const { return rim_shape_; }
    const T* rim_buffer() const { return buffer_.get(); }

    // Forward (active workers): agrees on x's shape over P_x (the same invalid_argument on
    // every worker of P_x when a piece is wrong) and fills the part of the rim buffer the rim
    // slabs read.
    void gather(const tensor<T>& x);
    // Adjoint (active workers): the rim gradient buffer, zero wherever the rim slabs add.
    T* rim_gradient();
    // The ghost columns of the last dimension beside the piece, for the interior (filled by
    // gather()); side_gradients(): their gradients, zeroed, for the interior's adjoint.
    kernels::pool_sides<const T> sides() const;
    kernels::pool_sides<T> side_gradients();
    // Adjoint: `problem` is this worker's complaint about its output gradient (empty: none;
    // then dx holds the interior's gradient and rim_gradient() the rim slabs'). Adds the rim
    // gradient into dx and into the owners of its ghosts; throws the same invalid_argument on
    // every worker of P_x when any worker has a problem.
    void scatter(const std::string& problem, tensor<T>& dx);

    // "<name>: worker r of P_x shape [...] expects <what> of shape [...], got [...]" or empty.
    std::string shape_problem(const tensor<T>& t, const shape_t& expected, const char* what) const;

  private:
    cartesian_partition P_x_;
    std::string name_;
    std::size_t dims_ = 0;
    std::vector<std::size_t> k_, s_, p_, d_;  // one entry per spatial dimension
    bool learn_ = false, planned_ = false;
    shape_t learnt_shape_;
    kernels::pool_geometry local_;
    shape_t piece_shape_, output_shape_, rim_shape_;
    shape_t piece_in_rim_start_, piece_in_rim_stop_;  // this worker's piece in rim-buffer indices
    std::vector<std::int64_t> rim_in_piece_;            // piece index of rim-buffer index 0
    kernels::pool_region interior_;
    std::vector<kernels::pool_region> rim_;
    std::vector<index_box> rim_reads_;  // disjoint boxes of the rim buffer the rim slabs read
    // The exchange runs on packed buffers (every box one contiguous range, so the engine
    // copies nothing); packing and unpacking the rim's short runs is done here.
    struct packed_box {
        shape_t start, extent;  // in the piece (sends) or the rim buffer (receives)
        std::size_t offset;     // in the packed buffer
    };
    std::unique_ptr<detail::box_exchange<T>> exchange_;
    std::vector<packed_box> sends_, receives_;
    std::vector<T> send_buffer_, receive_buffer_;
    std::unique_ptr<T[]> buffer_, gradient_;
    // A box copy planned once: `extent` at a_start in an array of a_shape (plus a_base: the
    // packed exchange buffer or the piece) and at b_start in one of b_shape (rim or side).
    struct copy_job {
        shape_t a_shape, a_start, b_shape, b_start, extent;
        std::size_t a_base = 0;
    };
    std::vector<copy_job> receive_to_rim_, piece_to_rim_;
    // A side array (kernels::pool_sides): `box` in rim-buffer indices, rim index `origin` is
    // its index 0; filled from the receives in the core's rows and in the rim slabs' rows.
    struct side_array {
        index_box box;
        shape_t shape, origin;
        std::size_t size = 0;  // volume of shape (0: no side array)
        std::vector<copy_job> receive_core, receive_rim;
        std::unique_ptr<T[]> values, gradient;
    };
    side_array left_, right_;
    std::size_t side_left_ = 0, side_right_ = 0;

    void plan(const shape_t& global_shape);
    void copy_own_rim(const tensor<T>& x);
    void pack_sends(const T* x);
    void unpack_receives();
    void plan_copies(bool sides, const shape_t& core_lo, const shape_t& core_hi);
    template <class F>
    static void run(const copy_job& job, F&& f);
};

}  // namespace distdl
