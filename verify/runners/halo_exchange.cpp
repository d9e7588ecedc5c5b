// Runner of HaloExchange: x_shape is the global shape, balanced over P_x; the kernel options
// are given per tensor dimension (or one scalar for all).
#include "core/halo_exchange.hpp"
#include "reference/halo_exchange.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;
using runners::place;

struct halo_case {
    const std::vector<int>* workers = nullptr;  // the spec's
    shape_t P_x_shape, x_shape;
    kernel_geometry geometry;
    int world_size = 0;
};

template <class T>
case_problem<T> make_halo_exchange(const case_spec& spec, const case_world& world) {
    halo_case h;
    h.workers = &spec.partition("P_x").workers;
    h.P_x_shape = spec.partition("P_x").shape;
    h.x_shape = spec.x_shape;
    h.world_size = spec.world_size;
    const std::size_t dims = spec.x_shape.size();
    h.geometry.kernel_size = spec.per_dimension("kernel_size", dims, 1);
    h.geometry.stride = spec.per_dimension("stride", dims, 1);
    h.geometry.padding = spec.per_dimension("padding", dims, 0);
    h.geometry.dilation = spec.per_dimension("dilation", dims, 1);

    case_problem<T> problem;
    problem.layer = std::make_unique<halo_exchange<T>>(world.get("P_x"), h.x_shape, h.geometry);
    auto idle = [](std::size_t) { return runners::no_piece<T>(); };
    problem.input = [h](std::uint64_t seed) {
        return runners::random_input<T>(h.x_shape, h.P_x_shape, *h.workers, h.world_size, seed);
    };
    problem.forward = [h, idle](const std::vector<tensor<T>>& x) {
        const tensor<T> global = ref::assemble(pieces_of(x, *h.workers), h.P_x_shape);
        const auto& g = h.geometry;
        return place<T>(ref::halo_exchange(global, h.P_x_shape, g.kernel_size, g.stride, g.padding, g.dilation),
                        *h.workers, h.world_size, idle);
    };
    problem.adjoint = [h, idle](const std::vector<tensor<T>>& dy) {
        const auto& g = h.geometry;
        return place<T>(ref::halo_exchange_adjoint(pieces_of(dy, *h.workers), h.x_shape, h.P_x_shape, g.kernel_size,
                                                   g.stride, g.padding, g.dilation),
                        *h.workers, h.world_size, idle);
    };
    problem.forward_exact = true;   // copies of owned values (and zeros)
    problem.adjoint_exact = false;  // ghosts are added into their owners
    problem.adjoint_bound = problem.adjoint;  // of coefficients 1: on |dy|, the sums of |terms|
    return problem;
}

}  // namespace

layer_runner halo_exchange_runner() {
    layer_runner r;
    r.layer = "HaloExchange";
    r.partitions = {"P_x"};
    r.options = {{"kernel_size", option_kind::per_dimension, true},
                 {"stride", option_kind::per_dimension},
                 {"padding", option_kind::per_dimension},
                 {"dilation", option_kind::per_dimension}};
    r.make_float = &make_halo_exchange<float>;
    r.make_double = &make_halo_exchange<double>;
    return r;
}

}  // namespace distdl::verify
