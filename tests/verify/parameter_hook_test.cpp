// The parameter hook of the harness (verify/parameter_checks.*): a layer with parameters that
// is right passes; wrong gradients, a wrong adjoint with respect to a parameter (which the
// reference repeats, so only the dot-product test can see it) and wrong ownership fail with a
// message that names the parameter.
#include <algorithm>

#include <gtest/gtest.h>

#include "verify/case_file.hpp"
#include "verify/random.hpp"
#include "verify/registry.hpp"
#include "verify/transports.hpp"

namespace {

using namespace distdl;
using namespace distdl::verify;

enum class flaw { none, weight_gradient, weight_adjoint, bias_adjoint, no_bias };

// Every worker of P_x owns a scalar weight w and bias b: y = w x + b, dx = w dy,
// dw += <dy, x>, db += sum dy (each flaw doubles one of them, or hides the bias).
template <class T>
class scaled_shift : public module<T> {
  public:
    scaled_shift(const cartesian_partition& P_x, flaw f) : flaw_(f), active_(P_x.active()) {
        const T w = T(0.75) + T(P_x.rank() + 1) / T(8), b = T(-0.5);
        weight_ = {"weight", tensor<T>(shape_t{1}, w), tensor<T>(shape_t{1}, T(0))};
        bias_ = {"bias", tensor<T>(shape_t{1}, b), tensor<T>(shape_t{1}, T(0))};
    }
    std::vector<parameter<T>*> parameters() override {
        if (!active_) return {};
        if (flaw_ == flaw::no_bias) return {&weight_};
        return {&weight_, &bias_};
    }

  protected:
    void do_forward(const tensor<T>& x, tensor<T>& y) override {
        x_ = x;
        y = x;
        if (!active_) return;
        for (auto& v : y) v = weight_.value(0) * v + bias_.value(0);
    }
    void do_adjoint(const tensor<T>& dy, tensor<T>& dx) override {
        dx = dy;
        if (!active_) return;
        T dw = 0, db = 0;
        for (std::size_t i = 0; i < dy.size(); ++i) {
            dw += dy.data()[i] * x_.data()[i];
            db += dy.data()[i];
        }
        const bool doubled_w = flaw_ == flaw::weight_gradient || flaw_ == flaw::weight_adjoint;
        weight_.grad(0) += doubled_w ? 2 * dw : dw;
        bias_.grad(0) += flaw_ == flaw::bias_adjoint ? 2 * db : db;
        for (auto& v : dx) v *= weight_.value(0);
    }

