// Runner of Sequential (layers/sequential.hpp): a chain of stages, each a case of a chainable
// layer (Linear, Repartition, Flatten, ReLU, the convolutions, the poolings) on the case's
// partitions under the stage's own names, built by that layer's runner. x_shape is the first
// stage's global input; every other stage's is the global output of the stage before, which the
// reference chain finds while the chain is built (once per case: serial_memo.hpp). The
// reference runs the stages' references in order (forward) and in reverse (adjoint). The
// stages' parameters are renamed "<stage>.<name>" ("0.weight"), so that the dot-product test
// takes each stage's parameters on their own (the chain is linear in each of them, not in all
// of them at once).
#include <functional>
#include <memory>

#include "layers/sequential.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/layer_runner.hpp"
#include "verify/runners/pieces.hpp"
#include "verify/serial_memo.hpp"

namespace distdl::verify {

namespace {

template <class T>
using pieces = std::vector<tensor<T>>;

// What stage i's parameter names start with: "0.", "1.", ...
std::string stage_prefix(std::size_t i) { return std::to_string(i) + "."; }

// The stages and their reference problems (their layers moved into the sequential module).
// The problems refer to the specs, which therefore never move once built.
template <class T>
struct stage_chain {
    std::vector<case_spec> specs;
    std::vector<case_problem<T>> problems;
    pieces<T> point;                    // the input of the last forward without bound

    using map = std::function<pieces<T>(const pieces<T>&)>;
    // A stage's reference or, with `bound`, its bound where it has one (data movement has none:
    // its reference serves).
    static const map& forward_of(const case_problem<T>& p, bool bound) {
        return bound && p.forward_bound ? p.forward_bound : p.forward;
    }
    static const map& adjoint_of(const case_problem<T>& p, bool bound) {
        return bound && p.adjoint_bound ? p.adjoint_bound : p.adjoint;
    }

    // Forward without bound sets the point of every max pooling's adjoint (its selection) and
    // keeps its input to set it again; the bounds leave it as it is.
    pieces<T> forward(const pieces<T>& x, bool bound) {
        if (!bound) point = x;
        pieces<T> y = x;
        for (const auto& p : problems) y = forward_of(p, bound)(y);
        return y;
    }
    pieces<T> adjoint(pieces<T> dy, bool bound) const {
        for (auto p = problems.rbegin(); p != problems.rend(); ++p) dy = adjoint_of(*p, bound)(dy);
        return dy;
    }

