// Randomized sweep (fixed seed, simulator) of models: chains of 2-4 layers drawn from
// FeatureConv, ChannelConv, GeneralConv, MaxPool and AvgPool (1-d and 2-d), each on its own
// random partitions and worker sets in a world of up to 12, joined by Repartitions, in one
// `sequential`. Two steps (batch 2, then 1: every layer learns its shapes again) against the
// chain of reference functions on the whole tensors: each step's output and input-gradient
// pieces, and at the end every convolution's accumulated parameter gradients on their owners.
// (sequential_model_checks.cpp runs one such model on both transports.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/halo_exchange.hpp"
#include "core/repartition.hpp"
#include "layers/conv_channel.hpp"
#include "layers/conv_feature.hpp"
#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "layers/sequential.hpp"
#include "reference/conv.hpp"
#include "reference/pool.hpp"
#include "simulator/run.hpp"
#include "tests/layers/conv_test_util.hpp"
#include "tests/layers/sweep_util.hpp"
#include "verify/random_draws.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;
using distdl::testing::check_piece_of;
using distdl::testing::make_partition;
using distdl::testing::piece_of;
using distdl::verify::largest_magnitude;
using distdl::verify::random_draws::concat;
using distdl::verify::random_draws::every_window_reads_input;
using distdl::verify::runners::rank_in;

enum class kind { feature, channel, general, max_pool, avg_pool };
const char* const kind_names[] = {"FeatureConv", "ChannelConv", "GeneralConv", "MaxPool", "AvgPool"};

struct stage {
    kind k = kind::feature;
    shape_t P_x, P_y, P_w;  // full shapes; P_y and P_w are P_x's for FeatureConv and the poolings
    std::vector<int> x_workers, y_workers, w_workers;
    std::size_t in = 1, out = 1;  // channels
    shape_t kernel, stride, padding, dilation;
    bool bias = true;
    bool conv() const { return k == kind::feature || k == kind::channel || k == kind::general; }
    bool three_partitions() const { return k == kind::channel || k == kind::general; }
};

struct model_case {
    std::size_t dims = 1;
    shape_t extent;  // the input's spatial extents
    std::vector<stage> stages;
    std::string describe() const {
        std::ostringstream o;
        o << dims << "-d, L " << distdl::format_list(extent) << ":";
        for (const auto& s : stages)
            o << " " << kind_names[int(s.k)] << " " << s.in << "->" << s.out << " k " << distdl::format_list(s.kernel)
              << " s " << distdl::format_list(s.stride) << " p " << distdl::format_list(s.padding) << " d "
              << distdl::format_list(s.dilation) << " P_x " << distdl::format_list(s.P_x) << " P_y "
              << distdl::format_list(s.P_y) << " P_w " << distdl::format_list(s.P_w) << ";";
        return o.str();
    }
};

constexpr std::size_t world_size = 12;

// A model whose every kernel fits the extents it meets.
model_case draw(std::mt19937_64& rng) {
    auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
    model_case m;
    m.dims = pick(1, 2);
    shape_t extent(m.dims);
    for (auto& n : extent) n = m.dims == 1 ? pick(6, 20) : pick(3, 9);
    m.extent = extent;
    std::size_t channels = pick(1, 4);
    const std::size_t count = pick(2, 4);
    for (std::size_t i = 0; i < count; ++i) {
        stage s;
        s.k = kind(pick(0, 4));
        s.in = channels;
        s.out = s.conv() ? pick(1, 4) : channels;
        s.bias = pick(0, 3) != 0;
        const shape_t in_extent = extent;
        for (std::size_t e = 0; e < m.dims; ++e) {
            const std::size_t n = extent[e];
            std::size_t k, st, p, d;
            do {
                k = pick(1, 4), st = pick(1, 3), p = pick(0, 3), d = s.k == kind::avg_pool ? 1 : pick(1, 2);
            } while (n + 2 * p < d * (k - 1) + 1 ||
                     (s.k == kind::max_pool && !every_window_reads_input(n, k, st, p, d)));
            s.kernel.push_back(k), s.stride.push_back(st), s.padding.push_back(p), s.dilation.push_back(d);
            extent[e] = distdl::kernel_output_length(n, k, st, p, d);
        }
        // The partitions' split, with P_w's workers (P_x's with one partition) within the world.
        // A Repartition never splits an extent of 1 (DESIGN §3), so neither does a partition that
        // one feeds or reads from.
        shape_t grid(m.dims);
        std::size_t p_in = 1, p_out = 1;
        do {
            for (std::size_t e = 0; e < m.dims; ++e) {
                const bool unsplit = s.k == kind::channel || std::min(in_extent[e], extent[e]) == 1;
                grid[e] = unsplit ? 1 : pick(1, m.dims == 1 ? 4 : 2);
            }
            p_in = s.k == kind::feature || s.in == 1 ? 1 : pick(1, 2);  // the poolings may split the channels too
            p_out = s.three_partitions() && s.out > 1 ? pick(1, 3) : 1;
        } while (p_in * p_out * distdl::volume(grid) > world_size);
        s.P_x = concat({1, p_in}, grid);
        s.x_workers = distdl::testing::random_workers(rng, world_size, distdl::volume(s.P_x));
        s.P_y = s.P_w = s.P_x;
        s.y_workers = s.w_workers = s.x_workers;
        if (s.three_partitions()) {
            s.P_y = concat({1, p_out}, grid);
            s.P_w = concat({p_out, p_in}, grid);
            s.y_workers = distdl::testing::random_workers(rng, world_size, distdl::volume(s.P_y));
            s.w_workers = distdl::testing::random_workers(rng, world_size, distdl::volume(s.P_w));
        }
        channels = s.out;
        m.stages.push_back(s);
    }
    return m;
}

