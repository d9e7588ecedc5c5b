#include "verify/parameter_checks.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "verify/random.hpp"

namespace distdl::verify {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

template <class T>
void zero_gradients(module<T>& layer) {
    for (auto* p : layer.parameters()) p->grad.fill(T(0));
}

// Zero-volume pieces pair with anything empty; otherwise the volumes must agree.
template <class T>
bool pairable(const tensor<T>& a, const tensor<T>& b) {
    return a.size() == b.size();
}

// Raises each name's scale to the largest |value| of its gradient blocks in `all`.
template <class T>
void raise_scales(const std::vector<std::vector<parameter<T>>>& all, std::map<std::string, double>& scale) {
    for (const auto& list : all)
        for (const auto& p : list) {
            double& s = scale[p.name];
            s = std::max(s, largest_magnitude(p.grad));
        }
}

}  // namespace

template <class T>
parameter_reference<T> reference_parameters(const parameter_hook<T>& hook, const std::vector<tensor<T>>& x,
                                            const std::vector<tensor<T>>& probe) {
    parameter_reference<T> out;
    out.expected = hook.reference(x, probe);
    DISTDL_REQUIRE(out.expected.size() == x.size(),
                   "parameter reference made " << out.expected.size() << " lists for " << x.size() << " workers");
    // The gradients are bilinear in x and dy (the parameters' values do not enter them), so the
    // reference on |x| and |dy| gives each element's sum of |terms|: the scale of its rounding
    // error. The gradient's own values may cancel far below it (a bias gradient of one output
    // channel sums a few dy of both signs), which no tolerance relative to them survives.
    raise_scales(out.expected, out.gradient_scale);
    raise_scales((hook.reference_bound ? hook.reference_bound : hook.reference)(absolute(x), absolute(probe)),
                 out.gradient_scale);
    return out;
}

template <class T>
parameter_check_result<T> check_parameters(module<T>& layer, const parameter_hook<T>& hook,
                                           const parameter_reference<T>& reference, const std::vector<tensor<T>>& x,
                                           const std::vector<tensor<T>>& probe,
                                           std::size_t rank, std::uint64_t seed, double tolerance, tensor<T>& y,
                                           tensor<T>& dx) {
    parameter_check_result<T> out;
    auto note = [&](const std::string& problem) {
        if (out.problem.empty() && !problem.empty()) out.problem = problem;
    };

    // 1. Ownership, initial values and gradients against the reference.
    const auto& expected = reference.expected[rank];
    const auto owned = layer.parameters();
    if (owned.size() != expected.size()) {
        std::string got, want;
        for (auto* p : owned) got += (got.empty() ? "" : ",") + p->name;
        for (const auto& p : expected) want += (want.empty() ? "" : ",") + p.name;
        note("owns parameters [" + got + "], the reference [" + want + "]");
    } else {
        for (std::size_t i = 0; i < owned.size(); ++i) {
            if (owned[i]->name != expected[i].name) {
                note("parameter " + std::to_string(i) + " is " + owned[i]->name + ", the reference " + expected[i].name);
                continue;
            }
            note(compare_piece(owned[i]->value, expected[i].value, true, tolerance, owned[i]->name + " value").problem);
            const auto g = compare_piece(owned[i]->grad, expected[i].grad, false, tolerance, owned[i]->name + " gradient",
                                         reference.gradient_scale.at(owned[i]->name));
            out.gradient_error = std::max(out.gradient_error, g.relative_error);
            note(g.problem);
        }
    }

    // 2. The dot-product test with respect to each parameter, linearised (see parameter_hook).
    std::vector<tensor<T>> initial;
    for (auto* p : owned) initial.push_back(p->value);
    auto restore = [&] {
        for (std::size_t i = 0; i < owned.size(); ++i) owned[i]->value = initial[i];
    };
    const tensor<T> zero_x = xt::zeros<T>(shape_of(x[rank]));
    for (std::size_t k = 0; k < hook.names.size(); ++k) {
        const std::string& name = hook.names[k];
        const bool offset = contains(hook.offsets, name);
        std::vector<tensor<T>> delta(owned.size());
        for (std::size_t i = 0; i < owned.size(); ++i) {
            auto& p = *owned[i];
            if (p.name == name) {
                delta[i] = random_tensor<T>(shape_of(p.value), derive_seed(seed, parameter_data, rank * 64 + i));
                p.value = delta[i];
            } else if (contains(hook.offsets, p.name)) {
                p.value.fill(T(0));
            } else {
                p.value = initial[i];
            }
        }
        zero_gradients(layer);
        const tensor<T> fx = layer.forward(offset ? zero_x : x[rank]);
        layer.adjoint(probe[rank]);
        dot_terms t;
        if (pairable(fx, probe[rank])) {
            t.fx_y = dot(fx, probe[rank]);
            t.fx_sq = dot(fx, fx);
            t.y_sq = dot(probe[rank], probe[rank]);
        } else {
            note("with parameter " + name + " under test, the output has " + std::to_string(fx.size()) +
                 " elements, the probe " + std::to_string(probe[rank].size()));
        }
        for (std::size_t i = 0; i < owned.size(); ++i) {
            if (owned[i]->name != name) continue;
            t.x_fty += dot(delta[i], owned[i]->grad);
            t.x_sq += dot(delta[i], delta[i]);
            t.fty_sq += dot(owned[i]->grad, owned[i]->grad);
        }
        out.terms.push_back(t);
    }

    // 3. The input's test needs the linear part: the offsets zero.
    if (!hook.offsets.empty()) {
        restore();
        for (auto* p : owned)
            if (contains(hook.offsets, p->name)) p->value.fill(T(0));
        zero_gradients(layer);
        layer.forward(x[rank], y);
        layer.adjoint(probe[rank], dx);
    }
    restore();
    zero_gradients(layer);
    return out;
}

#define DISTDL_INSTANTIATE(T)                                                                              \
    template parameter_reference<T> reference_parameters<T>(const parameter_hook<T>&,                         \
                                                            const std::vector<tensor<T>>&,                    \
                                                            const std::vector<tensor<T>>&);                   \
    template parameter_check_result<T> check_parameters<T>(                                                   \
        module<T>&, const parameter_hook<T>&, const parameter_reference<T>&, const std::vector<tensor<T>>&,    \
        const std::vector<tensor<T>>&, std::size_t, std::uint64_t, double, tensor<T>&, tensor<T>&);
DISTDL_INSTANTIATE(float)
DISTDL_INSTANTIATE(double)
#undef DISTDL_INSTANTIATE

}  // namespace distdl::verify
