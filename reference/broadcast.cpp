#include "reference/broadcast.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace distdl::ref {

namespace detail {

namespace {

shape_t maybe_reversed(const shape_t& shape, bool reverse) {
    return reverse ? shape_t(shape.rbegin(), shape.rend()) : shape;
}

std::string described(const shape_t& shape, bool transposed) {
    return format_list(shape) + (transposed ? " (transposed)" : "");
}

}  // namespace

std::vector<std::size_t> pair_workers(const shape_t& P_x_shape, const shape_t& P_y_shape, bool transpose_src,
                                      bool transpose_dest, bool broadcasting) {
    const char* layer = broadcasting ? "Broadcast" : "SumReduce";
    const std::string what = std::string(layer) + ": P_x shape " + described(P_x_shape, transpose_src) +
                             (broadcasting ? " cannot broadcast to" : " cannot reduce to") + " P_y shape " +
                             described(P_y_shape, transpose_dest);
    // "one": one worker per team (the broadcast source, the reduction destination).
    const shape_t& one = broadcasting ? P_x_shape : P_y_shape;
    const shape_t& many = broadcasting ? P_y_shape : P_x_shape;
    const bool one_t = broadcasting ? transpose_src : transpose_dest;
    const bool many_t = broadcasting ? transpose_dest : transpose_src;
    DISTDL_REQUIRE_AS(one.size() <= many.size(), partition_error,
                      what << " (" << (broadcasting ? "P_x" : "P_y") << " has dimension " << one.size() << " > "
                           << many.size() << ")");
    const std::size_t n = many.size();
    shape_t e_one(n - one.size(), 1);
    const shape_t r_one = maybe_reversed(one, one_t);
    e_one.insert(e_one.end(), r_one.begin(), r_one.end());
    const shape_t e_many = maybe_reversed(many, many_t);
    std::vector<bool> matched(n);
    for (std::size_t d = 0; d < n; ++d) {
        const std::size_t ex = broadcasting ? e_one[d] : e_many[d];
        const std::size_t ey = broadcasting ? e_many[d] : e_one[d];
        DISTDL_REQUIRE_AS(e_one[d] == e_many[d] || e_one[d] == 1, partition_error,
                          what << " (dimension " << d << ": " << ex << " vs " << ey << ")");
        matched[d] = e_one[d] == e_many[d];
    }
    std::size_t count = 1;
    for (auto s : many) count *= s;
    std::vector<std::size_t> partner(count);
    shape_t coords(n);
    for (std::size_t r = 0; r < count; ++r) {
        // Row-major coordinates of rank r in the original shape.
        std::size_t rest = r;
        for (std::size_t k = n; k-- > 0;) {
            coords[k] = rest % many[k];
            rest /= many[k];
        }
        std::size_t key = 0;
        for (std::size_t k = 0; k < n; ++k) {
            // Original dimension k is effective dimension n-1-k when transposed.
            const std::size_t d = many_t ? n - 1 - k : k;
            if (matched[d]) key = key * many[k] + coords[k];
        }
        partner[r] = key;
    }
    return partner;
}

template <class T>
std::vector<tensor<T>> sum_by_partner(const std::vector<tensor<T>>& pieces, const std::vector<std::size_t>& partner,
                                      std::size_t partners, const char* layer) {
    DISTDL_REQUIRE(pieces.size() == partner.size(),
                   layer << ": " << pieces.size() << " pieces given for a partition of " << partner.size() << " workers");
    std::vector<tensor<T>> out(partners);
    std::vector<bool> started(partners, false);
    std::vector<std::size_t> first(partners, 0);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
        const std::size_t k = partner[i];
        if (!started[k]) {
            out[k] = pieces[i];
            started[k] = true;
            first[k] = i;
            continue;
        }
        DISTDL_REQUIRE(shape_of(pieces[i]) == shape_of(out[k]),
                       layer << ": pieces summed together must have one shape, but rank " << first[k] << " holds "
                             << format_list(shape_of(out[k])) << " and rank " << i << " holds "
                             << format_list(shape_of(pieces[i])));
        out[k] += pieces[i];
    }
    return out;
}

template std::vector<tensor<float>> sum_by_partner(const std::vector<tensor<float>>&, const std::vector<std::size_t>&,
                                                   std::size_t, const char*);
template std::vector<tensor<double>> sum_by_partner(const std::vector<tensor<double>>&,
                                                    const std::vector<std::size_t>&, std::size_t, const char*);

}  // namespace detail

std::vector<std::size_t> broadcast_sources(const shape_t& P_x_shape, const shape_t& P_y_shape, bool transpose_src,
                                           bool transpose_dest) {
    return detail::pair_workers(P_x_shape, P_y_shape, transpose_src, transpose_dest, true);
}

template <class T>
std::vector<tensor<T>> broadcast(const std::vector<tensor<T>>& x, const shape_t& P_x_shape, const shape_t& P_y_shape,
                                 bool transpose_src, bool transpose_dest) {
    const auto source = broadcast_sources(P_x_shape, P_y_shape, transpose_src, transpose_dest);
    DISTDL_REQUIRE(x.size() == volume(P_x_shape), "Broadcast: " << x.size() << " pieces given for P_x shape "
                                                                << format_list(P_x_shape));
    std::vector<tensor<T>> y;
    y.reserve(source.size());
    for (auto p : source) y.push_back(x[p]);
    return y;
}

template <class T>
std::vector<tensor<T>> broadcast_adjoint(const std::vector<tensor<T>>& dy, const shape_t& P_x_shape,
                                         const shape_t& P_y_shape, bool transpose_src, bool transpose_dest) {
    const auto source = broadcast_sources(P_x_shape, P_y_shape, transpose_src, transpose_dest);
    return detail::sum_by_partner(dy, source, volume(P_x_shape), "Broadcast");
}

#define DISTDL_REF_BROADCAST_INSTANTIATE(T)                                                                       \
    template std::vector<tensor<T>> broadcast(const std::vector<tensor<T>>&, const shape_t&, const shape_t&, bool, \
                                              bool);                                                              \
    template std::vector<tensor<T>> broadcast_adjoint(const std::vector<tensor<T>>&, const shape_t&, const shape_t&, \
                                                      bool, bool);

DISTDL_REF_BROADCAST_INSTANTIATE(float)
DISTDL_REF_BROADCAST_INSTANTIATE(double)

#undef DISTDL_REF_BROADCAST_INSTANTIATE

}  // namespace distdl::ref
