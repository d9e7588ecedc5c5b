// Runner of Repartition: x_shape is the global shape; P_x holds it balanced or unbalanced
// (input_split), P_y receives it balanced.
#include "core/repartition.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;
using runners::place;
using runners::rank_in;

// Refers to the case's worker lists rather than copying them: every simulated worker builds
// its own problem, and copies would cost O(n) per worker (the spec outlives the problem).
struct layout {
    const std::vector<int>* x_workers = nullptr;
    const std::vector<int>* y_workers = nullptr;
    shape_t P_x_shape, P_y_shape, x_shape;
    input_split kind = input_split::balanced;
    bool preserve_batch = true;
    int world_size = 0;

    // What a worker in neither partition returns, and one in P_x or P_y without output.
    template <class T>
    tensor<T> idle(std::size_t w, const std::vector<tensor<T>>& in) const {
        if (rank_in(*x_workers, w) < 0 && rank_in(*y_workers, w) < 0) return in[w];  // {0} stays {0}
        return runners::idle_piece<T>(x_shape[0], preserve_batch);
    }
};

template <class T>
case_problem<T> make_repartition(const case_spec& spec, const case_world& world) {
    layout l;
    l.x_workers = &spec.partition("P_x").workers;
    l.y_workers = &spec.partition("P_y").workers;
    l.P_x_shape = spec.partition("P_x").shape;
    l.P_y_shape = spec.partition("P_y").shape;
    l.x_shape = spec.x_shape;
    l.kind = spec.split;
    l.preserve_batch = spec.flag("preserve_batch", true);
    l.world_size = spec.world_size;

    case_problem<T> problem;
    problem.layer = std::make_unique<repartition<T>>(world.get("P_x"), world.get("P_y"),
                                                      repartition_options{.preserve_batch = l.preserve_batch});
    problem.input = [l](std::uint64_t seed) {
        return runners::random_input<T>(l.x_shape, l.P_x_shape, *l.x_workers, l.world_size, seed, l.kind);
    };
    problem.forward = [l](const std::vector<tensor<T>>& x) {
        const tensor<T> global = ref::assemble(pieces_of(x, *l.x_workers), l.P_x_shape);
        return place<T>(ref::repartition(global, l.P_y_shape), *l.y_workers, l.world_size,
                        [&](std::size_t w) { return l.idle(w, x); });
    };
    // The adjoint moves the pieces back to the input layout, unbalanced or not.
    problem.adjoint = [l](const std::vector<tensor<T>>& dy) {
        const tensor<T> global = ref::assemble(pieces_of(dy, *l.y_workers), l.P_y_shape);
        return place<T>(runners::split_pieces(global, l.P_x_shape, l.kind), *l.x_workers, l.world_size,
                        [&](std::size_t w) { return l.idle(w, dy); });
    };
    problem.forward_exact = true;
    problem.adjoint_exact = true;
    return problem;
}

}  // namespace

layer_runner repartition_runner() {
    layer_runner r;
    r.layer = "Repartition";
    r.partitions = {"P_x", "P_y"};
    r.options = {{"preserve_batch", option_kind::boolean}};
    r.accepts_input_split = true;
    r.chainable = true;
    r.make_float = &make_repartition<float>;
    r.make_double = &make_repartition<double>;
    return r;
}

}  // namespace distdl::verify
