#include "reference/all_sum_reduce.hpp"

#include "core/error.hpp"
#include "reference/broadcast.hpp"

namespace distdl::ref {

std::vector<std::size_t> all_sum_reduce_teams(const shape_t& P_x_shape, const std::vector<std::size_t>& axes_reduce) {
    const std::size_t n = P_x_shape.size();
    std::vector<bool> reduced(n, false);
    for (auto a : axes_reduce) {
        DISTDL_REQUIRE_AS(a < n, partition_error,
                          "AllSumReduce: axis " << a << " out of range for P_x shape " << format_list(P_x_shape));
        DISTDL_REQUIRE_AS(!reduced[a], partition_error,
                          "AllSumReduce: axis " << a << " repeated in axes_reduce " << format_list(axes_reduce));
        reduced[a] = true;
    }
    // Team leader: the same coordinates with every reduced coordinate set to 0.
    const std::size_t count = volume(P_x_shape);
    std::vector<std::size_t> leader(count);
    shape_t coords(n);
    for (std::size_t r = 0; r < count; ++r) {
        std::size_t rest = r;
        for (std::size_t k = n; k-- > 0;) {
            coords[k] = rest % P_x_shape[k];
            rest /= P_x_shape[k];
        }
        std::size_t lead = 0;
        for (std::size_t k = 0; k < n; ++k) lead = lead * P_x_shape[k] + (reduced[k] ? 0 : coords[k]);
        leader[r] = lead;
    }
    return leader;
}

template <class T>
std::vector<tensor<T>> all_sum_reduce(const std::vector<tensor<T>>& x, const shape_t& P_x_shape,
                                      const std::vector<std::size_t>& axes_reduce) {
    const auto leader = all_sum_reduce_teams(P_x_shape, axes_reduce);
    const auto sums = detail::sum_by_partner(x, leader, leader.size(), "AllSumReduce");
    std::vector<tensor<T>> y;
    y.reserve(leader.size());
    for (auto l : leader) y.push_back(sums[l]);
    return y;
}

template std::vector<tensor<float>> all_sum_reduce(const std::vector<tensor<float>>&, const shape_t&,
                                                   const std::vector<std::size_t>&);
template std::vector<tensor<double>> all_sum_reduce(const std::vector<tensor<double>>&, const shape_t&,
                                                    const std::vector<std::size_t>&);

}  // namespace distdl::ref
