#include "kernels/convolution.hpp"

#include <algorithm>
#include <optional>
#include <type_traits>

#include "core/detail/box_copy.hpp"
#include "kernels/conv_direct.hpp"
#include "kernels/conv_im2col.hpp"
#include "kernels/conv_onednn.hpp"
#include "kernels/conv_problem.hpp"
#include "kernels/threads.hpp"

namespace distdl::kernels {

namespace {

// Where conv_engine::automatic takes the direct engine (when it supports the geometry and CPU):
// 2-d, a channel count not a multiple of 16, neither above 32 — where it was measured faster than
// oneDNN. conv_bench, batch 8, 3x3 same padding unless noted, forward + backward (both passes),
// ms, direct vs oneDNN, AVX-512 Xeon, one thread, a shared machine (±10%):
//   8->8 256x256 22 vs 42;  8->16 130x256 (padding 0,1) 25 vs 30;  3->16 256x256 27 vs 48;
//   4->4 256x256 6.0 vs 18.7;  24->24 128x128 34 vs 54;  32->8 128x128 17.5 vs 31;
//   8->32 128x128 18 vs 27;  8->8 5x5 128x128 9.7 vs 21.5;  8->8 1x1 256x256 10.5 vs 21.6;
//   8->8 30x30 0.28 vs 0.43;  8->8 64x20 0.60 vs 0.60.
// Multiples of 16: 16->16 takes the direct engine when the output rows are long and fill whole
// vectors of 16 (width >= 96, at most 5% of the lanes of a row's vectors idle), known from the
// input shape given at construction (without it, oneDNN: at most 20% slower). Measured (the same
// conditions, 3x3, padding 0 | 1, output width = input width - 2 | input width):
//   16->16 130x130 14.9 vs 18.8 | 19.2 vs 18.4 (130 outputs: the last vector of each row holds 2);
//          192x192 34.6 vs 41.3 | 37.6 vs 45.5;  256x256 64.9 vs 79.2 | 65.8 vs 82.7;
//          256x512 142 vs 152 | 143 vs 165;  64x64 4.0 vs 3.9 | 3.7 vs 4.2;  32x32 1.05 vs 0.88 | 0.96 vs 0.99.
// Other multiples of 16 stay on oneDNN: with 32 channels on either side the direct engine is at
// best 5-15% faster (192x192, 256x256), as slow at 256x512 and 20-45% slower at 32x32 and 64x64:
//   16->32 256x256 131 vs 143 | 128 vs 146, 256x512 279 vs 273 | 288 vs 295, 64x64 10.7 vs 7.3;
//   32->16 256x256 128 vs 142 | 130 vs 147, 256x512 282 vs 283;  32->32 256x256 234 vs 251 |
//   239 vs 265, 256x512 510 vs 492 | 526 vs 519, 32x32 6.6 vs 4.6;  48->48 64x64 34 vs 30;
//   64->48 64x64 47 vs 41;  64->64 32x32 18 vs 13.
// 1-d runs on the same kernels (one row) but was not measured against oneDNN.
bool direct_is_faster(const conv_geometry& g, const shape_t& planned_x_shape) {
    if (g.kernel_size.size() != 2 || g.in_channels > 32 || g.out_channels > 32) return false;
    if (g.in_channels % 16 != 0 || g.out_channels % 16 != 0) return true;
    if (g.in_channels != 16 || g.out_channels != 16) return false;
    if (planned_x_shape.size() != 4) return false;  // not known: oneDNN, which never loses by much
    // Output width at stride 1 (the direct engine's; at other strides it does not run anyway).
    const std::size_t padded = planned_x_shape[3] + 2 * g.padding[1], span = g.dilation[1] * (g.kernel_size[1] - 1) + 1;
    const std::size_t width = padded >= span ? padded - span + 1 : 0;
    const std::size_t lanes = (width + 15) / 16 * 16;
    return width >= 96 && (lanes - width) * 20 <= width;
}

// Delivers the redirected box of a computed dx into its target (the engines that cannot write
// it there themselves).
template <class T>
void copy_redirected(const tensor<T>& dx, const dx_redirect<T>& r) {
    ::distdl::detail::copy_box(dx.data(), shape_of(dx), r.start, r.target, r.target_shape, r.target_start, r.extent,
                               ::distdl::detail::box_op::assign);
}

// A patch's or a redirect's boxes (`what`: "forward: an x patch", ...): every list of the
// array's rank, the other array given, and the box inside both arrays.
void require_boxes(const char* what, const char* array, const shape_t& shape, const shape_t& start,
                   const shape_t& extent, const char* other, bool other_given, const shape_t& other_shape,
                   const shape_t& other_start) {
    const std::size_t rank = shape.size();
    DISTDL_REQUIRE(start.size() == rank && extent.size() == rank && other_shape.size() == rank &&
                       other_start.size() == rank && (other_given || volume(extent) == 0),
                   "kernels::convolution::" << what << " needs start, extent, " << other << " shape and " << other
                                            << " start of rank " << rank << " and a " << other);
    const auto inside = [&](const shape_t& s, const shape_t& at, const char* name) {
        DISTDL_REQUIRE(box_lies_inside(s, at, extent), "kernels::convolution::" << what << ": its box at "
                                                                                << format_list(at) << " of extent "
                                                                                << format_list(extent)
                                                                                << " does not lie inside " << name
                                                                                << " of shape " << format_list(s));
    };
    inside(shape, start, array);
    inside(other_shape, other_start, other);
}

template <class T>
bool spans_images_and_channels(const shape_t& x_shape, const dx_redirect<T>& r) {
    return r.start[0] == 0 && r.start[1] == 0 && r.extent[0] == x_shape[0] && r.extent[1] == x_shape[1] &&
           x_shape.size() <= 4;
}

// A box of a 1-d or 2-d problem's array in the direct engine's terms (1-d: one row), and the
// strides of the other array (of `other_shape`) it is delivered to or read from.
struct plane_box {
    std::ptrdiff_t row0, rows, col0, cols, image, plane, stride;
};

plane_box lift_box(const shape_t& x_shape, const shape_t& start, const shape_t& extent, const shape_t& other_shape) {
    using idx = std::ptrdiff_t;
    const std::size_t w = x_shape.size() - 1;
    const shape_t& os = other_shape;
    const idx plane = w == 3 ? idx(os[2] * os[3]) : idx(os[2]);
    return {w == 3 ? idx(start[2]) : 0, w == 3 ? idx(extent[2]) : 1, idx(start[w]), idx(extent[w]),
            idx(os[1]) * plane,         plane,                          idx(os[w])};
}

// The redirect in the direct engine's terms; requires spans_images_and_channels.
template <class T>
detail::direct_convolution::dx_redirect lift_redirect(const shape_t& x_shape, const dx_redirect<T>& r) {
    const plane_box b = lift_box(x_shape, r.start, r.extent, r.target_shape);
    detail::direct_convolution::dx_redirect d{b.row0, b.rows, b.col0, b.cols, nullptr, b.image, b.plane, b.stride};
    if constexpr (std::is_same_v<T, float>)
        d.target = r.target + ::distdl::detail::box_offset(r.target_shape, r.target_start);
    return d;
}

// The patch in the direct engine's terms.
detail::direct_convolution::x_patch lift_patch(const shape_t& x_shape, const x_patch<float>& p) {
    using idx = std::ptrdiff_t;
    const plane_box b = lift_box(x_shape, p.start, p.extent, p.source_shape);
    return {idx(p.start[0]),
            idx(p.extent[0]),
            idx(p.start[1]),
            idx(p.extent[1]),
            b.row0,
            b.rows,
            b.col0,
            b.cols,
            p.source + ::distdl::detail::box_offset(p.source_shape, p.source_start),
            b.image,
            b.plane,
            b.stride};
}

}  // namespace

template <class T>
struct convolution<T>::engines {
    detail::im2col_convolution<T> im2col;
    std::unique_ptr<detail::direct_convolution> direct;  // float32, where it is chosen
    std::unique_ptr<detail::onednn_convolution> onednn;  // float32 with conv_engine::automatic
    std::string last = "none";
    std::optional<shape_t> forward_shape;  // x's shape in the last forward (since the last failed check)

