// Runners of MaxPool1d/2d/3d and AvgPool1d/2d/3d (layers/pool_max.hpp, layers/pool_avg.hpp):
// x_shape is the global input N × C × spatial, balanced over P_x; options kernel_size
// (required), stride, padding, dilation, each one value for every spatial dimension or one per
// spatial dimension; the layer is given x_shape as its input_shape unless the case says
// "input_shape": "learnt". The reference is reference/pool.hpp on the whole tensor, its output cut
// into the balanced blocks of P_x. The layer is told its digit (spatial_dims), so a MaxPool2d
// case with a 1-d input is the layer's refusal, not the harness's.
#include <memory>

#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "reference/pool.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;

enum class pool_kind { max, avg };

struct pool_case {
    const std::vector<int>* workers = nullptr;  // the spec's
    shape_t P_x_shape, x_shape;
    ref::pool_geometry geometry;
    int world_size = 0;
};

// The option as given (empty when absent: the layer and the reference apply the defaults).
std::vector<std::size_t> option_or_empty(const case_spec& spec, const char* name, std::size_t dims) {
    return spec.options.contains(name) ? spec.per_dimension(name, dims, 0) : std::vector<std::size_t>{};
}

template <class T, pool_kind kind, std::size_t spatial_dims>
case_problem<T> make_pool(const case_spec& spec, const case_world& world) {
    pool_case c;
    c.workers = &spec.partition("P_x").workers;
    c.P_x_shape = spec.partition("P_x").shape;
    c.x_shape = spec.x_shape;
    c.world_size = spec.world_size;
    const std::size_t dims = spec.x_shape.size() > 2 ? spec.x_shape.size() - 2 : 1;
    c.geometry = {option_or_empty(spec, "kernel_size", dims), option_or_empty(spec, "stride", dims),
                  option_or_empty(spec, "padding", dims), option_or_empty(spec, "dilation", dims)};
    pool_options options{c.geometry.kernel_size, c.geometry.stride, c.geometry.padding, c.geometry.dilation,
                         std::nullopt, spatial_dims};
    if (spec.shape_source == input_shape_source::given) options.input_shape = c.x_shape;

    case_problem<T> problem;
    if constexpr (kind == pool_kind::max)
        problem.layer = std::make_unique<distributed_max_pool<T>>(world.get("P_x"), options);
    else
        problem.layer = std::make_unique<distributed_avg_pool<T>>(world.get("P_x"), options);

    // The point of the last reference forward: max pooling's adjoint depends on it.
    auto point = std::make_shared<tensor<T>>();
    problem.input = [c](std::uint64_t seed) {
        return runners::split_on(random_tensor<T>(c.x_shape, derive_seed(seed, input_data, 0)), c.P_x_shape, *c.workers,
                                 c.world_size);
    };
    // The pooled pieces of a whole input.
    auto pooled = [c](const tensor<T>& global) {
        const tensor<T> y = kind == pool_kind::max ? ref::max_pool(global, c.geometry) : ref::avg_pool(global, c.geometry);
        return runners::split_on(y, c.P_x_shape, *c.workers, c.world_size);
    };
    problem.forward = [c, pooled, point](const std::vector<tensor<T>>& x) {
        *point = ref::assemble(pieces_of(x, *c.workers), c.P_x_shape);
        return pooled(*point);
    };
    problem.adjoint = [c, point](const std::vector<tensor<T>>& dy) {
        DISTDL_REQUIRE(point->size() == volume(c.x_shape), "pool runner: the reference adjoint needs a forward first");
        const tensor<T> dy_global = ref::assemble(pieces_of(dy, *c.workers), c.P_x_shape);
        const tensor<T> dx = kind == pool_kind::max ? ref::max_pool_adjoint(*point, dy_global, c.geometry)
                                                    : ref::avg_pool_adjoint(dy_global, c.x_shape, c.geometry);
        return runners::split_on(dx, c.P_x_shape, *c.workers, c.world_size);
    };
    problem.forward_exact = kind == pool_kind::max;  // a max is one of the inputs
    problem.adjoint_exact = false;                   // overlapping windows add up
    // Coefficients >= 0 (averages, a max's selection): the reference on |x| (|dy|) is the sums of
    // |terms|; a maximum's magnitude is at most its window's largest. Max pooling's bound leaves
    // the point of the adjoint where it is.
    problem.forward_bound = [c, pooled](const std::vector<tensor<T>>& x) {
        return pooled(ref::assemble(pieces_of(x, *c.workers), c.P_x_shape));
    };
    problem.adjoint_bound = problem.adjoint;
    return problem;
}

template <pool_kind kind, std::size_t spatial_dims>
layer_runner pool_runner(const char* layer) {
    layer_runner r;
    r.layer = layer;
    r.partitions = {"P_x"};
    r.options = {{"kernel_size", option_kind::per_dimension, true},
                 {"stride", option_kind::per_dimension},
                 {"padding", option_kind::per_dimension},
                 {"dilation", option_kind::per_dimension}};
    r.leading_dims = 2;  // batch and channels
    r.accepts_input_shape = true;
    r.chainable = true;
    r.make_float = &make_pool<float, kind, spatial_dims>;
    r.make_double = &make_pool<double, kind, spatial_dims>;
    return r;
}

}  // namespace

std::vector<layer_runner> pool_runners() {
    return {pool_runner<pool_kind::max, 1>("MaxPool1d"), pool_runner<pool_kind::max, 2>("MaxPool2d"),
            pool_runner<pool_kind::max, 3>("MaxPool3d"), pool_runner<pool_kind::avg, 1>("AvgPool1d"),
            pool_runner<pool_kind::avg, 2>("AvgPool2d"), pool_runner<pool_kind::avg, 3>("AvgPool3d")};
}

}  // namespace distdl::verify