distdl::conv_options conv_options_of(const stage& s, std::uint64_t seed) {
    return {.kernel_size = s.kernel, .stride = s.stride, .padding = s.padding, .dilation = s.dilation,
            .bias = s.bias, .seed = seed};
}

// A reference tensor and, elementwise, the sum of the magnitudes of the terms that made it: the
// scale of its rounding, which a value of a few terms of both signs may cancel far below.
struct traced {
    tensor<double> value, bound;
};

// The reference of one stage: forward, and adjoint at the stage's last input (adding a
// convolution's parameter gradients to its sums). The bounds run the same functions on the
// magnitudes (|weight|, |bias|; a pooling's coefficients are >= 0, and a maximum's magnitude
// is at most the largest magnitude in its window).
struct reference_stage {
    const stage& s;
    distdl::conv_parameters<double> model, magnitude;
    distdl::conv_spec spec;
    traced input, dw_sum, db_sum;

    reference_stage(const stage& st, std::size_t dims, std::uint64_t seed) : s(st) {
        if (!s.conv()) return;
        spec = distdl::normalize_conv_options(kind_names[int(s.k)], dims, s.in, s.out, conv_options_of(s, seed));
        model = distdl::conv_initial_parameters<double>(spec);
        magnitude = {xt::abs(model.weight), xt::abs(model.bias)};
        dw_sum = {xt::zeros<double>(spec.weight_shape()), xt::zeros<double>(spec.weight_shape())};
        db_sum = {xt::zeros<double>(shape_t{s.out}), xt::zeros<double>(shape_t{s.out})};
    }
    distdl::ref::conv_geometry conv_geometry() const { return {s.stride, s.padding, s.dilation}; }
    distdl::ref::pool_geometry pool_geometry() const { return {s.kernel, s.stride, s.padding, s.dilation}; }
    tensor<double> forward_of(const tensor<double>& x, const distdl::conv_parameters<double>& m) const {
        if (s.conv()) return distdl::ref::conv_forward(x, m.weight, s.bias ? &m.bias : nullptr, conv_geometry());
        if (s.k == kind::max_pool) return distdl::ref::max_pool(x, pool_geometry());
        return distdl::ref::avg_pool(x, pool_geometry());
    }
    tensor<double> adjoint_of(const tensor<double>& dy, const distdl::conv_parameters<double>& m) const {
        const shape_t x_shape = distdl::shape_of(input.value);
        if (s.k == kind::max_pool) return distdl::ref::max_pool_adjoint(input.value, dy, pool_geometry());
        if (s.k == kind::avg_pool) return distdl::ref::avg_pool_adjoint(dy, x_shape, pool_geometry());
        return distdl::ref::conv_adjoint_input(dy, m.weight, x_shape, conv_geometry());
    }
    traced forward(const traced& x) {
        input = x;
        return {forward_of(x.value, model), forward_of(x.bound, magnitude)};
    }
    traced adjoint(const traced& dy) {
        if (s.conv()) {
            const shape_t w_shape = spec.weight_shape();
            dw_sum.value += distdl::ref::conv_adjoint_weight(input.value, dy.value, w_shape, conv_geometry());
            dw_sum.bound += distdl::ref::conv_adjoint_weight(input.bound, dy.bound, w_shape, conv_geometry());
            if (s.bias) {
                db_sum.value += distdl::ref::conv_adjoint_bias(dy.value);
                db_sum.bound += distdl::ref::conv_adjoint_bias(dy.bound);
            }
        }
        return {adjoint_of(dy.value, model), adjoint_of(dy.bound, magnitude)};
    }
};

