#pragma once
// Fast local convolution on one worker (Conv1d/2d/3d), the compute of the distributed conv
// layers. The meaning is reference/conv.hpp's; the geometry is fixed at construction
// (kernels/conv_geometry.hpp). The input is typically a local window already padded by a halo
// exchange (geometry padding 0), but any zero padding is supported.
//
// Shapes: x N × C_in × L…, w C_out × C_in × k…, b [C_out], y N × C_out × m…. Any of N, C_in,
// C_out may be 0.
//
//   forward(x, w, b, y)              y = w * x + b        (y overwritten; resized only if its
//                                                          shape differs, so reuse allocates nothing)
//                                    optionally with an x_patch: a box of x read from another
//                                    array (only where retains_input(): the direct engine)
//   backward_data(dy, w, x_shape, dx) dx = (∂y/∂x)ᵀ dy    (dx overwritten; resized likewise)
//   backward_weights(x, dy, dw, db)  dw += (∂y/∂w)ᵀ dy, db += Σ dy
//                                    (ACCUMULATES: zero dw/db first for a fresh gradient; dw
//                                     and db must already have their shapes)
//   backward(x, dy, w, dx, dw, db)   both backward passes at once, for training: x must be the
//                                    input of the last forward() and dy unchanged in between;
//                                    the copies of x and dy already converted to oneDNN's layout
//                                    are reused instead of converting them again (same results
//                                    as backward_data + backward_weights)
//   backward_last(dy, w, dx, dw, db) the same for the last forward's x, from this object's own
//                                    copy of it (only where retains_input(): the direct engine)
//   both take an optional dx_redirect: a box of dx delivered into another array instead
// b / db are null exactly when the geometry has no bias.
//
// Engines: float32 2-d convolutions with stride 1 and dilation 1 whose channel counts are narrow
// and not both multiples of 16, and 16 -> 16 on long output rows (known from the planned input
// shape given at construction), run on the direct engine
// (kernels/conv_direct.hpp: AVX-512, where the CPU has it; the rule and its measurements are in
// convolution.cpp). The engine is chosen once, at construction. Other float32 runs on
// oneDNN in its blocked layouts (channels-last when blocking would pad
// the channels: kernels/conv_onednn.hpp), with primitives, reorders and
// buffers cached per input shape inside the object; float64, and the float32 passes for which
// oneDNN only has its slow gemm path, run on tiled im2col + OpenBLAS. Everything runs
// single-threaded in the calling thread (kernels/threads.hpp).
//
// Thread safety: distinct objects may be used concurrently from different threads (no shared
// mutable state); one object must not be used by two threads at once (its caches and scratch
// are its own) — each worker owns its layers' objects.
#include <memory>
#include <string>

#include "core/tensor.hpp"
#include "kernels/conv_geometry.hpp"

namespace distdl::kernels {

enum class conv_engine {
    automatic,  // float32: direct where it is faster, else oneDNN where it is fast; im2col + BLAS otherwise
    im2col,     // always im2col + BLAS (tests, benchmarks)
    direct,     // float32: the direct engine wherever it can run, else as automatic (tests, benchmarks)
    onednn,     // float32: oneDNN where it is fast, im2col + BLAS otherwise (tests, benchmarks)
};

// Where backward() delivers part of dx elsewhere (e.g. a window gradient whose middle is the
// caller's own piece): the box of dx at `start` of `extent` (every dimension: images, channels,
// spatial) goes into `target`, an array of `target_shape`, at `target_start`; dx's elements in
// that box are then unspecified. The same values as without it, bit for bit; on the direct
// engine they go straight there (no extra pass over memory), elsewhere they are copied.
template <class T>
struct dx_redirect {
    shape_t start, extent;
    T* target = nullptr;
    shape_t target_shape, target_start;
};

// Where forward() reads part of x from another array (e.g. a halo window whose middle is the
// caller's own piece, which the window then need not hold): the box of x at `start` of `extent`
// (every dimension) is `source`, an array of `source_shape`, from `source_start`; x's elements
// in that box are not read. The same bits as with that box copied into x. The backward of that
// forward (backward_last) reads the kernel's own copy, patch included.
template <class T>
struct x_patch {
    shape_t start, extent;
    const T* source = nullptr;
    shape_t source_shape, source_start;
};

template <class T>
class convolution {
  public:
    // planned_x_shape: the input shape the object will mostly see (empty: not known); only
    // conv_engine::automatic reads it, to choose the engine (any shape still runs on any engine).
    explicit convolution(const conv_geometry& geometry, conv_engine engine = conv_engine::automatic,
                         const shape_t& planned_x_shape = {});
    ~convolution();
    convolution(convolution&&) noexcept;
    convolution& operator=(convolution&&) noexcept;

    const conv_geometry& geometry() const { return g_; }  // normalized: every vector spelled out
    shape_t weight_shape() const;
    shape_t output_shape(const shape_t& x_shape) const;

    void forward(const tensor<T>& x, const tensor<T>& w, const tensor<T>* b, tensor<T>& y,
                 const x_patch<T>* patch = nullptr);
    void backward_data(const tensor<T>& dy, const tensor<T>& w, const shape_t& x_shape, tensor<T>& dx);
    void backward_weights(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dw, tensor<T>* db);
    // Both backward passes at once (the same bits as backward_data + backward_weights). When x is
    // the very tensor of this object's last forward, that forward's converted copy of x is reused
    // (recognised by address): x must not have been modified since that forward.
    void backward(const tensor<T>& x, const tensor<T>& dy, const tensor<T>& w, tensor<T>& dx, tensor<T>& dw,
                  tensor<T>* db, const dx_redirect<T>* redirect = nullptr);
    // Whether this object keeps its own copy of each forward's input (the direct engine does:
    // its padded images), so that backward_last() needs no x.
    bool retains_input() const;
    // backward(x, dy, ...) for the x of this object's last forward(), from the copy it kept
    // (retains_input() must be true): the caller need not keep x, nor leave it unchanged.
    // Refused once a backward or backward_weights of another x has replaced that copy.
    void backward_last(const tensor<T>& dy, const tensor<T>& w, tensor<T>& dx, tensor<T>& dw, tensor<T>* db,
                       const dx_redirect<T>* redirect = nullptr);

    // Which engine ran the last pass: "direct:avx512", "onednn:<oneDNN implementation>" or
    // "im2col" (diagnostics).
    const std::string& last_engine() const;

  private:
    struct engines;
    void check_weight(const tensor<T>& w, const char* what) const;
    void check_parameters(const tensor<T>& w, const tensor<T>* b, const char* what, const char* bias_name) const;
    void check_output_gradient(const shape_t& x_shape, const tensor<T>& dy) const;
    void weights_pass(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dw, tensor<T>* db, bool reuse_converted);
    void direct_backward(const shape_t& x_shape, const T* x, const tensor<T>& dy, const tensor<T>& w, tensor<T>& dx,
                         tensor<T>& dw, tensor<T>* db, const dx_redirect<T>* redirect);
    void check_redirect(const shape_t& x_shape, const dx_redirect<T>& redirect) const;
    void check_patch(const shape_t& x_shape, const x_patch<T>& patch) const;

    conv_geometry g_;
    conv_engine engine_;
    std::unique_ptr<engines> engines_;
};

}  // namespace distdl::kernels
