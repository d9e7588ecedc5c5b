#include "reference/sum_reduce.hpp"

#include "core/error.hpp"
#include "reference/broadcast.hpp"

namespace distdl::ref {

std::vector<std::size_t> sum_reduce_destinations(const shape_t& P_x_shape, const shape_t& P_y_shape,
                                                 bool transpose_src, bool transpose_dest) {
    return detail::pair_workers(P_x_shape, P_y_shape, transpose_src, transpose_dest, false);
}

template <class T>
std::vector<tensor<T>> sum_reduce(const std::vector<tensor<T>>& x, const shape_t& P_x_shape, const shape_t& P_y_shape,
                                  bool transpose_src, bool transpose_dest) {
    const auto dest = sum_reduce_destinations(P_x_shape, P_y_shape, transpose_src, transpose_dest);
    return detail::sum_by_partner(x, dest, volume(P_y_shape), "SumReduce");
}

template <class T>
std::vector<tensor<T>> sum_reduce_adjoint(const std::vector<tensor<T>>& dy, const shape_t& P_x_shape,
                                          const shape_t& P_y_shape, bool transpose_src, bool transpose_dest) {
    const auto dest = sum_reduce_destinations(P_x_shape, P_y_shape, transpose_src, transpose_dest);
    DISTDL_REQUIRE(dy.size() == volume(P_y_shape), "SumReduce: " << dy.size() << " pieces given for P_y shape "
                                                                 << format_list(P_y_shape));
    std::vector<tensor<T>> dx;
    dx.reserve(dest.size());
    for (auto q : dest) dx.push_back(dy[q]);
    return dx;
}

#define DISTDL_REF_SUM_REDUCE_INSTANTIATE(T)                                                                          \
    template std::vector<tensor<T>> sum_reduce(const std::vector<tensor<T>>&, const shape_t&, const shape_t&, bool,    \
                                               bool);                                                                 \
    template std::vector<tensor<T>> sum_reduce_adjoint(const std::vector<tensor<T>>&, const shape_t&, const shape_t&, \
                                                       bool, bool);

DISTDL_REF_SUM_REDUCE_INSTANTIATE(float)
DISTDL_REF_SUM_REDUCE_INSTANTIATE(double)

#undef DISTDL_REF_SUM_REDUCE_INSTANTIATE

}  // namespace distdl::ref
