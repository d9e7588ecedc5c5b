#include "verify/checks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/decomposition.hpp"
#include "core/error.hpp"

namespace distdl::verify {

double equivalence_tolerance(dtype type) { return type == dtype::float32 ? 1e-5 : 1e-12; }
double adjoint_tolerance(dtype type) { return type == dtype::float32 ? 1e-5 : 1e-13; }

template <class T>
piece_comparison compare_piece(const tensor<T>& got, const tensor<T>& want, bool exact, double tolerance,
                               const std::string& what, double scale) {
    piece_comparison out;
    if (shape_of(got) != shape_of(want)) {
        out.bit_exact = false;
        out.relative_error = std::numeric_limits<double>::infinity();
        out.problem = what + " has shape " + format_list(shape_of(got)) + ", the reference " + format_list(shape_of(want));
        return out;
    }
    double max_diff = 0, max_want = scale;
    std::size_t first_bad = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
        const double g = static_cast<double>(got.data()[i]);
        const double w = static_cast<double>(want.data()[i]);
        // NaN never compares equal, so it is caught here and by the max below.
        if (!(g == w)) {
            out.bit_exact = false;
            if (first_bad == got.size()) first_bad = i;
        }
        const double diff = !std::isfinite(w) ? (g == w ? 0 : std::numeric_limits<double>::infinity())
                            : std::isfinite(g) ? std::abs(g - w)
                                               : std::numeric_limits<double>::infinity();
        max_diff = std::max(max_diff, diff);
        if (std::isfinite(w)) max_want = std::max(max_want, std::abs(w));
    }
    if (max_diff == 0) out.relative_error = 0;
    else out.relative_error = max_diff / std::max(max_want, std::numeric_limits<double>::min());
    const bool ok = exact ? out.bit_exact : out.relative_error <= tolerance;
    if (!ok) {
        std::ostringstream text;
        const auto index = unravel_index(first_bad == got.size() ? 0 : first_bad, shape_of(want));
        text << what << " differs from the reference: relative error " << out.relative_error
             << (exact ? " (data movement must be bit-exact)" : " > " + std::to_string(tolerance)) << "; first at "
             << format_list(index) << ": " << static_cast<double>(got.data()[first_bad == got.size() ? 0 : first_bad])
             << " vs " << static_cast<double>(want.data()[first_bad == got.size() ? 0 : first_bad]);
        out.problem = text.str();
    }
    return out;
}

dot_terms& dot_terms::operator+=(const dot_terms& other) {
    fx_y += other.fx_y;
    x_fty += other.x_fty;
    fx_sq += other.fx_sq;
    y_sq += other.y_sq;
    x_sq += other.x_sq;
    fty_sq += other.fty_sq;
    return *this;
}

template <class T>
double dot(const tensor<T>& a, const tensor<T>& b) {
    DISTDL_REQUIRE(a.size() == b.size(), "dot: " << a.size() << " vs " << b.size() << " elements");
    double sum = 0;
    for (std::size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a.data()[i]) * static_cast<double>(b.data()[i]);
    return sum;
}

template <class T>
dot_terms dot_terms_of(const tensor<T>& x, const tensor<T>& fx, const tensor<T>& y, const tensor<T>& fty) {
    DISTDL_REQUIRE(fx.size() == y.size(), "dot: " << fx.size() << " vs " << y.size() << " elements");
    dot_terms t;
    for (std::size_t i = 0; i < fx.size(); ++i) {
        const double f = static_cast<double>(fx.data()[i]), v = static_cast<double>(y.data()[i]);
        if (std::isinf(f)) continue;  // a constant output (see the header)
        t.fx_y += f * v;
        t.fx_sq += f * f;
        t.y_sq += v * v;
    }
    t.x_fty = dot(x, fty);
    t.x_sq = dot(x, x);
    t.fty_sq = dot(fty, fty);
    return t;
}

double adjoint_error(const dot_terms& t) {
    const double difference = std::abs(t.fx_y - t.x_fty);
    const double scale = std::max(std::sqrt(t.fx_sq) * std::sqrt(t.y_sq), std::sqrt(t.x_sq) * std::sqrt(t.fty_sq));
    if (difference == 0) return 0;
    if (scale == 0) return std::numeric_limits<double>::infinity();
    return difference / scale;
}

template <class T>
double adjoint_error(const tensor<T>& x, const tensor<T>& fx, const tensor<T>& y, const tensor<T>& fty) {
    return adjoint_error(dot_terms_of(x, fx, y, fty));
}

template <class T>
std::vector<tensor<T>> absolute(const std::vector<tensor<T>>& pieces) {
    std::vector<tensor<T>> out;
    for (const auto& piece : pieces) out.push_back(xt::abs(piece));
    return out;
}

template <class T>
double largest_magnitude(const tensor<T>& t) {
    double largest = 0;
    for (const T v : t)
        if (std::isfinite(v)) largest = std::max(largest, static_cast<double>(std::abs(v)));
    return largest;
}

template <class T>
double largest_magnitude(const std::vector<tensor<T>>& pieces) {
    double largest = 0;
    for (const auto& piece : pieces) largest = std::max(largest, largest_magnitude(piece));
    return largest;
}

template piece_comparison compare_piece<float>(const tensor<float>&, const tensor<float>&, bool, double,
                                               const std::string&, double);
template piece_comparison compare_piece<double>(const tensor<double>&, const tensor<double>&, bool, double,
                                                const std::string&, double);
template std::vector<tensor<float>> absolute<float>(const std::vector<tensor<float>>&);
template std::vector<tensor<double>> absolute<double>(const std::vector<tensor<double>>&);
template double largest_magnitude<float>(const tensor<float>&);
template double largest_magnitude<double>(const tensor<double>&);
template double largest_magnitude<float>(const std::vector<tensor<float>>&);
template double largest_magnitude<double>(const std::vector<tensor<double>>&);
template double dot<float>(const tensor<float>&, const tensor<float>&);
template double dot<double>(const tensor<double>&, const tensor<double>&);
template dot_terms dot_terms_of<float>(const tensor<float>&, const tensor<float>&, const tensor<float>&,
                                       const tensor<float>&);
template dot_terms dot_terms_of<double>(const tensor<double>&, const tensor<double>&, const tensor<double>&,
                                        const tensor<double>&);
template double adjoint_error<float>(const tensor<float>&, const tensor<float>&, const tensor<float>&,
                                     const tensor<float>&);
template double adjoint_error<double>(const tensor<double>&, const tensor<double>&, const tensor<double>&,
                                      const tensor<double>&);

}  // namespace distdl::verify
