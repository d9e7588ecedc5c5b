// Runner of Flatten (layers/flatten.hpp): x_shape is the global input N × D_1 × … × D_k,
// balanced over P_x; the output is the reference's flat N × (D_1 ⋯ D_k), balanced over P_y. The
// reference is reference/flatten.hpp on the whole tensor. Pure data movement: bit-exact both
// ways.
#include <memory>

#include "layers/flatten.hpp"
#include "reference/flatten.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;

// Refers to the case's worker lists (the spec outlives the problem).
struct flatten_case {
    const std::vector<int>* x_workers = nullptr;
    const std::vector<int>* y_workers = nullptr;
    shape_t P_x_shape, P_y_shape, x_shape;
    int world_size = 0;
};

template <class T>
case_problem<T> make_flatten(const case_spec& spec, const case_world& world) {
    flatten_case c;
    c.x_workers = &spec.partition("P_x").workers;
    c.y_workers = &spec.partition("P_y").workers;
    c.P_x_shape = spec.partition("P_x").shape;
    c.P_y_shape = spec.partition("P_y").shape;
    c.x_shape = spec.x_shape;
    c.world_size = spec.world_size;

    case_problem<T> problem;
    problem.layer = std::make_unique<flatten<T>>(world.get("P_x"), world.get("P_y"));
    problem.input = [c](std::uint64_t seed) {
        return runners::random_input<T>(c.x_shape, c.P_x_shape, *c.x_workers, c.world_size, seed);
    };
    problem.forward = [c](const std::vector<tensor<T>>& x) {
        const tensor<T> y = ref::flatten(ref::assemble(pieces_of(x, *c.x_workers), c.P_x_shape));
        return runners::split_on(y, c.P_y_shape, *c.y_workers, c.world_size);
    };
    problem.adjoint = [c](const std::vector<tensor<T>>& dy) {
        const tensor<T> dx =
            ref::flatten_adjoint(ref::assemble(pieces_of(dy, *c.y_workers), c.P_y_shape), c.x_shape);
        return runners::split_on(dx, c.P_x_shape, *c.x_workers, c.world_size);
    };
    problem.forward_exact = true;
    problem.adjoint_exact = true;
    return problem;
}

}  // namespace

layer_runner flatten_runner() {
    layer_runner r;
    r.layer = "Flatten";
    r.partitions = {"P_x", "P_y"};
    r.chainable = true;
    r.make_float = &make_flatten<float>;
    r.make_double = &make_flatten<double>;
    return r;
}

}  // namespace distdl::verify
