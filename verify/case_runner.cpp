#include "verify/case_runner.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "verify/json_number.hpp"
#include "verify/parameter_checks.hpp"
#include "verify/random.hpp"

namespace distdl::verify {

namespace {

// The reference's output, the adjoint probe and the reference's adjoint, with the scales
// compare_piece judges them by: their largest |value|, or their largest sum of |terms|
// (case_problem::forward_bound, adjoint_bound) when larger.
template <class T>
struct reference_pieces {
    std::vector<tensor<T>> want_y, probe, want_dx;
    double y_scale = 0, dx_scale = 0;
};

case_world build_world(const case_spec& spec, const std::shared_ptr<communicator>& comm) {
    case_world world{partition::world(comm), {}};
    // std::map order: every worker creates the partitions in the same order (collectives).
    for (const auto& [name, p] : spec.partitions)
        world.partitions.emplace(
            name, world.world.create_partition_inclusive(p.workers).create_cartesian_topology_partition(p.shape));
    return world;
}

template <class T>
worker_result run_typed(const case_spec& spec, const layer_runner& runner, const std::shared_ptr<communicator>& comm,
                        serial_memo* shared) {
    worker_result result;
    result.rank = comm->rank();
    const auto rank = static_cast<std::size_t>(result.rank);
    const bool expect_error = !spec.expect_pass();

    // In a case that must be refused, an error of the layer is the expected outcome; a
    // transport error (another rank failed, a deadlock) is not, and goes on to the transport,
    // nor is a case the runner cannot build (case_error), which fails as such.
    auto attempt = [&](auto&& step) {
        if (!expect_error) {
            step();
            return true;
        }
        try {
            step();
            return true;
        } catch (const communication_error&) {
            throw;
        } catch (const case_error&) {
            throw;
        } catch (const std::exception& e) {
            result.refused = true;
            result.refusal = e.what();
            return false;
        }
    };
    auto note = [&](const std::string& problem) {
        if (result.problem.empty() && !problem.empty()) result.problem = problem;
    };

    // The serial side, shared with the other workers of this process when `shared` is given;
    // each part only once a worker needs it (a refused case may have no serial meaning).
    serial_memo own;
    serial_memo& serial = shared ? *shared : own;
    std::optional<case_world> world;
    std::optional<case_problem<T>> problem;
    if (!attempt([&] {
            world.emplace(build_world(spec, comm));
            world->serial = &serial;
            problem.emplace(factory_of<T>(runner)(spec, *world));
        }))
        return result;

    using pieces = std::vector<tensor<T>>;
    const auto& x = serial.once<pieces>(case_world::input_key, [&] { return problem->input(spec.seed); });
    DISTDL_REQUIRE(x.size() == static_cast<std::size_t>(spec.world_size),
                   spec.layer << " runner made " << x.size() << " input pieces for " << spec.world_size << " workers");
    tensor<T> y;
    if (!attempt([&] { y = problem->layer->forward(x[rank]); })) return result;
    if (expect_error) return result;  // not refused: the verdict says so

    const double tolerance = equivalence_tolerance(dtype_of<T>());
    const auto& reference = serial.once<reference_pieces<T>>("reference", [&] {
        reference_pieces<T> p;
        p.want_y = problem->forward(x);
        // The adjoint probe: random, independent of x, with the reference output shapes.
        for (std::size_t i = 0; i < p.want_y.size(); ++i)
            p.probe.push_back(random_tensor<T>(shape_of(p.want_y[i]), derive_seed(spec.seed, adjoint_probe, i)));
        if (p.want_y.size() == x.size()) p.want_dx = problem->adjoint(p.probe);
        p.y_scale = largest_magnitude(p.want_y);
        p.dx_scale = largest_magnitude(p.want_dx);
        if (problem->forward_bound)
            p.y_scale = std::max(p.y_scale, largest_magnitude(problem->forward_bound(absolute(x))));
        if (problem->adjoint_bound && !p.want_dx.empty())
            p.dx_scale = std::max(p.dx_scale, largest_magnitude(problem->adjoint_bound(absolute(p.probe))));
        return p;
    });
    const auto& want_y = reference.want_y;
    DISTDL_REQUIRE(want_y.size() == x.size(), spec.layer << " reference made " << want_y.size() << " output pieces");
    auto forward = compare_piece(y, want_y[rank], problem->forward_exact, tolerance, "forward output",
                                 reference.y_scale);
    result.forward_error = forward.relative_error;
    note(forward.problem);

    const auto& probe = reference.probe;
    tensor<T> dx = problem->layer->adjoint(probe[rank]);
    const auto& want_dx = reference.want_dx;
    DISTDL_REQUIRE(want_dx.size() == x.size(), spec.layer << " reference adjoint made " << want_dx.size() << " pieces");
    auto adjoint = compare_piece(dx, want_dx[rank], problem->adjoint_exact, tolerance, "adjoint output",
                                 reference.dx_scale);
    result.adjoint_error = adjoint.relative_error;
    note(adjoint.problem);

    // Parameters: gradients against the reference, the dot-product test for each; the input's
    // test then uses the layer's linear part (offsets zero).
    if (problem->parameters) {
        const auto& hook = *problem->parameters;
        const auto& expected = serial.once<parameter_reference<T>>(
            "parameters", [&] { return reference_parameters(hook, x, reference.probe); });
        auto checked = check_parameters(*problem->layer, hook, expected, x, probe, rank, spec.seed, tolerance, y, dx);
        result.adjoint_error = std::max(result.adjoint_error, checked.gradient_error);
        result.parameter_names = problem->parameters->names;
        result.parameter_terms = checked.terms;
        note(checked.problem);
    }

    // What was compared: the pieces, and the parameter gradients (zero for an empty batch, which they must be).
    result.data_elements = x[rank].size() + want_y[rank].size();
    if (problem->parameters)
        for (const auto* p : problem->layer->parameters()) result.data_elements += p->grad.size();
    // The dot-product test uses what the module computed, not the reference.
    if (y.size() == probe[rank].size() && dx.size() == x[rank].size()) {
        result.terms = dot_terms_of(x[rank], y, probe[rank], dx);
    } else {
        note("the dot-product test cannot pair pieces of different sizes");
    }
    return result;
}

}  // namespace

worker_result run_worker(const case_spec& spec, const layer_runner& runner, const std::shared_ptr<communicator>& world,
                         serial_memo* shared) {
    DISTDL_REQUIRE(world && world->size() == spec.world_size,
                   spec.name << ": needs a world of " << spec.world_size << " ranks, got " << (world ? world->size() : 0));
    return spec.type == dtype::float32 ? run_typed<float>(spec, runner, world, shared)
                                       : run_typed<double>(spec, runner, world, shared);
}

void to_json(nlohmann::json& out, const worker_result& r) {
    out = nlohmann::json{{"rank", r.rank},
                         {"refused", r.refused},
                         {"refusal", r.refusal},
                         {"problem", r.problem},
                         {"forward_error", number_to_json(r.forward_error)},
                         {"adjoint_error", number_to_json(r.adjoint_error)},
                         {"data_elements", r.data_elements},
                         {"terms",
                          {number_to_json(r.terms.fx_y), number_to_json(r.terms.x_fty), number_to_json(r.terms.fx_sq),
                           number_to_json(r.terms.y_sq), number_to_json(r.terms.x_sq), number_to_json(r.terms.fty_sq)}}};
    if (!r.parameter_names.empty()) {
        auto terms = nlohmann::json::array();
        for (const auto& t : r.parameter_terms)
            terms.push_back({number_to_json(t.fx_y), number_to_json(t.x_fty), number_to_json(t.fx_sq),
                             number_to_json(t.y_sq), number_to_json(t.x_sq), number_to_json(t.fty_sq)});
        out["parameter_names"] = r.parameter_names;
        out["parameter_terms"] = terms;
    }
}

void from_json(const nlohmann::json& in, worker_result& r) {
    r.rank = in.at("rank").get<int>();
    r.refused = in.at("refused").get<bool>();
    r.refusal = in.at("refusal").get<std::string>();
    r.problem = in.at("problem").get<std::string>();
    r.forward_error = number_from_json(in.at("forward_error"));
    r.adjoint_error = number_from_json(in.at("adjoint_error"));
    r.data_elements = in.at("data_elements").get<std::size_t>();
    const auto& t = in.at("terms");
    r.terms = {number_from_json(t.at(0)), number_from_json(t.at(1)), number_from_json(t.at(2)),
               number_from_json(t.at(3)), number_from_json(t.at(4)), number_from_json(t.at(5))};
    if (in.contains("parameter_names")) {
        r.parameter_names = in.at("parameter_names").get<std::vector<std::string>>();
        r.parameter_terms.clear();
        for (const auto& p : in.at("parameter_terms"))
            r.parameter_terms.push_back({number_from_json(p.at(0)), number_from_json(p.at(1)), number_from_json(p.at(2)),
                                         number_from_json(p.at(3)), number_from_json(p.at(4)), number_from_json(p.at(5))});
    }
}

}  // namespace distdl::verify
