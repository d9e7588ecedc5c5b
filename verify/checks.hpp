#pragma once
// The two checks of DESIGN §5, in the pieces a worker can evaluate on its own; the verdict
// (verdict.hpp) combines the workers' parts in rank order.
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/tensor.hpp"

namespace distdl::verify {

// Tolerances: sequential equivalence of arithmetic, and the adjoint dot-product test.
double equivalence_tolerance(dtype type);  // 1e-12 double, 1e-5 float
double adjoint_tolerance(dtype type);      // 1e-13 double, 1e-5 float

// ---- sequential equivalence ----

struct piece_comparison {
    bool bit_exact = true;  // every element equal
    // max |got - want| / max(scale, max |want|) (0 when both are empty)
    double relative_error = 0.0;
    std::string problem;  // empty when the piece is acceptable
};

// Compares a worker's piece with the reference piece. `exact` demands equality element by
// element (data movement); otherwise the relative error must stay within `tolerance`.
// `what` names the piece in the problem text ("forward output"). `scale`: the largest |value|
// of the whole reference tensor the piece belongs to (largest_magnitude), or its largest sum
// of |terms| when larger. Rounding errors scale with the terms summed, not with their sum, so
// a piece whose values all happen to cancel to nearly 0 would fail a test relative to its own
// largest value alone. A reference value that
// is not finite (max pooling's −∞ for a window made only of padding) must be matched exactly.
template <class T>
piece_comparison compare_piece(const tensor<T>& got, const tensor<T>& want, bool exact, double tolerance,
                               const std::string& what, double scale = 0);

// Every piece's elements replaced by their absolute values.
template <class T>
std::vector<tensor<T>> absolute(const std::vector<tensor<T>>& pieces);

// The largest finite |value| of a tensor, or over pieces of one tensor (compare_piece's scale;
// an infinite value would make every error relative to it 0).
template <class T>
double largest_magnitude(const tensor<T>& t);
template <class T>
double largest_magnitude(const std::vector<tensor<T>>& pieces);

// ---- adjoint dot-product test ----

// One worker's share of <F x, y>, <x, F* y> and the squared norms, accumulated in double.
struct dot_terms {
    double fx_y = 0, x_fty = 0;
    double fx_sq = 0, y_sq = 0, x_sq = 0, fty_sq = 0;
    dot_terms& operator+=(const dot_terms& other);
};

// Zero terms for a piece pair of different shapes is the caller's choice; these require
// equal volumes (the shapes were compared first).
template <class T>
double dot(const tensor<T>& a, const tensor<T>& b);

// One worker's terms from its pieces x, F x, y and F* y (F x and y, x and F* y of equal volumes).
// An infinite element of F x is a constant output, not part of the linear map (max pooling's
// −∞ for a window made only of padding: its gradient goes nowhere), so it and y's element
// there count as 0; the equivalence check has matched it with the reference exactly.
template <class T>
dot_terms dot_terms_of(const tensor<T>& x, const tensor<T>& fx, const tensor<T>& y, const tensor<T>& fty);

// |<Fx,y> - <x,F*y>| / max(|Fx||y|, |x||F*y|); 0 when both sides vanish identically.
double adjoint_error(const dot_terms& total);
// The same on one worker's pieces alone (a serial operator).
template <class T>
double adjoint_error(const tensor<T>& x, const tensor<T>& fx, const tensor<T>& y, const tensor<T>& fty);

}  // namespace distdl::verify