    // Every stage's parameters after forward(x) and adjoint(dy), by world rank, renamed; `bound`:
    // their sums of |terms| from |x| and |dy|, at the point of the last forward without bound.
    std::vector<std::vector<parameter<T>>> parameters(const pieces<T>& x, const pieces<T>& dy, bool bound) {
        if (bound) {
            DISTDL_REQUIRE(!point.empty(), "Sequential runner: the bounds of the gradients need their values first");
            forward(point, false);
        } else {
            point = x;
        }
        const std::size_t n = problems.size();
        std::vector<pieces<T>> inputs{x}, gradients(n);
        // Every stage's forward, the last one's too: it sets that stage's point.
        for (std::size_t i = 0; i < n; ++i) inputs.push_back(forward_of(problems[i], bound)(inputs[i]));
        gradients[n - 1] = dy;
        for (std::size_t i = n - 1; i > 0; --i) gradients[i - 1] = adjoint_of(problems[i], bound)(gradients[i]);
        std::vector<std::vector<parameter<T>>> owned(x.size());
        for (std::size_t i = 0; i < n; ++i) {
            const auto& hook = problems[i].parameters;
            if (!hook) continue;
            const auto& reference = bound && hook->reference_bound ? hook->reference_bound : hook->reference;
            auto stage_owned = reference(inputs[i], gradients[i]);
            for (std::size_t w = 0; w < owned.size(); ++w)
                for (auto& p : stage_owned.at(w)) {
                    p.name = stage_prefix(i) + p.name;
                    owned[w].push_back(std::move(p));
                }
        }
        return owned;
    }
};

// The global shape of a stage's output pieces: balanced over P_y, or P_x without one.
template <class T>
shape_t global_output_shape(const case_spec& stage, const pieces<T>& y) {
    const partition_spec& p = stage.partition(stage.partitions.count("P_y") ? "P_y" : "P_x");
    return shape_of(ref::assemble(runners::pieces_of(y, p.workers), p.shape));
}

// A stage's reference output pieces and their global shape (the next stage's x_shape).
template <class T>
struct stage_output {
    pieces<T> y;
    shape_t shape;
};

template <class T>
case_problem<T> make_sequential(const case_spec& spec, const case_world& world) {
    auto chain = std::make_shared<stage_chain<T>>();
    chain->specs = spec.stages;
    auto layer = std::make_unique<sequential<T>>();
    auto hook = std::make_shared<parameter_hook<T>>();
    shape_t x_shape = spec.x_shape;
    const pieces<T>* x = nullptr;  // the reference's pieces of the stage's input, for the next stage's shape
    bool shapes_known = true;
    for (std::size_t i = 0; i < chain->specs.size(); ++i) {
        case_spec& stage = chain->specs[i];
        stage.x_shape = x_shape;
        case_world stage_world{world.world, {}};
        for (const auto& [name, source] : stage.partition_sources)
            stage_world.partitions.emplace(name, world.get(source));
        case_problem<T> problem = factory_of<T>(*stage.stage_runner)(stage, stage_world);

        const std::string prefix = stage_prefix(i);
        for (auto* p : problem.layer->parameters()) p->name = prefix + p->name;
        if (problem.parameters) {
            for (const auto& name : problem.parameters->names) hook->names.push_back(prefix + name);
            for (const auto& name : problem.parameters->offsets) hook->offsets.push_back(prefix + name);
        }
        // Each stage's reference output once per case, not once per worker (serial_memo.hpp).
        if (i == 0) x = &world.serial->once<pieces<T>>(case_world::input_key, [&] { return problem.input(spec.seed); });
        // A chain whose partitions or shapes do not fit has no reference from here on: the next
        // stages keep this input shape, so that the layers find the misfit (a refusal case); a
        // case that should pass fails at the reference's forward, which meets the same error.
        if (shapes_known) {
            try {
                const auto& output = world.serial->once<stage_output<T>>("sequential stage " + std::to_string(i), [&] {
                    stage_output<T> out{problem.forward(*x), {}};
                    out.shape = global_output_shape(stage, out.y);
                    return out;
                });
                x = &output.y;
                x_shape = output.shape;
            } catch (const std::exception&) {
                shapes_known = false;
            }
        }

        layer->append(std::move(problem.layer));
        chain->problems.push_back(std::move(problem));
    }

    case_problem<T> out;
    out.layer = std::move(layer);
    out.input = [chain](std::uint64_t seed) { return chain->problems.front().input(seed); };
    out.forward = [chain](const pieces<T>& x) { return chain->forward(x, false); };
    out.adjoint = [chain](const pieces<T>& dy) { return chain->adjoint(dy, false); };
    out.forward_bound = [chain](const pieces<T>& x) { return chain->forward(x, true); };
    out.adjoint_bound = [chain](const pieces<T>& dy) { return chain->adjoint(dy, true); };
    out.forward_exact = out.adjoint_exact = true;
    for (const auto& p : chain->problems) {
        out.forward_exact = out.forward_exact && p.forward_exact;
        out.adjoint_exact = out.adjoint_exact && p.adjoint_exact;
    }
    if (!hook->names.empty()) {
        hook->reference = [chain](const pieces<T>& x, const pieces<T>& dy) { return chain->parameters(x, dy, false); };
        hook->reference_bound = [chain](const pieces<T>& x, const pieces<T>& dy) {
            return chain->parameters(x, dy, true);
        };
        out.parameters = hook;
    }
    return out;
}

}  // namespace

layer_runner sequential_runner() {
    layer_runner r;
    r.layer = "Sequential";
    r.takes_stages = true;
    r.make_float = &make_sequential<float>;
    r.make_double = &make_sequential<double>;
    return r;
}

}  // namespace distdl::verify
