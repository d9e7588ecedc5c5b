#pragma once
// Internal: float32 convolution passes through oneDNN, in oneDNN's own blocked layouts (memory
// format `any`; channels-last where a blocked layout would pad the channels), with the primitives, the reorders from and to the plain row-major tensors and
// the blocked buffers built once per input shape and reused. Every primitive runs with a
// user-managed scratchpad owned here, so objects on different threads never share scratch.
// A pass returns false when oneDNN has only its slow gemm or reference implementation for it
// (e.g. 3-d backward weights; backward passes with stride and dilation together) or cannot
// express it; the caller then uses the im2col path. One object serves one thread at a time.
#include <map>
#include <memory>
#include <string>

#include "kernels/conv_geometry.hpp"

namespace distdl::kernels::detail {

class onednn_convolution {
  public:
    explicit onednn_convolution(const conv_geometry& normalized_geometry);
    ~onednn_convolution();
    onednn_convolution(const onednn_convolution&) = delete;
    onednn_convolution& operator=(const onednn_convolution&) = delete;

    // y = w * x + b (b null without bias), overwriting y.
    bool forward(const shape_t& x_shape, const float* x, const float* w, const float* b, float* y);
    // dx (overwritten) = adjoint with respect to x.
    bool backward_data(const shape_t& x_shape, const float* dy, const float* w, float* dx);
    // dw += adjoint with respect to w, db += adjoint with respect to b (db null without bias).
    // reuse_converted: x is the unchanged input of the last forward and dy the unchanged output
    // gradient of the last backward_data, so their converted copies from those passes serve.
    bool backward_weights(const shape_t& x_shape, const float* x, const float* dy, float* dw, float* db,
                          bool reuse_converted = false);

    // Forget which forward and backward_data passes ran last (their converted x and dy are then
    // not reused): the caller calls this before a forward that may not reach this object.
    void forget_last_passes() {
        last_forward_ = nullptr;
        last_backward_data_ = nullptr;
    }

    // oneDNN's implementation name for the last pass planned (diagnostics, benchmarks).
    const std::string& last_implementation() const { return last_impl_; }

  private:
    struct plan;
    plan& plan_for(const shape_t& x_shape);

    conv_geometry g_;
    struct runtime;
    std::unique_ptr<runtime> rt_;
    std::map<shape_t, std::unique_ptr<plan>> plans_;
    const plan* last_forward_ = nullptr;        // the plan of the last forward that ran here
    const plan* last_backward_data_ = nullptr;  // likewise for backward_data
    std::string last_impl_;
};

}  // namespace distdl::kernels::detail