  private:
    flaw flaw_;
    bool active_;
    parameter<T> weight_, bias_;
    tensor<T> x_;
};

template <class T, flaw F>
case_problem<T> make_layer(const case_spec& spec, const case_world& world) {
    const int ws = spec.world_size;
    const shape_t shape = spec.x_shape;
    case_problem<T> p;
    p.layer = std::make_unique<scaled_shift<T>>(world.get("P_x"), F);
    auto w_of = [](int rank) { return T(0.75) + T(rank + 1) / T(8); };
    p.input = [=](std::uint64_t seed) {
        std::vector<tensor<T>> x;
        for (int r = 0; r < ws; ++r) x.push_back(random_tensor<T>(shape, derive_seed(seed, input_data, std::size_t(r))));
        return x;
    };
    p.forward = [=](const std::vector<tensor<T>>& x) {
        auto y = x;
        for (int r = 0; r < ws; ++r)
            for (auto& v : y[std::size_t(r)]) v = w_of(r) * v + T(-0.5);
        return y;
    };
    p.adjoint = [=](const std::vector<tensor<T>>& dy) {
        auto dx = dy;
        for (int r = 0; r < ws; ++r) dx[std::size_t(r)] *= w_of(r);
        return dx;
    };
    auto hook = std::make_shared<parameter_hook<T>>();
    hook->names = {"weight", "bias"};
    hook->offsets = {"bias"};
    // The reference repeats the adjoint flaws (only the dot-product test can catch those), not
    // the gradient flaw.
    hook->reference = [=](const std::vector<tensor<T>>& x, const std::vector<tensor<T>>& dy) {
        std::vector<std::vector<parameter<T>>> owned(static_cast<std::size_t>(ws));
        for (int r = 0; r < ws; ++r) {
            T dw = 0, db = 0;
            for (std::size_t i = 0; i < dy[std::size_t(r)].size(); ++i) {
                dw += dy[std::size_t(r)].data()[i] * x[std::size_t(r)].data()[i];
                db += dy[std::size_t(r)].data()[i];
            }
            if (F == flaw::weight_adjoint) dw *= 2;
            if (F == flaw::bias_adjoint) db *= 2;
            owned[std::size_t(r)] = {{"weight", tensor<T>(shape_t{1}, w_of(r)), tensor<T>(shape_t{1}, dw)},
                                     {"bias", tensor<T>(shape_t{1}, T(-0.5)), tensor<T>(shape_t{1}, db)}};
        }
        return owned;
    };
    p.parameters = hook;
    return p;
}

template <flaw F>
layer_runner runner(const std::string& name) {
    layer_runner r;
    r.layer = name;
    r.partitions = {"P_x"};
    r.make_float = &make_layer<float, F>;
    r.make_double = &make_layer<double, F>;
    return r;
}

const runner_registry& registry() {
    static const runner_registry reg = [] {
        runner_registry r;
        r.add(runner<flaw::none>("Affine"));
        r.add(runner<flaw::weight_gradient>("WrongWeightGradient"));
        r.add(runner<flaw::weight_adjoint>("WrongWeightAdjoint"));
        r.add(runner<flaw::bias_adjoint>("WrongBiasAdjoint"));
        r.add(runner<flaw::no_bias>("HidesBias"));
        return r;
    }();
    return reg;
}

case_outcome run(const std::string& layer, const std::string& dtype = "float64") {
    const nlohmann::json doc = {{"schema", 1},
                                {"name", "test/" + layer},
                                {"layer", layer},
                                {"world_size", 3},
                                {"partitions", {{"P_x", {{"workers", {{"range", {0, 3}}}}, {"shape", {3}}}}}},
                                {"x_shape", {4, 2}},
                                {"dtype", dtype},
                                {"expect", "pass"}};
    const auto spec = parse_case(doc, "inline.json", registry());
    return run_on_simulator(spec, *registry().find(spec.layer), 30);
}

bool mentions(const case_outcome& out, const std::string& text) { return out.message.find(text) != std::string::npos; }

TEST(parameter_hook, affine_layer_passes_every_check) {
    for (const char* type : {"float64", "float32"}) {
        const auto out = run("Affine", type);
        EXPECT_TRUE(out.passed()) << type << ": " << out.message;
        EXPECT_LE(out.dot_error, type == std::string("float64") ? 1e-13 : 1e-5);
    }
}

TEST(parameter_hook, wrong_gradient_fails_equivalence) {
    const auto out = run("WrongWeightGradient");
    EXPECT_FALSE(out.passed());
    EXPECT_TRUE(mentions(out, "weight gradient differs from the reference")) << out.message;
}

TEST(parameter_hook, wrong_adjoint_fails_the_dot_product_test_of_that_parameter) {
    auto out = run("WrongWeightAdjoint");
    EXPECT_FALSE(out.passed());
    EXPECT_TRUE(mentions(out, "adjoint dot-product test with respect to weight")) << out.message;
    out = run("WrongBiasAdjoint", "float32");
    EXPECT_FALSE(out.passed());
    EXPECT_TRUE(mentions(out, "adjoint dot-product test with respect to bias")) << out.message;
}

TEST(parameter_hook, wrong_ownership_fails) {
    const auto out = run("HidesBias");
    EXPECT_FALSE(out.passed());
    EXPECT_TRUE(mentions(out, "owns parameters [weight], the reference [weight,bias]")) << out.message;
}

}  // namespace
