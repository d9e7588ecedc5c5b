#pragma once
// Helpers of the layer checks: the global data every worker builds identically, column
// blocks of it, a worker's piece of it, and comparisons within the arithmetic tolerance of T.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/decomposition.hpp"
#include "reference/repartition.hpp"
#include "tests/primitives/primitive_test_util.hpp"
#include "verify/checks.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::testing {

template <class T>
double arithmetic_tolerance() {
    return verify::equivalence_tolerance(dtype_of<T>());
}

// Columns balanced(n, parts, part) of a matrix.
template <class T>
tensor<T> column_block(const tensor<T>& m, std::size_t parts, std::size_t part) {
    const std::size_t n = m.shape()[1], c0 = balanced_start(n, parts, part), c1 = balanced_stop(n, parts, part);
    tensor<T> out(shape_t{m.shape()[0], c1 - c0});
    for (std::size_t r = 0; r < m.shape()[0]; ++r)
        for (std::size_t c = c0; c < c1; ++c) out(r, c - c0) = m(r, c);
    return out;
}

// Rows balanced(rows, row_parts, r) x columns balanced(cols, col_parts, c) of a matrix.
template <class T>
tensor<T> matrix_block(const tensor<T>& m, std::size_t row_parts, std::size_t r, std::size_t col_parts, std::size_t c) {
    const std::size_t rows = m.shape()[0], cols = m.shape()[1];
    const std::size_t r0 = balanced_start(rows, row_parts, r), r1 = balanced_stop(rows, row_parts, r);
    const std::size_t c0 = balanced_start(cols, col_parts, c), c1 = balanced_stop(cols, col_parts, c);
    tensor<T> out(shape_t{r1 - r0, c1 - c0});
    for (std::size_t i = r0; i < r1; ++i)
        for (std::size_t j = c0; j < c1; ++j) out(i - r0, j - c0) = m(i, j);
    return out;
}

template <class T>
tensor<T> vector_block(const tensor<T>& v, std::size_t parts, std::size_t part) {
    const std::size_t n = v.size(), i0 = balanced_start(n, parts, part), i1 = balanced_stop(n, parts, part);
    tensor<T> out(shape_t{i1 - i0});
    for (std::size_t i = i0; i < i1; ++i) out(i - i0) = v(i);
    return out;
}

// Same shape and every element within the tolerance of T relative to the largest |want|, or to
// `scale` when larger (the largest |value| of the whole tensor that `want` is a piece of).
template <class T>
void check_close(const tensor<T>& got, const tensor<T>& want, const std::string& what, double scale = 0) {
    const auto compared = verify::compare_piece(got, want, false, arithmetic_tolerance<T>(), what, scale);
    if (!compared.problem.empty()) DCHECK_FAIL_(compared.problem);
}

// The world size a layout on these worker lists needs: its largest world rank + 1.
inline int world_size_for(std::initializer_list<const std::vector<int>*> lists) {
    int m = 0;
    for (const auto* v : lists)
        for (int w : *v) m = std::max(m, w + 1);
    return m;
}

// World rank `me`'s piece of `global` split (balanced) over a partition of `shape` on
// `workers`, or the zero-volume tensor of a worker outside it.
template <class T>
tensor<T> piece_of(const tensor<T>& global, const shape_t& shape, const std::vector<int>& workers, int me) {
    const int at = verify::runners::rank_in(workers, std::size_t(me));
    return at >= 0 ? ref::split(global, shape)[std::size_t(at)] : zero_volume<T>();
}

// `got` is world rank `me`'s piece of `global` (check_close, `scale` as there), or empty
// outside the partition.
template <class T>
void check_piece_of(const tensor<T>& got, const tensor<T>& global, const shape_t& shape,
                    const std::vector<int>& workers, int me, const std::string& what, double scale = 0) {
    if (verify::runners::rank_in(workers, std::size_t(me)) >= 0)
        check_close(got, piece_of(global, shape, workers, me), what, scale);
    else DCHECK_EQ(got.size(), std::size_t(0));
}

// Parameter `index` of `layer` (its value, or with `is_grad` its gradient) given the shape `odd`
// on the worker that is `owner`, for one call: `call` is refused with `text` on every worker of
// the layer (`in_layer`; elsewhere it returns); then the tensor is put back, and no gradient has
// changed.
template <class Layer, class Call>
void expect_spoilt_parameter_refused(Layer& layer, bool owner, std::size_t index, bool is_grad, const shape_t& odd,
                                     bool in_layer, Call&& call, const std::string& text) {
    using T = typename std::remove_reference_t<decltype(layer.parameters().front()->value)>::value_type;
    std::vector<tensor<T>> before;
    for (auto* p : layer.parameters()) before.push_back(p->grad);
    tensor<T>* spoilt = nullptr;
    tensor<T> kept;
    if (owner) {
        auto* p = layer.parameters().at(index);
        spoilt = is_grad ? &p->grad : &p->value;
        kept = *spoilt;
        *spoilt = xt::zeros<T>(odd);
    }
    if (in_layer) DCHECK_THROWS(call(), invalid_argument, text);
    else call();
    if (spoilt) *spoilt = kept;
    const auto params = layer.parameters();
    for (std::size_t i = 0; i < params.size(); ++i) DCHECK(same_bits(params[i]->grad, before[i]));
}

}  // namespace distdl::testing
