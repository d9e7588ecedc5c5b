// Runner of Linear (spec 002): x_shape is the global input [batch, in_features]; partitions
// P_x (1 x P_fi), P_y (1 x P_fo) and P_w (P_fo x P_fi); options in_features, out_features,
// bias (default true). The model starts from distdl::linear_initial_parameters with a seed
// derived from the case seed; the reference is reference/linear on the whole tensors, cut
// into the balanced column blocks the spec prescribes.
#include "core/decomposition.hpp"
#include "layers/linear.hpp"
#include "reference/linear.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/lazy.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::rank_in;

struct linear_layout {
    const std::vector<int>*x_workers = nullptr, *y_workers = nullptr, *w_workers = nullptr;  // the spec's lists
    std::size_t P_fi = 0, P_fo = 0;  // from P_x and P_y (the layer refuses inconsistent P_w)
    std::size_t batch = 0, in_features = 0, out_features = 0;
    shape_t x_shape;  // the case's: the layer, not the runner, judges whether it fits in_features
    bool bias = true;
    std::uint64_t model_seed = 0;
    int world_size = 0;
};

// Columns [start, stop) of a matrix (a copy).
template <class T>
tensor<T> columns(const tensor<T>& m, std::size_t start, std::size_t stop) {
    tensor<T> out(shape_t{m.shape()[0], stop - start});
    for (std::size_t r = 0; r < m.shape()[0]; ++r)
        for (std::size_t c = start; c < stop; ++c) out(r, c - start) = m(r, c);
    return out;
}

// The balanced column blocks of `m` over `parts` workers, placed at the listed world ranks;
// {0} elsewhere.
template <class T>
std::vector<tensor<T>> split_columns(const tensor<T>& m, std::size_t parts, const std::vector<int>& workers,
                                     int world_size) {
    std::vector<tensor<T>> out(static_cast<std::size_t>(world_size), zero_volume<T>());
    const std::size_t n = m.shape()[1];
    for (std::size_t p = 0; p < workers.size(); ++p)
        out[static_cast<std::size_t>(workers[p])] = columns(m, balanced_start(n, parts, p), balanced_stop(n, parts, p));
    return out;
}

// The whole matrix from the column blocks held by the listed workers (in partition order).
template <class T>
tensor<T> join_columns(const std::vector<tensor<T>>& by_world, const std::vector<int>& workers, std::size_t rows,
                       std::size_t cols) {
    tensor<T> out(shape_t{rows, cols});
    std::size_t at = 0;
    for (int w : workers) {
        const auto& piece = by_world.at(static_cast<std::size_t>(w));
        DISTDL_REQUIRE(piece.dimension() == 2 && piece.shape()[0] == rows && at + piece.shape()[1] <= cols,
                       "Linear runner: piece of world rank " << w << " has shape " << format_list(shape_of(piece)));
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < piece.shape()[1]; ++c) out(r, at + c) = piece(r, c);
        at += piece.shape()[1];
    }
    DISTDL_REQUIRE(at == cols, "Linear runner: the pieces hold " << at << " columns, expected " << cols);
    return out;
}

// Block [rows) x [cols) of a matrix, or [rows) of a vector.
template <class T>
tensor<T> block(const tensor<T>& m, std::size_t r0, std::size_t r1, std::size_t c0, std::size_t c1) {
    tensor<T> out(shape_t{r1 - r0, c1 - c0});
    for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t c = c0; c < c1; ++c) out(r - r0, c - c0) = m(r, c);
    return out;
}
template <class T>
tensor<T> segment(const tensor<T>& v, std::size_t r0, std::size_t r1) {
    tensor<T> out(shape_t{r1 - r0});
    for (std::size_t r = r0; r < r1; ++r) out(r - r0) = v(r);
    return out;
}

