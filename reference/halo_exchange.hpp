#pragma once
// Serial meaning of HaloExchange (spec 004 "convolution mixin", DESIGN §3), computed
// independently of core/'s code paths (plain index arithmetic and xtensor views).
//
// Along each dimension, with kernel size k, stride s, padding p and dilation d, the output
// of a kernel over a length-n input has m = floor((n + 2p - d(k-1) - 1)/s) + 1 entries, and
// output index j reads padded input indices s*j + d*t, t = 0..k-1. The output is split
// balanced over the partition (worker i gets [a, b), DESIGN §3), so worker i needs padded
// indices [s*a, s*(b-1) + d(k-1) + 1) (nothing when b == a). HaloExchange's forward gives
// each worker exactly that window of the zero-padded global tensor; its adjoint adds every
// window back into the owners' balanced pieces of the unpadded tensor (padding is dropped).
//
// Geometry vectors have one entry per tensor dimension. Workers are listed in row-major order
// of their grid index, as in core/partition.hpp. Kernels that do not fit (m == 0), zero
// kernel sizes, strides or dilations, and length mismatches throw distdl::invalid_argument.
#include <cstddef>
#include <vector>

#include "core/tensor.hpp"

namespace distdl::ref {

// Longest padded length (n + 2p) the oracle takes: it counts output positions one by one.
constexpr std::size_t max_padded_length = std::size_t{1} << 32;

// m above (0 when the kernel does not fit). Sizes that overflow 64 bits, or padded lengths
// above max_padded_length, throw distdl::invalid_argument.
std::size_t kernel_output_length(std::size_t n, std::size_t k, std::size_t s, std::size_t p, std::size_t d);

// Padded-index window [first, last) of worker i of `parts` along one dimension.
struct halo_window {
    std::size_t first;
    std::size_t last;
};
halo_window halo_window_of(std::size_t n, std::size_t parts, std::size_t i, std::size_t k, std::size_t s,
                           std::size_t p, std::size_t d);

// Forward: for every worker of a partition of shape P_x_shape, its window of the zero-padded
// global tensor (shape: window extents; a dimension with an empty output block has extent 0).
template <class T>
std::vector<tensor<T>> halo_exchange(const tensor<T>& global, const shape_t& P_x_shape,
                                     const std::vector<std::size_t>& kernel_size,
                                     const std::vector<std::size_t>& stride,
                                     const std::vector<std::size_t>& padding,
                                     const std::vector<std::size_t>& dilation);

// Adjoint: given every worker's window values (shapes as forward returns), each worker's
// balanced piece of the unpadded global tensor after all windows are summed into it.
template <class T>
std::vector<tensor<T>> halo_exchange_adjoint(const std::vector<tensor<T>>& windows, const shape_t& global_shape,
                                             const shape_t& P_x_shape,
                                             const std::vector<std::size_t>& kernel_size,
                                             const std::vector<std::size_t>& stride,
                                             const std::vector<std::size_t>& padding,
                                             const std::vector<std::size_t>& dilation);

}  // namespace distdl::ref
