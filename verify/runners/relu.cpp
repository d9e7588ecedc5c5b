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
using runners::place;

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
    const auto idle = [](std::size_t) { return runners::no_piece<T>(); };
    // The point of the last reference forward, where the adjoint is taken.
    auto point = std::make_shared<tensor<T>>();
    problem.input = [c, idle](std::uint64_t seed) {
        const tensor<T> global = random_tensor<T>(c.x_shape, derive_seed(seed, input_data, 0));
        const auto pieces = runners::split_or_whole(global, c.P_x_shape, input_split::balanced, c.workers->size());
        return place<T>(pieces, *c.workers, c.world_size, idle);
    };
    const auto spread = [c, idle](const tensor<T>& global) {
        return place<T>(runners::split_pieces(global, c.P_x_shape, input_split::balanced), *c.workers, c.world_size,
                        idle);
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
