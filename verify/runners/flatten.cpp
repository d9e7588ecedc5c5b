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
using runners::place;

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
    const auto idle = [](std::size_t) { return runners::no_piece<T>(); };
    problem.input = [c, idle](std::uint64_t seed) {
        const tensor<T> global = random_tensor<T>(c.x_shape, derive_seed(seed, input_data, 0));
        const auto pieces = runners::split_or_whole(global, c.P_x_shape, input_split::balanced, c.x_workers->size());
        return place<T>(pieces, *c.x_workers, c.world_size, idle);
    };
    problem.forward = [c, idle](const std::vector<tensor<T>>& x) {
        const tensor<T> y = ref::flatten(ref::assemble(pieces_of(x, *c.x_workers), c.P_x_shape));
        return place<T>(runners::split_pieces(y, c.P_y_shape, input_split::balanced), *c.y_workers, c.world_size,
                        idle);
    };
    problem.adjoint = [c, idle](const std::vector<tensor<T>>& dy) {
        const tensor<T> dx =
            ref::flatten_adjoint(ref::assemble(pieces_of(dy, *c.y_workers), c.P_y_shape), c.x_shape);
        return place<T>(runners::split_pieces(dx, c.P_x_shape, input_split::balanced), *c.x_workers, c.world_size,
                        idle);
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
