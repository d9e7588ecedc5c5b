// Runners of the Broadcast family: Broadcast, SumReduce (its adjoint) and AllSumReduce.
// x_shape is the local shape every P_x worker holds (spec 000's examples).
#include "core/all_sum_reduce.hpp"
#include "core/broadcast.hpp"
#include "core/sum_reduce.hpp"
#include "reference/all_sum_reduce.hpp"
#include "reference/broadcast.hpp"
#include "reference/sum_reduce.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::batch_of;
using runners::pieces_of;
using runners::place;
using runners::rank_in;

// Refers to the case's worker lists rather than copying them: every simulated worker builds
// its own problem, and copies would cost O(n) per worker (the spec outlives the problem).
struct pairing {
    const std::vector<int>* x_workers = nullptr;
    const std::vector<int>* y_workers = nullptr;
    shape_t P_x_shape, P_y_shape;
    bool transpose_src = false, transpose_dest = false, preserve_batch = true;
    int world_size = 0;
};

pairing pairing_of(const case_spec& spec) {
    pairing p;
    p.x_workers = &spec.partition("P_x").workers;
    p.y_workers = &spec.partition("P_y").workers;
    p.P_x_shape = spec.partition("P_x").shape;
    p.P_y_shape = spec.partition("P_y").shape;
    p.transpose_src = spec.flag("transpose_src", false);
    p.transpose_dest = spec.flag("transpose_dest", false);
    p.preserve_batch = spec.flag("preserve_batch", true);
    p.world_size = spec.world_size;
    return p;
}

// One direction of a broadcast or sum-reduction, as the spec states it for every worker:
// receivers get the reference's piece; a worker that only gives returns a zero-volume tensor
// (keeping the batch extent of its input with preserve_batch); a worker in neither
// partition returns a copy of its (zero-volume) input.
template <class T, class Serial>
std::vector<tensor<T>> route(const std::vector<tensor<T>>& in, const std::vector<int>& from, const std::vector<int>& to,
                             const pairing& p, Serial serial) {
    const auto out = serial(pieces_of(in, from));
    return place<T>(out, to, p.world_size, [&](std::size_t w) {
        if (rank_in(from, w) >= 0) return runners::idle_piece<T>(batch_of(shape_of(in[w])), p.preserve_batch);
        return in[w];
    });
}

broadcast_options options_of(const pairing& p) { return {p.transpose_src, p.transpose_dest, p.preserve_batch}; }

template <class T>
case_problem<T> make_broadcast(const case_spec& spec, const case_world& world) {
    const pairing p = pairing_of(spec);
    case_problem<T> problem;
    problem.layer = std::make_unique<broadcast<T>>(world.get("P_x"), world.get("P_y"), options_of(p));
    problem.input = [p, shape = spec.x_shape](std::uint64_t seed) {
        return runners::random_on<T>(*p.x_workers, shape, p.world_size, seed);
    };
    problem.forward = [p](const std::vector<tensor<T>>& x) {
        return route<T>(x, *p.x_workers, *p.y_workers, p, [&](const std::vector<tensor<T>>& pieces) {
            return ref::broadcast(pieces, p.P_x_shape, p.P_y_shape, p.transpose_src, p.transpose_dest);
        });
    };
    problem.adjoint = [p](const std::vector<tensor<T>>& dy) {
        return route<T>(dy, *p.y_workers, *p.x_workers, p, [&](const std::vector<tensor<T>>& pieces) {
            return ref::broadcast_adjoint(pieces, p.P_x_shape, p.P_y_shape, p.transpose_src, p.transpose_dest);
        });
    };
    problem.forward_exact = true;   // copies
    problem.adjoint_exact = false;  // sums
    problem.adjoint_bound = problem.adjoint;  // of coefficients 1: on |dy|, the sums of |terms|
    return problem;
}

template <class T>
case_problem<T> make_sum_reduce(const case_spec& spec, const case_world& world) {
    const pairing p = pairing_of(spec);
    case_problem<T> problem;
    problem.layer = std::make_unique<sum_reduce<T>>(world.get("P_x"), world.get("P_y"), options_of(p));
    problem.input = [p, shape = spec.x_shape](std::uint64_t seed) {
        return runners::random_on<T>(*p.x_workers, shape, p.world_size, seed);
    };
    problem.forward = [p](const std::vector<tensor<T>>& x) {
        return route<T>(x, *p.x_workers, *p.y_workers, p, [&](const std::vector<tensor<T>>& pieces) {
            return ref::sum_reduce(pieces, p.P_x_shape, p.P_y_shape, p.transpose_src, p.transpose_dest);
        });
    };
    problem.adjoint = [p](const std::vector<tensor<T>>& dy) {
        return route<T>(dy, *p.y_workers, *p.x_workers, p, [&](const std::vector<tensor<T>>& pieces) {
            return ref::sum_reduce_adjoint(pieces, p.P_x_shape, p.P_y_shape, p.transpose_src, p.transpose_dest);
        });
    };
    problem.forward_exact = false;  // sums
    problem.adjoint_exact = true;   // copies
    problem.forward_bound = problem.forward;  // of coefficients 1: on |x|, the sums of |terms|
    return problem;
}

template <class T>
case_problem<T> make_all_sum_reduce(const case_spec& spec, const case_world& world) {
    const auto* part = &spec.partition("P_x");  // the spec outlives the problem: no copy of its workers
    const auto axes = spec.list("axes_reduce");
    const int world_size = spec.world_size;
    case_problem<T> problem;
    problem.layer = std::make_unique<all_sum_reduce<T>>(world.get("P_x"), axes);
    problem.input = [part, world_size, shape = spec.x_shape](std::uint64_t seed) {
        return runners::random_on<T>(part->workers, shape, world_size, seed);
    };
    // Self-adjoint; workers outside P_x return a copy of their input.
    auto apply = [part, axes, world_size](const std::vector<tensor<T>>& in) {
        const auto out = ref::all_sum_reduce(pieces_of(in, part->workers), part->shape, axes);
        return place<T>(out, part->workers, world_size, [&](std::size_t w) { return in[w]; });
    };
    problem.forward = problem.adjoint = apply;
    problem.forward_bound = problem.adjoint_bound = apply;  // sums of coefficients 1
    return problem;
}

const std::vector<option_spec> pairing_options = {{"transpose_src", option_kind::boolean},
                                                  {"transpose_dest", option_kind::boolean},
                                                  {"preserve_batch", option_kind::boolean}};

}  // namespace

layer_runner broadcast_runner() {
    layer_runner r;
    r.layer = "Broadcast";
    r.partitions = {"P_x", "P_y"};
    r.options = pairing_options;
    r.make_float = &make_broadcast<float>;
    r.make_double = &make_broadcast<double>;
    return r;
}

layer_runner sum_reduce_runner() {
    layer_runner r;
    r.layer = "SumReduce";
    r.partitions = {"P_x", "P_y"};
    r.options = pairing_options;
    r.make_float = &make_sum_reduce<float>;
    r.make_double = &make_sum_reduce<double>;
    return r;
}

layer_runner all_sum_reduce_runner() {
    layer_runner r;
    r.layer = "AllSumReduce";
    r.partitions = {"P_x"};
    r.options = {{"axes_reduce", option_kind::index_list, true}};
    r.make_float = &make_all_sum_reduce<float>;
    r.make_double = &make_all_sum_reduce<double>;
    return r;
}

}  // namespace distdl::verify
