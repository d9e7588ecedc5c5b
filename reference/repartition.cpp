#include "reference/repartition.hpp"

#include "core/decomposition.hpp"
#include "core/error.hpp"

namespace distdl::ref {

std::vector<std::size_t> split_sizes(std::size_t n, std::size_t parts, split_kind kind) {
    DISTDL_REQUIRE(parts > 0, "ref::split_sizes: cannot split over 0 parts");
    std::vector<std::size_t> sizes(parts, n / parts);
    if (kind == split_kind::unbalanced) sizes[0] += n % parts;
    else
        for (std::size_t i = 0; i < n % parts; ++i) sizes[i] += 1;
    return sizes;
}


template <class T>
std::vector<tensor<T>> split(const tensor<T>& global, const shape_t& parts, split_kind kind) {
    const std::size_t dim = global.dimension();
    DISTDL_REQUIRE(parts.size() == dim, "ref::split: partition shape " << format_list(parts) << " for a tensor of shape "
                                                                       << format_list(shape_of(global)));
    std::vector<std::vector<std::size_t>> starts(dim), sizes(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        sizes[d] = split_sizes(global.shape()[d], parts[d], kind);
        starts[d].assign(parts[d], 0);
        for (std::size_t i = 1; i < parts[d]; ++i) starts[d][i] = starts[d][i - 1] + sizes[d][i - 1];
    }
    std::vector<tensor<T>> pieces;
    for (std::size_t r = 0; r < volume(parts); ++r) {
        const shape_t c = unravel_index(r, parts);
        xt::xstrided_slice_vector slices;
        for (std::size_t d = 0; d < dim; ++d)
            slices.push_back(xt::range(starts[d][c[d]], starts[d][c[d]] + sizes[d][c[d]]));
        pieces.emplace_back(xt::strided_view(global, slices));
    }
    return pieces;
}

template <class T>
tensor<T> assemble(const std::vector<tensor<T>>& pieces, const shape_t& parts) {
    const std::size_t dim = parts.size();
    DISTDL_REQUIRE(pieces.size() == volume(parts), "ref::assemble: " << pieces.size()
                                                                          << " pieces for partition shape "
                                                                          << format_list(parts));
    // Extent of each grid slab, read from the first worker of the slab and checked on all.
    std::vector<std::vector<std::size_t>> sizes(dim);
    for (std::size_t d = 0; d < dim; ++d) sizes[d].assign(parts[d], 0);
    for (std::size_t r = 0; r < pieces.size(); ++r) {
        const shape_t c = unravel_index(r, parts);
        DISTDL_REQUIRE(pieces[r].dimension() == dim, "ref::assemble: piece " << r << " has shape "
                                                                             << format_list(shape_of(pieces[r])));
        for (std::size_t d = 0; d < dim; ++d) {
            // The slab extent is fixed by the workers whose other indices are all zero.
            bool defines = true;
            for (std::size_t e = 0; e < dim; ++e)
                if (e != d && c[e] != 0) defines = false;
            if (defines) sizes[d][c[d]] = pieces[r].shape()[d];
        }
    }
    shape_t global_shape(dim, 0);
    std::vector<std::vector<std::size_t>> starts(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        starts[d].assign(parts[d], 0);
        for (std::size_t i = 0; i < parts[d]; ++i) {
            starts[d][i] = global_shape[d];
            global_shape[d] += sizes[d][i];
        }
    }
    tensor<T> global(global_shape);
    for (std::size_t r = 0; r < pieces.size(); ++r) {
        const shape_t c = unravel_index(r, parts);
        xt::xstrided_slice_vector slices;
        for (std::size_t d = 0; d < dim; ++d) {
            DISTDL_REQUIRE(pieces[r].shape()[d] == sizes[d][c[d]],
                           "ref::assemble: piece " << r << " has shape " << format_list(shape_of(pieces[r]))
                                                   << ", which does not fit its grid slab in dimension " << d);
            slices.push_back(xt::range(starts[d][c[d]], starts[d][c[d]] + sizes[d][c[d]]));
        }
        xt::noalias(xt::strided_view(global, slices)) = pieces[r];
    }
    return global;
}

template <class T>
std::vector<tensor<T>> repartition(const tensor<T>& global, const shape_t& P_y_shape) {
    return split(global, P_y_shape, split_kind::balanced);
}

template std::vector<tensor<float>> split(const tensor<float>&, const shape_t&, split_kind);
template std::vector<tensor<double>> split(const tensor<double>&, const shape_t&, split_kind);
template tensor<float> assemble(const std::vector<tensor<float>>&, const shape_t&);
template tensor<double> assemble(const std::vector<tensor<double>>&, const shape_t&);
template std::vector<tensor<float>> repartition(const tensor<float>&, const shape_t&);
template std::vector<tensor<double>> repartition(const tensor<double>&, const shape_t&);

}  // namespace distdl::ref
