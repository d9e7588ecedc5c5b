// Randomized sweep (fixed seeds, simulator) of FeatureConv1d/2d/3d over partition shapes and
// kernel geometries: kernel sizes odd and even, strides (also beyond the kernel), paddings up
// to beyond the kernel's reach, dilations, pieces of size zero, halos wider than a neighbour's
// piece, fewer outputs than workers. Every worker's output block, input gradient and the
// owner's weight and bias gradients are compared with reference/conv on the global tensors;
// any halo mistake shows as a wrong element.
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "core/decomposition.hpp"
#include "core/halo_exchange.hpp"
#include "layers/conv_feature.hpp"
#include "layers/conv_initial.hpp"
#include "reference/conv.hpp"
#include "reference/repartition.hpp"
#include "simulator/run.hpp"
#include "tests/layers/conv_sweep_draw.hpp"
#include "verify/checks.hpp"
#include "verify/random.hpp"

namespace {

using distdl::shape_t;
using distdl::tensor;

struct sweep_case {
    std::size_t dims = 1, batch = 1, in = 1, out = 1;
    shape_t grid, extent, k, s, p, d;
    bool bias = true;
    std::string describe() const {
        std::ostringstream o;
        o << dims << "-d P " << distdl::format_list(grid) << " L " << distdl::format_list(extent) << " k "
          << distdl::format_list(k) << " s " << distdl::format_list(s) << " p " << distdl::format_list(p) << " d "
          << distdl::format_list(d) << " batch " << batch << " " << in << "->" << out << (bias ? "" : " no bias");
        return o.str();
    }
};

// A random case whose kernel fits (at most 8 workers, tiny tensors).
sweep_case draw(std::mt19937_64& rng) {
    auto pick = [&](std::size_t lo, std::size_t hi) { return std::uniform_int_distribution<std::size_t>(lo, hi)(rng); };
    sweep_case c;
    const std::size_t roll = pick(0, 9);
    c.dims = roll < 6 ? 1 : roll < 9 ? 2 : 3;
    const std::size_t max_workers = c.dims == 1 ? 7 : c.dims == 2 ? 3 : 2;
    c.batch = pick(1, 2);
    c.in = pick(1, 3);
    c.out = pick(1, 3);
    c.bias = pick(0, 3) != 0;
    for (std::size_t e = 0; e < c.dims; ++e) {
        c.grid.push_back(pick(1, max_workers));
        const auto dim = distdl::testing::draw_conv_dimension(pick, {c.dims == 1 ? 14u : 7u, 5, 3, 4, 3});
        c.extent.push_back(dim.extent);
        c.k.push_back(dim.kernel);
        c.s.push_back(dim.stride);
        c.p.push_back(dim.padding);
        c.d.push_back(dim.dilation);
    }
    return c;
}

// Runs one case on the simulator; returns the first problem (empty: none).
std::string run_case(const sweep_case& c, std::uint64_t seed) {
    shape_t x_shape{c.batch, c.in}, P_x{1, 1};
    x_shape.insert(x_shape.end(), c.extent.begin(), c.extent.end());
    P_x.insert(P_x.end(), c.grid.begin(), c.grid.end());
    const distdl::conv_options options{.kernel_size = c.k, .stride = c.s, .padding = c.p, .dilation = c.d,
                                       .bias = c.bias, .seed = seed};
    const auto spec = distdl::normalize_conv_options("FeatureConv", c.dims, c.in, c.out, options);
    const auto model = distdl::conv_initial_parameters<double>(spec);
    const distdl::ref::conv_geometry g{c.s, c.p, c.d};
    const tensor<double> x = distdl::verify::random_tensor<double>(x_shape, seed);
    const tensor<double> y = distdl::ref::conv_forward(x, model.weight, c.bias ? &model.bias : nullptr, g);
    const tensor<double> dy = distdl::verify::random_tensor<double>(distdl::shape_of(y), seed + 1);
    const tensor<double> dx = distdl::ref::conv_adjoint_input(dy, model.weight, x_shape, g);
    const tensor<double> dw = distdl::ref::conv_adjoint_weight(x, dy, spec.weight_shape(), g);
    const tensor<double> db = distdl::ref::conv_adjoint_bias(dy);
    const auto x_pieces = distdl::ref::split(x, P_x), y_pieces = distdl::ref::split(y, P_x);
    const auto dy_pieces = distdl::ref::split(dy, P_x), dx_pieces = distdl::ref::split(dx, P_x);
    const double tolerance = distdl::verify::equivalence_tolerance(distdl::dtype::float64);
    // Errors relative to the whole tensor (a piece's values may cancel to far below it).
    const double y_scale = distdl::verify::largest_magnitude(y_pieces);
    const double dx_scale = distdl::verify::largest_magnitude(dx_pieces);

    std::vector<std::string> problems(x_pieces.size());
    distdl::sim::run(static_cast<int>(x_pieces.size()), [&](const std::shared_ptr<distdl::communicator>& world) {
        const auto me = static_cast<std::size_t>(world->rank());
        const auto part =
            distdl::partition::world(world).create_cartesian_topology_partition(P_x);
        distdl::feature_conv<double> layer(c.dims, part, c.in, c.out, options);
        std::string& problem = problems[me];
        auto note = [&](const distdl::verify::piece_comparison& r) {
            if (problem.empty()) problem = r.problem;
        };
        note(distdl::verify::compare_piece(layer.forward(x_pieces[me]), y_pieces[me], false, tolerance, "output",
                                           y_scale));
        note(distdl::verify::compare_piece(layer.adjoint(dy_pieces[me]), dx_pieces[me], false, tolerance,
                                           "input gradient", dx_scale));
        if (me == 0) {
            const auto params = layer.parameters();
            note(distdl::verify::compare_piece(params.at(0)->grad, dw, false, tolerance, "weight gradient"));
            if (c.bias) note(distdl::verify::compare_piece(params.at(1)->grad, db, false, tolerance, "bias gradient"));
        }
    });
    for (std::size_t r = 0; r < problems.size(); ++r)
        if (!problems[r].empty()) return "worker " + std::to_string(r) + ": " + problems[r];
    return {};
}

TEST(conv_sweep, feature_conv_matches_reference_for_random_geometries) {
    std::mt19937_64 rng(20241122);
    int halo_wider_than_piece = 0, empty_output_blocks = 0;
    for (std::uint64_t i = 0; i < 300; ++i) {
        const sweep_case c = draw(rng);
        for (std::size_t e = 0; e < c.dims; ++e) {
            const std::size_t span = c.d[e] * (c.k[e] - 1) + 1;
            if (span > c.extent[e] / c.grid[e] + 1) ++halo_wider_than_piece;
            if (distdl::kernel_output_length(c.extent[e], c.k[e], c.s[e], c.p[e], c.d[e]) < c.grid[e])
                ++empty_output_blocks;
        }
        const std::string problem = run_case(c, 1000 + i);
        ASSERT_TRUE(problem.empty()) << "case " << i << " (" << c.describe() << "): " << problem;
    }
    // The sweep covers what it claims to.
    EXPECT_GT(halo_wider_than_piece, 30);
    EXPECT_GT(empty_output_blocks, 20);
}

}  // namespace
