#pragma once
// Internal: float32 direct convolution for stride 1 and dilation 1 in 1-d and 2-d (1-d runs as
// 2-d with one row), on the plain row-major tensors, with AVX-512 kernels chosen at run time
// (the CPU must have AVX-512F; elsewhere cpu_supported(), and so supports(), is false and the
// caller uses another engine).
// Made for narrow channel slices (e.g. 8 channels), where oneDNN runs at half its 16-channel
// rate.
//
//   forward           per output row, a register tile of up to 8 output channels × 2–4 vectors
//                     of 16 output columns accumulates over input channels and kernel taps
//                     (weights as broadcast operands), from a zero-padded copy of one image
//   backward data     stride 1: the forward kernel on dy padded by k−1−p, with the weights
//                     flipped and transposed
//   backward weights  per (input channel, kernel row), vector partial sums of up to 4 output
//                     channels × 3 kernel columns accumulate over blocks of rows of all images;
//                     one horizontal sum per weight at the end
//
// Every pass works an image in bands of output rows (about one L2 of rows per band), each band's
// rows copied just before its passes read them, so they are read from L2 rather than from the L3
// that the cores share (a whole 256 x 256 image of 16 channels, 4 MB, does not fit a 1 MB L2).
//
// Copies: forward copies x, zero-padded, into one slot per image and keeps them; the backward
// of that very input (backward with reuse_x) reads them instead of copying x again. The copy's
// rows start on 64-byte boundaries, with or without padding: read in place, rows of a length
// that is not a multiple of 16 (a halo window's 130) make most vectors straddle two cache lines,
// and on AVX-512 Zen 5 that cost more than the copy (conv_bench's conv_local 16 -> 16 on
// 130 x 130, padding 0: 11.2 ms per step in place, 9.6 ms through the copy). Both backward passes
// read one zero-padded copy of each image of dy, made once (its rows 64-byte aligned for the
// weights pass; its sums taken on the way for db). Scratch (padded images, packed weights,
// partial sums) lives in the object and is reused across calls; one object serves one thread
// at a time.
#include <cstddef>
#include <vector>

#include "kernels/conv_geometry.hpp"

namespace distdl::kernels::detail {

class direct_convolution {
  public:
    // Where the backward-data pass writes part of dx instead (backward with a redirect): rows
    // row0 … row0 + rows − 1 and columns col0 … col0 + cols − 1 of every plane of dx (1-d: row
    // 0) go to target + n·image + c·plane + (row − row0)·stride + (column − col0); dx's own
    // elements there are left unwritten. A redirected row is computed in tiles that start at
    // the box's first column, so the target's vectors are stored whole, at the target's own
    // alignment; the narrow strips beside the box column by column. (Storing the row's usual
    // tiles under two masks measured slower in session 12: the box starts a column off those
    // vectors, so every masked store straddled two cache lines; a scratch row copied out
    // afterwards, until session 27, cost more than the tiles and columns.)
    struct dx_redirect {
        std::ptrdiff_t row0 = 0, rows = 0, col0 = 0, cols = 0;
        float* target = nullptr;
        std::ptrdiff_t image = 0, plane = 0, stride = 0;
    };

    // Where forward reads part of x from elsewhere (forward with a patch): of images n0 … n0 +
    // images − 1, channels c0 … c0 + channels − 1, rows row0 … row0 + rows − 1 and columns col0 …
    // col0 + cols − 1 (1-d: row 0), element (n, c, row, column) is source[(n − n0)·image + (c −
    // c0)·plane + (row − row0)·stride + (column − col0)]; x's own elements there are not read.
    struct x_patch {
        std::ptrdiff_t n0 = 0, images = 0, c0 = 0, channels = 0, row0 = 0, rows = 0, col0 = 0, cols = 0;
        const float* source = nullptr;
        std::ptrdiff_t image = 0, plane = 0, stride = 0;
    };

