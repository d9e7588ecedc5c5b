#pragma once
// Shared by the serial convolution and pooling oracles: per-spatial-dimension parameters and
// the lift of a 1-d or 2-d problem to 3-d (extra leading spatial dimensions of extent 1, kernel 1,
// stride 1, padding 0, dilation 1), so one obvious 3-d loop nest serves 1-d, 2-d and 3-d.
#include <array>
#include <cstddef>
#include <string>

#include "core/tensor.hpp"

namespace distdl::ref {

// One entry per spatial dimension, or a single entry used for every spatial dimension.
using per_dim = std::vector<std::size_t>;

// `values` expanded to `dims` entries (a single value repeated); `fallback` when empty.
inline per_dim expand_per_dim(const per_dim& values, std::size_t dims, const per_dim& fallback,
                              const std::string& what, const std::string& layer) {
    if (values.empty()) return fallback;
    if (values.size() == 1) return per_dim(dims, values[0]);
    DISTDL_REQUIRE(values.size() == dims, layer << ": " << what << " " << format_list(values) << " has "
                                                << values.size() << " entries, expected "
                                                << (dims == 1 ? std::string("1 (one spatial dimension)")
                                                              : "1 or " + std::to_string(dims) +
                                                                    " (one per spatial dimension)"));
    return values;
}

// The last `values.size()` entries of a 3-array that holds `fill` elsewhere.
inline std::array<std::size_t, 3> lift3(const per_dim& values, std::size_t fill) {
    std::array<std::size_t, 3> out{fill, fill, fill};
    const std::size_t offset = 3 - values.size();
    for (std::size_t e = 0; e < values.size(); ++e) out[offset + e] = values[e];
    return out;
}

// N × C × spatial → N × C × 1… × spatial (rank 5).
inline shape_t lift_shape5(const shape_t& shape) {
    shape_t out{shape[0], shape[1], 1, 1, 1};
    const std::size_t offset = 5 - shape.size();
    for (std::size_t e = 2; e < shape.size(); ++e) out[offset + e] = shape[e];
    return out;
}

// A copy of an N × C × spatial tensor reshaped to rank 5 (lift_shape5).
template <class T>
tensor<T> lifted(const tensor<T>& t) {
    tensor<T> out = t;
    out.reshape(lift_shape5(shape_of(t)));
    return out;
}

// Index i of the zero-padded input as an index into the unpadded input; false when it falls
// into the padding. (i counts from the start of the padded input.)
inline bool unpadded_index(std::size_t i, std::size_t pad, std::size_t length, std::size_t& out) {
    if (i < pad || i - pad >= length) return false;
    out = i - pad;
    return true;
}

}  // namespace distdl::ref
