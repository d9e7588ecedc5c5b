#pragma once
// Box walks of the pooling layers' rim (layers/pool_window.cpp): a box of one row-major array
// and the same box of another, visited one innermost run at a time with plain nested loops
// (rank ≤ 5). Why not core/detail/box_copy.hpp: the rim is mostly runs of 1 to 3 elements
// (one column of ghosts, the kernel's reach into the piece), where a per-run odometer and a
// library call cost more than the data.
#include <array>
#include <cstddef>
#include <type_traits>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

// f(a_offset, b_offset, run) for every innermost run of the box `extent`, which starts at
// a_start in an array of a_shape and at b_start in one of b_shape (all of one rank ≤ 5).
template <class F>
void for_each_run(const shape_t& a_shape, const shape_t& a_start, const shape_t& b_shape, const shape_t& b_start,
                  const shape_t& extent, F&& f) {
    const std::size_t rank = extent.size();
    DISTDL_REQUIRE_AS(rank >= 1 && rank <= 5 && a_shape.size() == rank && b_shape.size() == rank &&
                          a_start.size() == rank && b_start.size() == rank,
                      ::distdl::error, "internal error: pool rim box of rank " << rank);
    if (volume(extent) == 0) return;
    for (std::size_t t = 0; t < rank; ++t)
        DISTDL_REQUIRE_AS(a_start[t] + extent[t] <= a_shape[t] && b_start[t] + extent[t] <= b_shape[t], ::distdl::error,
                          "internal error: pool rim box " << format_list(extent) << " at " << format_list(a_start)
                                                          << " / " << format_list(b_start) << " leaves "
                                                          << format_list(a_shape) << " / " << format_list(b_shape));
    std::array<std::size_t, 5> n{1, 1, 1, 1, 1}, as{0, 0, 0, 0, 0}, bs{0, 0, 0, 0, 0};
    std::size_t a0 = 0, b0 = 0, a_stride = 1, b_stride = 1;
    for (std::size_t t = rank; t-- > 0;) {
        const std::size_t u = 5 - rank + t;
        n[u] = extent[t];
        as[u] = a_stride;
        bs[u] = b_stride;
        a0 += a_start[t] * a_stride;
        b0 += b_start[t] * b_stride;
        a_stride *= a_shape[t];
        b_stride *= b_shape[t];
    }
    // Short runs get a compile-time length, so the copy loops inside f unroll.
    const auto walk = [&](auto run) {
        for (std::size_t i0 = 0; i0 < n[0]; ++i0)
            for (std::size_t i1 = 0; i1 < n[1]; ++i1)
                for (std::size_t i2 = 0; i2 < n[2]; ++i2) {
                    std::size_t a = a0 + i0 * as[0] + i1 * as[1] + i2 * as[2];
                    std::size_t b = b0 + i0 * bs[0] + i1 * bs[1] + i2 * bs[2];
                    for (std::size_t i3 = 0; i3 < n[3]; ++i3, a += as[3], b += bs[3]) f(a, b, std::size_t(run));
                }
    };
    switch (n[4]) {
        case 1: return walk(std::integral_constant<std::size_t, 1>{});
        case 2: return walk(std::integral_constant<std::size_t, 2>{});
        case 3: return walk(std::integral_constant<std::size_t, 3>{});
        default: return walk(n[4]);
    }
}

}  // namespace distdl::detail