// Runs the model on the simulator; returns the first problem (empty: none).
std::string run_model(const model_case& m, std::uint64_t seed) {
    std::vector<reference_stage> chain;
    for (std::size_t i = 0; i < m.stages.size(); ++i) chain.emplace_back(m.stages[i], m.dims, seed + i);
    struct step {
        tensor<double> x, dy;
        traced y, dx;
    };
    std::vector<step> steps;
    for (const std::size_t batch : {2, 1}) {
        step st;
        st.x = distdl::verify::random_tensor<double>(concat({batch, m.stages.front().in}, m.extent), seed + 10 + batch);
        st.y = {st.x, xt::abs(st.x)};
        for (auto& r : chain) st.y = r.forward(st.y);
        st.dy = distdl::verify::random_tensor<double>(distdl::shape_of(st.y.value), seed + 20 + batch);
        st.dx = {st.dy, xt::abs(st.dy)};
        for (auto r = chain.rbegin(); r != chain.rend(); ++r) st.dx = r->adjoint(st.dx);
        steps.push_back(std::move(st));
    }
    const stage &first = m.stages.front(), &last = m.stages.back();
    try {
        distdl::sim::run(int(world_size), [&](const std::shared_ptr<distdl::communicator>& world) {
            const int me = world->rank();
            distdl::sequential<double> net;
            std::vector<distdl::general_conv<double>*> convs;
            std::unique_ptr<distdl::cartesian_partition> previous_output;
            for (std::size_t i = 0; i < m.stages.size(); ++i) {
                const stage& s = m.stages[i];
                const auto P_x = make_partition(world, s.x_workers, s.P_x);
                const auto P_y = s.three_partitions() ? make_partition(world, s.y_workers, s.P_y) : P_x;
                const auto P_w = s.three_partitions() ? make_partition(world, s.w_workers, s.P_w) : P_x;
                if (previous_output) net.emplace<distdl::repartition<double>>(*previous_output, P_x);
                const auto options = conv_options_of(s, seed + i);
                const distdl::pool_options pool{s.kernel, s.stride, s.padding, s.dilation, std::nullopt, m.dims};
                switch (s.k) {
                    case kind::feature:
                        convs.push_back(&net.emplace<distdl::feature_conv<double>>(m.dims, P_x, s.in, s.out, options));
                        break;
                    case kind::channel:
                        convs.push_back(
                            &net.emplace<distdl::channel_conv<double>>(m.dims, P_x, P_y, P_w, s.in, s.out, options));
                        break;
                    case kind::general:
                        convs.push_back(
                            &net.emplace<distdl::general_conv<double>>(m.dims, P_x, P_y, P_w, s.in, s.out, options));
                        break;
                    case kind::max_pool: net.emplace<distdl::distributed_max_pool<double>>(P_x, pool); break;
                    case kind::avg_pool: net.emplace<distdl::distributed_avg_pool<double>>(P_x, pool); break;
                }
                previous_output = std::make_unique<distdl::cartesian_partition>(P_y);
            }
            tensor<double> y, dx;  // reused across steps, as a training loop would
            for (const auto& st : steps) {
                net.forward(piece_of(st.x, first.P_x, first.x_workers, me), y);
                check_piece_of(y, st.y.value, last.P_y, last.y_workers, me, "model output",
                               largest_magnitude(st.y.bound));
                net.adjoint(piece_of(st.dy, last.P_y, last.y_workers, me), dx);
                check_piece_of(dx, st.dx.value, first.P_x, first.x_workers, me, "model input gradient",
                               largest_magnitude(st.dx.bound));
            }
            std::size_t c = 0;
            for (const auto& r : chain) {
                if (!r.s.conv()) continue;
                distdl::testing::check_conv_parameters(
                    convs[c++]->parameters(), r.s.P_w, rank_in(r.s.w_workers, std::size_t(me)), r.spec, r.model,
                    r.dw_sum.value, r.db_sum.value, largest_magnitude(r.dw_sum.bound),
                    largest_magnitude(r.db_sum.bound));
            }
        });
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

TEST(sequential_sweep, random_models_match_the_reference_chain) {
    std::mt19937_64 rng(20261127);
    std::size_t stages = 0, convolutions = 0, two_d = 0;
    for (std::uint64_t i = 0; i < 300; ++i) {
        const model_case m = draw(rng);
        stages += m.stages.size();
        two_d += m.dims == 2;
        for (const auto& s : m.stages) convolutions += s.conv();
        const std::string problem = run_model(m, 5000 + 100 * i);
        ASSERT_TRUE(problem.empty()) << "model " << i << " (" << m.describe() << "): " << problem;
    }
    // The sweep covers what it claims to.
    EXPECT_GT(stages, 800u);
    EXPECT_GT(convolutions, 450u);
    EXPECT_GT(two_d, 120u);
}

}  // namespace