template <class T>
case_problem<T> make_linear(const case_spec& spec, const case_world& world) {
    linear_layout l;
    l.in_features = spec.count("in_features", 0);
    l.out_features = spec.count("out_features", 0);
    l.bias = spec.flag("bias", true);
    l.model_seed = derive_seed(spec.seed, parameter_data, ~std::uint64_t{0});
    l.world_size = spec.world_size;

    case_problem<T> problem;
    // The layer first: it refuses inconsistent partitions (refusal cases end here).
    problem.layer = std::make_unique<distributed_linear<T>>(world.get("P_x"), world.get("P_y"), world.get("P_w"),
                                                             l.in_features, l.out_features,
                                                             linear_options{.bias = l.bias, .seed = l.model_seed});
    l.x_shape = spec.x_shape;
    l.batch = spec.x_shape.empty() ? 0 : spec.x_shape[0];
    l.x_workers = &spec.partition("P_x").workers;
    l.y_workers = &spec.partition("P_y").workers;
    l.w_workers = &spec.partition("P_w").workers;
    l.P_fi = spec.partition("P_x").shape[1];
    l.P_fo = spec.partition("P_y").shape[1];
    using model_ptr = std::shared_ptr<const runners::lazy<linear_parameters<T>>>;
    const auto model = std::make_shared<const runners::lazy<linear_parameters<T>>>([l] {
        return linear_initial_parameters<T>(l.in_features, l.out_features,
                                            linear_options{.bias = l.bias, .seed = l.model_seed});
    });

    // Only a chain's first stage makes input (the others take what the stage before gives).
    problem.input = [l](std::uint64_t seed) {
        if (l.x_shape.size() != 2)
            throw case_error("Linear case: x_shape " + format_list(l.x_shape) +
                             " cannot be split over P_x (1 x P_fi): Linear's input is [batch, features]");
        const tensor<T> global = random_tensor<T>(l.x_shape, derive_seed(seed, input_data, 0));
        return split_columns(global, l.P_fi, *l.x_workers, l.world_size);
    };
    auto forward_with = [l](model_ptr m) {
        return [l, m](const std::vector<tensor<T>>& x) {
            const tensor<T> global = join_columns(x, *l.x_workers, l.batch, l.in_features);
            const auto& p = m->get();
            const tensor<T> y = l.bias ? ref::linear(global, p.weight, p.bias) : ref::linear(global, p.weight);
            return split_columns(y, l.P_fo, *l.y_workers, l.world_size);
        };
    };
    auto adjoint_with = [l](model_ptr m) {
        return [l, m](const std::vector<tensor<T>>& dy) {
            const tensor<T> global = join_columns(dy, *l.y_workers, l.batch, l.out_features);
            const tensor<T> dx = ref::linear_adjoint_input(global, m->get().weight);
            return split_columns(dx, l.P_fi, *l.x_workers, l.world_size);
        };
    };
    const auto magnitudes = std::make_shared<const runners::lazy<linear_parameters<T>>>([model] {
        return linear_parameters<T>{xt::abs(model->get().weight), xt::abs(model->get().bias)};
    });
    problem.forward = forward_with(model);
    problem.adjoint = adjoint_with(model);
    problem.forward_bound = forward_with(magnitudes);
    problem.adjoint_bound = adjoint_with(magnitudes);

    auto hook = std::make_shared<parameter_hook<T>>();
    hook->names = l.bias ? std::vector<std::string>{"weight", "bias"} : std::vector<std::string>{"weight"};
    hook->offsets = l.bias ? std::vector<std::string>{"bias"} : std::vector<std::string>{};
    // Worker (r, c) of P_w (row-major in its worker list) owns rows balanced(out, P_fo, r) and
    // columns balanced(in, P_fi, c) of W and dW; column 0 also the same rows of b and db.
    hook->reference = [l, model](const std::vector<tensor<T>>& x, const std::vector<tensor<T>>& dy) {
        const tensor<T> x_global = join_columns(x, *l.x_workers, l.batch, l.in_features);
        const tensor<T> dy_global = join_columns(dy, *l.y_workers, l.batch, l.out_features);
        const tensor<T> dW = ref::linear_adjoint_weight(dy_global, x_global);
        const tensor<T> db = ref::linear_adjoint_bias(dy_global);
        const auto& initial = model->get();
        std::vector<std::vector<parameter<T>>> owned(static_cast<std::size_t>(l.world_size));
        for (std::size_t w = 0; w < owned.size(); ++w) {
            const int p = rank_in(*l.w_workers, w);
            if (p < 0) continue;
            const std::size_t r = static_cast<std::size_t>(p) / l.P_fi, c = static_cast<std::size_t>(p) % l.P_fi;
            const std::size_t r0 = balanced_start(l.out_features, l.P_fo, r), r1 = balanced_stop(l.out_features, l.P_fo, r);
            const std::size_t c0 = balanced_start(l.in_features, l.P_fi, c), c1 = balanced_stop(l.in_features, l.P_fi, c);
            owned[w].push_back({"weight", block(initial.weight, r0, r1, c0, c1), block(dW, r0, r1, c0, c1)});
            if (l.bias && c == 0) owned[w].push_back({"bias", segment(initial.bias, r0, r1), segment(db, r0, r1)});
        }
        return owned;
    };
    problem.parameters = hook;
    return problem;
}

}  // namespace

layer_runner linear_runner() {
    layer_runner r;
    r.layer = "Linear";
    r.partitions = {"P_x", "P_y", "P_w"};
    r.options = {{"in_features", option_kind::count, true},
                 {"out_features", option_kind::count, true},
                 {"bias", option_kind::boolean}};
    r.chainable = true;
    r.make_float = &make_linear<float>;
    r.make_double = &make_linear<double>;
    return r;
}

}  // namespace distdl::verify