    // Whether this CPU has the instruction set of the kernels (AVX-512F).
    static bool cpu_supported();
    // Whether the engine can run this normalized geometry here: 1 or 2 spatial dimensions,
    // stride 1, dilation 1, and cpu_supported().
    static bool supports(const conv_geometry& normalized_geometry);
    // The name of the instruction set the kernels use: "avx512".
    static const char* isa();

    // Requires supports(g).
    explicit direct_convolution(const conv_geometry& normalized_geometry);

    // y (overwritten) = w * x + b (b null without bias), x read through `patch` when given.
    // Requires C_in > 0.
    void forward(const shape_t& x_shape, const float* x, const float* w, const float* b, float* y,
                 const x_patch* patch = nullptr);
    // dx (overwritten) = adjoint with respect to x.
    void backward_data(const shape_t& x_shape, const float* dy, const float* w, float* dx);
    // dw += adjoint with respect to w, db += adjoint with respect to b (db may be null).
    void backward_weights(const shape_t& x_shape, const float* x, const float* dy, float* dw, float* db);
    // Both passes over each image of dy in turn (dx null: x has no elements, no data pass; the
    // same bits as the passes alone). reuse_x: when this object's last forward ran on
    // x (the same address and shape; x null: whatever address) and x is unchanged since, its
    // padded copy serves and x is not read; otherwise x (not null) is copied again.
    void backward(const shape_t& x_shape, const float* x, const float* dy, const float* w, float* dx, float* dw,
                  float* db, bool reuse_x, const dx_redirect* redirect = nullptr);
    // Whether the padded copy of the last forward's input (of this shape; at this address unless
    // x is null) is still held; with x null, not since replaced by a backward's copy of another x.
    bool holds_input(const shape_t& x_shape, const float* x) const;

    // Zeroed floats starting on a 64-byte boundary, so that vectors of 16 at multiples of 16
    // never straddle two cache lines (a split load costs two); resize() keeps the capacity.
    class aligned_floats {
      public:
        void resize(std::size_t n);  // every element zero
        float* data() { return start_; }
        const float* data() const { return start_; }

      private:
        std::vector<float> storage_;
        float* start_ = nullptr;
    };

    // Zero-padded copies of `images` images: each `channels` planes of `rows` rows of `stride`
    // floats (a multiple of 16), the data at (pad_h, lead); everything else stays zero (reset
    // when the layout changes).
    struct padded_image {
        std::ptrdiff_t images = 0, channels = 0, rows = 0, stride = 0, height = 0, width = 0, pad_h = 0, lead = 0;
        aligned_floats data;

        void prepare(std::ptrdiff_t images, std::ptrdiff_t channels, std::ptrdiff_t rows, std::ptrdiff_t stride,
                     std::ptrdiff_t height, std::ptrdiff_t width, std::ptrdiff_t pad_h, std::ptrdiff_t lead);
        // Slot n, which holds rows 0 … r0 − 1 of the image (channels × height × width,
        // row-major), gets rows r0 … r1 − 1 of every channel too, the patch's box (when given)
        // from its source; returns r1.
        std::ptrdiff_t fill_up_to(std::ptrdiff_t n, const float* image, std::ptrdiff_t r0, std::ptrdiff_t r1,
                                  const x_patch* patch = nullptr);
        std::ptrdiff_t plane() const { return rows * stride; }
        float* slot_data(std::ptrdiff_t n) { return data.data() + n * channels * plane(); }
    };

  private:
    void passes(const shape_t& x_shape, const float* x, const float* dy, const float* w, float* dx, float* dw,
                float* db, bool data_pass, bool weights, bool reuse_x, const dx_redirect* redirect);

    conv_geometry g_;
    padded_image x_pad_, dy_pad_;
    std::vector<float> packed_;        // weights as the forward kernel reads them
    aligned_floats partial_sums_;      // backward weights: 16 lanes per weight
    // What x_pad_ holds: the input of the last forward (or of a backward that copied x).
    bool x_held_ = false;
    bool x_held_from_forward_ = false;  // the last forward's: what a backward without x reads
    shape_t x_held_shape_;
    const float* x_held_address_ = nullptr;
};

}  // namespace distdl::kernels::detail
