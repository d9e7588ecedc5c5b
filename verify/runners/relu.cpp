// Runner of ReLU (layers/relu.hpp): x_shape is the global input, balanced over P_x (any rank
// of P_x's); the output is the reference's relu of the whole tensor, balanced over P_x. The
// reference adjoint is taken at the input of the reference forward of the same case. Both
// directions select or zero elements: bit-exact.
#include <memory>

#include "layers/relu.hpp"
#include "reference/relu.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;

// Refers to the case's worker list (the spec outlives the problem).
struct relu_case {
    const std::vector<int>* workers = nullptr;
    shape_t P_x_shape, x_shape;
    int world_size = 0;
};

template <class T>
case_problem<T> make_relu(const case_spec& spec, const case_world& world) {
    relu_case c;
    c.workers = &spec.partition("P_x").workers;
    c.P_x_shape = spec.partition("P_x").shape;
    c.x_shape = spec.x_shape;
    c.world_size = spec.world_size;

    case_problem<T> problem;
    problem.layer = std::make_unique<relu<T>>(world.get("P_x"));
    // The point of the last reference forward, where the adjoint is taken.
    auto point = std::make_shared<tensor<T>>();
    problem.input = [c](std::uint64_t seed) {
        return runners::random_input<T>(c.x_shape, c.P_x_shape, *c.workers, c.world_size, seed);
    };
    const auto spread = [c](const tensor<T>& global) {
        return runners::split_on(global, c.P_x_shape, *c.workers, c.world_size);
    };
    problem.forward = [c, point, spread](const std::vector<tensor<T>>& x) {
        *point = ref::assemble(pieces_of(x, *c.workers), c.P_x_shape);
        return spread(ref::relu(*point));
    };
    problem.adjoint = [c, point, spread](const std::vector<tensor<T>>& dy) {
        DISTDL_REQUIRE(point->size() == volume(c.x_shape), "ReLU runner: the reference adjoint needs a forward first");
        return spread(ref::relu_adjoint(*point, ref::assemble(pieces_of(dy, *c.workers), c.P_x_shape)));
    };
    // In a chain, the bounds (of |x|) leave the point of the adjoint where it is.
    problem.forward_bound = [c, spread](const std::vector<tensor<T>>& x) {
        return spread(ref::relu(ref::assemble(pieces_of(x, *c.workers), c.P_x_shape)));
    };
    problem.adjoint_bound = problem.adjoint;
    problem.forward_exact = true;
    problem.adjoint_exact = true;
    return problem;
}

}  // namespace

layer_runner relu_runner() {
    layer_runner r;
    r.layer = "ReLU";
    r.partitions = {"P_x"};
    r.chainable = true;
    r.make_float = &make_relu<float>;
    r.make_double = &make_relu<double>;
    return r;
}

}  // namespace distdl::verify