    bool used_onednn(bool ran) {
        if (ran) last = "onednn:" + onednn->last_implementation();
        else last = "im2col";
        return ran;
    }
    void used_direct() { last = std::string("direct:") + detail::direct_convolution::isa(); }
};

template <class T>
const std::string& convolution<T>::last_engine() const {
    return engines_->last;
}

template <class T>
convolution<T>::convolution(const conv_geometry& geometry, conv_engine engine, const shape_t& planned_x_shape)
    : g_(normalized(geometry)), engine_(engine), engines_(std::make_unique<engines>()) {
    if (!std::is_same_v<T, float> || engine_ == conv_engine::im2col) return;
    const bool direct = engine_ == conv_engine::direct ||
                        (engine_ == conv_engine::automatic && direct_is_faster(g_, planned_x_shape));
    if (direct && detail::direct_convolution::supports(g_))
        engines_->direct = std::make_unique<detail::direct_convolution>(g_);
    else
        engines_->onednn = std::make_unique<detail::onednn_convolution>(g_);
}

template <class T>
convolution<T>::~convolution() = default;
template <class T>
convolution<T>::convolution(convolution&&) noexcept = default;
template <class T>
convolution<T>& convolution<T>::operator=(convolution&&) noexcept = default;

template <class T>
shape_t convolution<T>::weight_shape() const {
    shape_t shape{g_.out_channels, g_.in_channels};
    shape.insert(shape.end(), g_.kernel_size.begin(), g_.kernel_size.end());
    return shape;
}

template <class T>
shape_t convolution<T>::output_shape(const shape_t& x_shape) const {
    return conv_output_shape(g_, x_shape);
}

template <class T>
void convolution<T>::check_weight(const tensor<T>& w, const char* what) const {
    DISTDL_REQUIRE(shape_of(w) == weight_shape(), "kernels::convolution::" << what << ": weight shape "
                                                                           << format_list(w.shape()) << ", expected "
                                                                           << format_list(weight_shape()));
}

template <class T>
void convolution<T>::check_parameters(const tensor<T>& w, const tensor<T>* b, const char* what,
                                      const char* bias_name) const {
    check_weight(w, what);
    DISTDL_REQUIRE((b != nullptr) == g_.bias, "kernels::convolution::" << what << ": " << bias_name
                                                                       << (g_.bias ? " missing (the geometry has a bias)"
                                                                                   : " given (the geometry has none)"));
    if (b)
        DISTDL_REQUIRE(b->dimension() == 1 && b->size() == g_.out_channels,
                       "kernels::convolution::" << what << ": " << bias_name << " shape " << format_list(b->shape())
                                                << ", expected [" << g_.out_channels << "]");
}

template <class T>
void convolution<T>::check_output_gradient(const shape_t& x_shape, const tensor<T>& dy) const {
    DISTDL_REQUIRE(shape_of(dy) == output_shape(x_shape), "kernels::convolution: output gradient shape "
                                                              << format_list(dy.shape()) << ", expected "
                                                              << format_list(output_shape(x_shape))
                                                              << " for input shape " << format_list(x_shape));
}

template <class T>
void convolution<T>::forward(const tensor<T>& x, const tensor<T>& w, const tensor<T>* b, tensor<T>& y,
                             const x_patch<T>* patch) {
    const shape_t x_shape = shape_of(x);
    const shape_t y_shape = output_shape(x_shape);
    engines_->forward_shape.reset();
    check_parameters(w, b, "forward", "bias");
    if (patch) check_patch(x_shape, *patch);
    engines_->forward_shape = x_shape;
    if (shape_of(y) != y_shape) y.resize(y_shape);
    if (engines_->onednn) engines_->onednn->forget_last_passes();  // until this forward runs there
    if (y.size() == 0) return;
    apply_thread_policy();
    if (g_.in_channels == 0) {  // no terms: the bias alone
        const std::size_t M = y.size() / (y_shape[0] * y_shape[1]);
        for (std::size_t n = 0; n < y_shape[0]; ++n)
            for (std::size_t co = 0; co < y_shape[1]; ++co)
                std::fill_n(y.data() + (n * y_shape[1] + co) * M, M, b ? b->data()[co] : T(0));
        return;
    }
    const T* bias = b ? b->data() : nullptr;
    if constexpr (std::is_same_v<T, float>) {
        if (engines_->direct) {
            std::optional<detail::direct_convolution::x_patch> direct_patch;
            if (patch) direct_patch = lift_patch(x_shape, *patch);
            engines_->direct->forward(x_shape, x.data(), w.data(), bias, y.data(),
                                      direct_patch ? &*direct_patch : nullptr);
            engines_->used_direct();
            return;
        }
        if (engines_->onednn &&
            engines_->used_onednn(engines_->onednn->forward(x_shape, x.data(), w.data(), bias, y.data())))
            return;
    }
    engines_->last = "im2col";
    engines_->im2col.forward(detail::lift(g_, x_shape, y_shape), x.data(), w.data(), bias, y.data());
}

template <class T>
void convolution<T>::backward_data(const tensor<T>& dy, const tensor<T>& w, const shape_t& x_shape, tensor<T>& dx) {
    check_output_gradient(x_shape, dy);
    check_weight(w, "backward_data");
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    if (dx.size() == 0) return;
    if (dy.size() == 0) {  // no output channels: x does not reach y
        std::fill(dx.begin(), dx.end(), T(0));
        return;
    }
    apply_thread_policy();
    if constexpr (std::is_same_v<T, float>) {
        if (engines_->direct) {
            engines_->direct->backward_data(x_shape, dy.data(), w.data(), dx.data());
            engines_->used_direct();
            return;
        }
        if (engines_->onednn &&
            engines_->used_onednn(engines_->onednn->backward_data(x_shape, dy.data(), w.data(), dx.data())))
            return;
    }
    engines_->last = "im2col";
    engines_->im2col.backward_data(detail::lift(g_, x_shape, shape_of(dy)), dy.data(), w.data(), dx.data());
}

template <class T>
void convolution<T>::backward_weights(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dw, tensor<T>* db) {
    weights_pass(x, dy, dw, db, false);
}

template <class T>
void convolution<T>::check_patch(const shape_t& x_shape, const x_patch<T>& p) const {
    DISTDL_REQUIRE(retains_input(), "kernels::convolution::forward: an x patch needs an engine that keeps its input "
                                    "(the direct engine); this object runs on "
                                        << (engines_->onednn ? "oneDNN" : "im2col"));
    require_boxes("forward: an x patch", "x", x_shape, p.start, p.extent, "source", p.source != nullptr, p.source_shape,
                  p.source_start);
}

template <class T>
void convolution<T>::check_redirect(const shape_t& x_shape, const dx_redirect<T>& r) const {
    require_boxes("backward: a dx redirect", "dx", x_shape, r.start, r.extent, "target", r.target != nullptr,
                  r.target_shape, r.target_start);
}

template <class T>
void convolution<T>::backward(const tensor<T>& x, const tensor<T>& dy, const tensor<T>& w, tensor<T>& dx,
                              tensor<T>& dw, tensor<T>* db, const dx_redirect<T>* redirect) {
    if (redirect) check_redirect(shape_of(x), *redirect);
    if (engines_->direct) return direct_backward(shape_of(x), x.data(), dy, w, dx, dw, db, redirect);
    backward_data(dy, w, shape_of(x), dx);
    if (redirect) copy_redirected(dx, *redirect);
    weights_pass(x, dy, dw, db, true);
}

template <class T>
bool convolution<T>::retains_input() const {
    return engines_->direct != nullptr;
}

template <class T>
void convolution<T>::backward_last(const tensor<T>& dy, const tensor<T>& w, tensor<T>& dx, tensor<T>& dw,
                                   tensor<T>* db, const dx_redirect<T>* redirect) {
    DISTDL_REQUIRE(retains_input() && engines_->forward_shape,
                   "kernels::convolution::backward_last: needs a forward() first on an engine that keeps its input ("
                       << (retains_input() ? "no forward yet" : "this engine does not") << ")");
    if (redirect) check_redirect(*engines_->forward_shape, *redirect);
    direct_backward(*engines_->forward_shape, nullptr, dy, w, dx, dw, db, redirect);
}

// Both backward passes on the direct engine, one image of dy at a time (x null: the copy of the
// last forward's input that the engine holds).
template <class T>
void convolution<T>::direct_backward(const shape_t& x_shape, const T* x, const tensor<T>& dy, const tensor<T>& w,
                                     tensor<T>& dx, tensor<T>& dw, tensor<T>* db, const dx_redirect<T>* redirect) {
    check_output_gradient(x_shape, dy);
    check_weight(w, "backward_data");
    check_parameters(dw, db, "backward_weights", "bias gradient");
    if (shape_of(dx) != x_shape) dx.resize(x_shape);
    if (dy.size() == 0) {  // no output channels or no outputs: nothing reaches y
        std::fill(dx.begin(), dx.end(), T(0));
        if (redirect) copy_redirected(dx, *redirect);
        return;
    }
    if constexpr (std::is_same_v<T, float>) {
        apply_thread_policy();
        // The engine writes the redirected box straight into the target when it spans every
        // image and channel (always so for a halo window); otherwise it is copied afterwards.
        std::optional<detail::direct_convolution::dx_redirect> direct_redirect;
        if (redirect && spans_images_and_channels(x_shape, *redirect))
            direct_redirect = lift_redirect(x_shape, *redirect);
        engines_->direct->backward(x_shape, x, dy.data(), w.data(), dx.size() > 0 ? dx.data() : nullptr, dw.data(),
                                   db ? db->data() : nullptr, true, direct_redirect ? &*direct_redirect : nullptr);
        engines_->used_direct();
        if (redirect && !direct_redirect) copy_redirected(dx, *redirect);
    }
}

template <class T>
void convolution<T>::weights_pass(const tensor<T>& x, const tensor<T>& dy, tensor<T>& dw, tensor<T>* db,
                                  bool reuse_converted) {
    const shape_t x_shape = shape_of(x);
    check_output_gradient(x_shape, dy);
    check_parameters(dw, db, "backward_weights", "bias gradient");
    if (dy.size() == 0) return;  // nothing to add
    apply_thread_policy();
    T* bias = db ? db->data() : nullptr;
    if constexpr (std::is_same_v<T, float>) {
        if (engines_->direct) {
            engines_->direct->backward_weights(x_shape, x.data(), dy.data(), dw.data(), bias);
            engines_->used_direct();
            return;
        }
        if (x.size() > 0 && engines_->onednn &&
            engines_->used_onednn(
                engines_->onednn->backward_weights(x_shape, x.data(), dy.data(), dw.data(), bias, reuse_converted)))
            return;
    }
    engines_->last = "im2col";
    engines_->im2col.backward_weights(detail::lift(g_, x_shape, shape_of(dy)), x.data(), dy.data(), dw.data(), bias);
}

template class convolution<float>;
template class convolution<double>;

}  // namespace distdl::kernels
