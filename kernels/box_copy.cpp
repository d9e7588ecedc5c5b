#include "kernels/box_copy.hpp"

#include <algorithm>

#include "core/detail/box_copy.hpp"

namespace distdl::kernels {

template <class T>
void copy_box(const T* src, const shape_t& src_shape, const shape_t& src_start, T* dst, const shape_t& dst_shape,
              const shape_t& dst_start, const shape_t& extent, copy_mode mode) {
    const std::size_t rank = extent.size();
    DISTDL_REQUIRE(src_shape.size() == rank && dst_shape.size() == rank && src_start.size() == rank &&
                       dst_start.size() == rank,
                   "kernels::copy_box: ranks differ (source shape " << format_list(src_shape) << ", start "
                       << format_list(src_start) << "; destination shape " << format_list(dst_shape) << ", start "
                       << format_list(dst_start) << "; extent " << format_list(extent) << ")");
    for (std::size_t e = 0; e < rank; ++e)
        DISTDL_REQUIRE(src_start[e] + extent[e] <= src_shape[e] && dst_start[e] + extent[e] <= dst_shape[e],
                       "kernels::copy_box: box of extent " << format_list(extent) << " at source "
                           << format_list(src_start) << " / destination " << format_list(dst_start)
                           << " leaves source shape " << format_list(src_shape) << " or destination shape "
                           << format_list(dst_shape) << " in dimension " << e);
    // The walk itself is the primitives' (one loop of runs, columns element by element).
    detail::copy_checked_box(src, src_shape, src_start.data(), dst, dst_shape, dst_start.data(), extent,
                             mode == copy_mode::assign ? detail::box_op::assign : detail::box_op::add);
}

template <class T>
void copy_box(const tensor<T>& src, const shape_t& src_start, tensor<T>& dst, const shape_t& dst_start,
              const shape_t& extent, copy_mode mode) {
    copy_box(src.data(), shape_of(src), src_start, dst.data(), shape_of(dst), dst_start, extent, mode);
}

template <class T>
void pad(const tensor<T>& x, const shape_t& lower, const shape_t& upper, tensor<T>& out) {
    const shape_t shape = shape_of(x);
    DISTDL_REQUIRE(lower.size() == shape.size() && upper.size() == shape.size(),
                   "kernels::pad: padding " << format_list(lower) << " / " << format_list(upper)
                                            << " for a tensor of shape " << format_list(shape));
    shape_t padded(shape.size());
    for (std::size_t e = 0; e < shape.size(); ++e) padded[e] = lower[e] + shape[e] + upper[e];
    if (shape_of(out) != padded) out.resize(padded);
    std::fill(out.begin(), out.end(), T(0));
    copy_box(x.data(), shape, shape_t(shape.size(), 0), out.data(), padded, lower, shape);
}

#define DISTDL_INSTANTIATE(T)                                                                                   \
    template void copy_box(const T*, const shape_t&, const shape_t&, T*, const shape_t&, const shape_t&,       \
                           const shape_t&, copy_mode);                                                          \
    template void copy_box(const tensor<T>&, const shape_t&, tensor<T>&, const shape_t&, const shape_t&,       \
                           copy_mode);                                                                          \
    template void pad(const tensor<T>&, const shape_t&, const shape_t&, tensor<T>&);
DISTDL_INSTANTIATE(int)
DISTDL_INSTANTIATE(float)
DISTDL_INSTANTIATE(double)
#undef DISTDL_INSTANTIATE

}  // namespace distdl::kernels
