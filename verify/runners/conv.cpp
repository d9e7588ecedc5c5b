// Runners of the distributed convolutions (spec 004): FeatureConvNd (P_x), ChannelConvNd and
// GeneralConvNd (P_x, P_y, P_w) and the selector ConvNd (P_x; P_y and P_w optional), N = 1, 2, 3.
// x_shape is the global input [batch, in_channels, L_1..L_N], balanced over P_x; options
// in_channels, out_channels, kernel_size (required), stride, padding, dilation, bias (default
// true). The model starts from distdl::conv_initial_parameters with a seed derived from the
// case seed; the reference is reference/conv on the whole tensors, cut into the balanced
// blocks of P_y (output) and P_x (input gradient); with only P_x given, P_y and P_w are P_x.
// The layer is given x_shape as its input_shape (planned at construction) unless the case says
// "input_shape": "learnt" (learnt from the pieces at the first forward).
#include "core/decomposition.hpp"
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "layers/conv_select.hpp"
#include "reference/conv.hpp"
#include "reference/repartition.hpp"
#include "verify/case_file.hpp"
#include "verify/registry.hpp"
#include "verify/runners/lazy.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::verify {

namespace {

using runners::pieces_of;
using runners::place;
using runners::rank_in;

enum class conv_family { feature, channel, general, select };

struct conv_case {
    std::size_t dims = 0;
    const std::vector<int>*x_workers = nullptr, *y_workers = nullptr, *w_workers = nullptr;  // the spec's lists
    shape_t P_x_shape, P_y_shape, P_w_shape, x_shape;
    conv_spec spec;
    ref::conv_geometry geometry;
    int world_size = 0;
};

// Block [o0, o1) x [i0, i1) x (whole kernel) of a weight tensor; [o0, o1) of a bias.
template <class T>
tensor<T> weight_block(const tensor<T>& w, std::size_t o0, std::size_t o1, std::size_t i0, std::size_t i1) {
    shape_t shape = shape_of(w);
    const std::size_t in = shape[1], kernel = w.size() / std::max<std::size_t>(1, shape[0] * shape[1]);
    shape[0] = o1 - o0;
    shape[1] = i1 - i0;
    tensor<T> out(shape);
    for (std::size_t o = o0; o < o1; ++o)
        for (std::size_t i = i0; i < i1; ++i)
            std::copy_n(w.data() + (o * in + i) * kernel, kernel, out.data() + ((o - o0) * (i1 - i0) + i - i0) * kernel);
    return out;
}
template <class T>
tensor<T> bias_block(const tensor<T>& b, std::size_t o0, std::size_t o1) {
    tensor<T> out(shape_t{o1 - o0});
    std::copy(b.data() + o0, b.data() + o1, out.data());
    return out;
}

template <class T>
std::unique_ptr<module<T>> build_layer(conv_family family, const conv_case& c, const case_world& world,
                                       bool give_input_shape) {
    conv_options options{.kernel_size = c.spec.kernel_size,
                         .stride = c.spec.stride,
                         .padding = c.spec.padding,
                         .dilation = c.spec.dilation,
                         .bias = c.spec.bias,
                         .seed = c.spec.seed};
    if (give_input_shape) options.input_shape = c.x_shape;
    const std::size_t in = c.spec.in_channels, out = c.spec.out_channels;
    switch (family) {
        case conv_family::feature: return std::make_unique<feature_conv<T>>(c.dims, world.get("P_x"), in, out, options);
        case conv_family::channel:
            return std::make_unique<channel_conv<T>>(c.dims, world.get("P_x"), world.get("P_y"), world.get("P_w"), in,
                                                     out, options);
        case conv_family::general:
            return std::make_unique<general_conv<T>>(c.dims, world.get("P_x"), world.get("P_y"), world.get("P_w"), in,
                                                     out, options);
        case conv_family::select:
            return make_conv<T>(c.dims, world.get("P_x"), world.has("P_y") ? &world.get("P_y") : nullptr,
                                world.has("P_w") ? &world.get("P_w") : nullptr, in, out, options);
    }
    return nullptr;
}

template <class T>
case_problem<T> make_conv_case(conv_family family, std::size_t dims, const case_spec& spec, const case_world& world) {
    conv_case c;
    c.dims = dims;
    c.world_size = spec.world_size;
    c.x_shape = spec.x_shape;
    // The options as given (the layer checks them); per-dimension lists expanded.
    c.spec.spatial_dims = dims;
    c.spec.in_channels = spec.count("in_channels", 0);
    c.spec.out_channels = spec.count("out_channels", 0);
    c.spec.kernel_size = spec.per_dimension("kernel_size", dims, 1);
    c.spec.stride = spec.per_dimension("stride", dims, 1);
    c.spec.padding = spec.per_dimension("padding", dims, 0);
    c.spec.dilation = spec.per_dimension("dilation", dims, 1);
    c.spec.bias = spec.flag("bias", true);
    c.spec.seed = derive_seed(spec.seed, parameter_data, ~std::uint64_t{0});
    c.geometry = {c.spec.stride, c.spec.padding, c.spec.dilation};

    case_problem<T> problem;
    // The layer first: it refuses bad options and partitions (refusal cases end here).
    problem.layer = build_layer<T>(family, c, world, spec.shape_source == input_shape_source::given);

    const bool only_x = !spec.partitions.count("P_y");
    const auto& px = spec.partition("P_x");
    const auto& py = only_x ? px : spec.partition("P_y");
    const auto& pw = only_x ? px : spec.partition("P_w");
    c.x_workers = &px.workers;
    c.y_workers = &py.workers;
    c.w_workers = &pw.workers;
    c.P_x_shape = px.shape;
    c.P_y_shape = py.shape;
    c.P_w_shape = pw.shape;
    using model_ptr = std::shared_ptr<const runners::lazy<conv_parameters<T>>>;
    const auto model = std::make_shared<const runners::lazy<conv_parameters<T>>>(
        [spec = c.spec] { return conv_initial_parameters<T>(spec); });

    auto idle = [](std::size_t) { return runners::no_piece<T>(); };
    problem.input = [c](std::uint64_t seed) {
        return runners::random_input<T>(c.x_shape, c.P_x_shape, *c.x_workers, c.world_size, seed);
    };
    auto forward_with = [c, idle](model_ptr m) {
        return [c, m, idle](const std::vector<tensor<T>>& x) {
            const tensor<T> global = ref::assemble(pieces_of(x, *c.x_workers), c.P_x_shape);
            const auto& p = m->get();
            const tensor<T> y = ref::conv_forward(global, p.weight, c.spec.bias ? &p.bias : nullptr, c.geometry);
            return place<T>(ref::split(y, c.P_y_shape), *c.y_workers, c.world_size, idle);
        };
    };
    auto adjoint_with = [c, idle](model_ptr m) {
        return [c, m, idle](const std::vector<tensor<T>>& dy) {
            const tensor<T> global = ref::assemble(pieces_of(dy, *c.y_workers), c.P_y_shape);
            const tensor<T> dx = ref::conv_adjoint_input(global, m->get().weight, c.x_shape, c.geometry);
            return place<T>(ref::split(dx, c.P_x_shape), *c.x_workers, c.world_size, idle);
        };
    };
    const auto magnitudes = std::make_shared<const runners::lazy<conv_parameters<T>>>([model] {
        return conv_parameters<T>{xt::abs(model->get().weight), xt::abs(model->get().bias)};
    });
    problem.forward = forward_with(model);
    problem.adjoint = adjoint_with(model);
    problem.forward_bound = forward_with(magnitudes);
    problem.adjoint_bound = adjoint_with(magnitudes);

    auto hook = std::make_shared<parameter_hook<T>>();
    hook->names = c.spec.bias ? std::vector<std::string>{"weight", "bias"} : std::vector<std::string>{"weight"};
    hook->offsets = c.spec.bias ? std::vector<std::string>{"bias"} : std::vector<std::string>{};
    // Worker (co, ci, 0..0) of P_w owns the weight block of output channels balanced(C_out,
    // P_co, co) and input channels balanced(C_in, P_ci, ci); with ci = 0 also that bias block.
    hook->reference = [c, model](const std::vector<tensor<T>>& x, const std::vector<tensor<T>>& dy) {
        const tensor<T> x_global = ref::assemble(pieces_of(x, *c.x_workers), c.P_x_shape);
        const tensor<T> dy_global = ref::assemble(pieces_of(dy, *c.y_workers), c.P_y_shape);
        const tensor<T> dw = ref::conv_adjoint_weight(x_global, dy_global, c.spec.weight_shape(), c.geometry);
        const tensor<T> db = ref::conv_adjoint_bias(dy_global);
        const auto& initial = model->get();
        std::vector<std::vector<parameter<T>>> owned(static_cast<std::size_t>(c.world_size));
        const std::size_t P_co = c.P_w_shape[0], P_ci = c.P_w_shape[1];
        for (std::size_t w = 0; w < owned.size(); ++w) {
            const int p = rank_in(*c.w_workers, w);
            if (p < 0) continue;
            const shape_t at = unravel_index(static_cast<std::size_t>(p), c.P_w_shape);
            if (std::any_of(at.begin() + 2, at.end(), [](std::size_t i) { return i != 0; })) continue;
            const std::size_t o0 = balanced_start(c.spec.out_channels, P_co, at[0]);
            const std::size_t o1 = balanced_stop(c.spec.out_channels, P_co, at[0]);
            const std::size_t i0 = balanced_start(c.spec.in_channels, P_ci, at[1]);
            const std::size_t i1 = balanced_stop(c.spec.in_channels, P_ci, at[1]);
            owned[w].push_back(
                {"weight", weight_block(initial.weight, o0, o1, i0, i1), weight_block(dw, o0, o1, i0, i1)});
            if (c.spec.bias && at[1] == 0)
                owned[w].push_back({"bias", bias_block(initial.bias, o0, o1), bias_block(db, o0, o1)});
        }
        return owned;
    };
    problem.parameters = hook;
    return problem;
}

layer_runner conv_runner(conv_family family, const std::string& prefix, std::size_t dims) {
    layer_runner r;
    r.layer = prefix + std::to_string(dims) + "d";
    if (family == conv_family::feature) {
        r.partitions = {"P_x"};
    } else if (family == conv_family::select) {
        r.partitions = {"P_x"};
        r.optional_partitions = {"P_y", "P_w"};
    } else {
        r.partitions = {"P_x", "P_y", "P_w"};
    }
    r.options = {{"in_channels", option_kind::count, true},
                 {"out_channels", option_kind::count, true},
                 {"kernel_size", option_kind::per_dimension, true},
                 {"stride", option_kind::per_dimension},
                 {"padding", option_kind::per_dimension},
                 {"dilation", option_kind::per_dimension},
                 {"bias", option_kind::boolean}};
    r.leading_dims = 2;
    r.accepts_input_shape = true;
    r.chainable = true;
    r.make_float = [family, dims](const case_spec& s, const case_world& w) {
        return make_conv_case<float>(family, dims, s, w);
    };
    r.make_double = [family, dims](const case_spec& s, const case_world& w) {
        return make_conv_case<double>(family, dims, s, w);
    };
    return r;
}

}  // namespace

std::vector<layer_runner> conv_runners() {
    std::vector<layer_runner> all;
    for (std::size_t dims = 1; dims <= 3; ++dims) {
        all.push_back(conv_runner(conv_family::feature, "FeatureConv", dims));
        all.push_back(conv_runner(conv_family::channel, "ChannelConv", dims));
        all.push_back(conv_runner(conv_family::general, "GeneralConv", dims));
        all.push_back(conv_runner(conv_family::select, "Conv", dims));
    }
    return all;
}

}  // namespace distdl::verify
