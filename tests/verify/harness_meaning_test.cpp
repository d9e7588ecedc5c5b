// The harness's own meaning of idle outputs and of "input_split" (issue 11.7), pinned with
// hand-written shapes and values: nothing here is computed by core's zero_volume or
// decomposition helpers or by the reference, so a wrong definition there cannot hide.
#include <map>

#include <gtest/gtest.h>

#include "simulator/run.hpp"
#include "verify/case_file.hpp"
#include "verify/layer_runner.hpp"
#include "verify/registry.hpp"
#include "verify/runners/pieces.hpp"

namespace {

using namespace distdl;
using namespace distdl::verify;
using runners::split_extents;
using sizes = std::vector<std::size_t>;

TEST(harness_meaning, balanced_split_gives_the_first_workers_one_more) {
    EXPECT_EQ(split_extents(8, 3, input_split::balanced), (sizes{3, 3, 2}));
    EXPECT_EQ(split_extents(7, 3, input_split::balanced), (sizes{3, 2, 2}));
    EXPECT_EQ(split_extents(2, 3, input_split::balanced), (sizes{1, 1, 0}));
    EXPECT_EQ(split_extents(0, 2, input_split::balanced), (sizes{0, 0}));
    EXPECT_EQ(split_extents(9, 3, input_split::balanced), (sizes{3, 3, 3}));
}

TEST(harness_meaning, unbalanced_split_puts_every_remainder_on_worker_0) {
    EXPECT_EQ(split_extents(8, 3, input_split::unbalanced), (sizes{4, 2, 2}));
    EXPECT_EQ(split_extents(11, 4, input_split::unbalanced), (sizes{5, 2, 2, 2}));
    EXPECT_EQ(split_extents(2, 3, input_split::unbalanced), (sizes{2, 0, 0}));
    EXPECT_EQ(split_extents(9, 3, input_split::unbalanced), (sizes{3, 3, 3}));
}

TEST(harness_meaning, split_pieces_are_row_major_blocks) {
    // global(i, j) = 10 i + j, 5 x 3, over a 3 x 1 grid, unbalanced: rows [0,3), [3,4), [4,5).
    tensor<double> global(shape_t{5, 3});
    for (std::size_t i = 0; i < 5; ++i)
        for (std::size_t j = 0; j < 3; ++j) global(i, j) = static_cast<double>(10 * i + j);
    const auto pieces = runners::split_pieces(global, {3, 1}, input_split::unbalanced);
    ASSERT_EQ(pieces.size(), 3u);
    EXPECT_EQ(shape_of(pieces[0]), (shape_t{3, 3}));
    EXPECT_EQ(shape_of(pieces[1]), (shape_t{1, 3}));
    EXPECT_EQ(shape_of(pieces[2]), (shape_t{1, 3}));
    EXPECT_EQ(pieces[1](0, 0), 30.0);
    EXPECT_EQ(pieces[2](0, 2), 42.0);
    EXPECT_EQ(pieces[0](2, 1), 21.0);
    // 2 x 2 grid, balanced, 5 x 3: worker 1 = (0, 1) holds rows [0,3) x columns [2,3).
    const auto grid = runners::split_pieces(global, {2, 2}, input_split::balanced);
    ASSERT_EQ(grid.size(), 4u);
    EXPECT_EQ(shape_of(grid[1]), (shape_t{3, 1}));
    EXPECT_EQ(grid[1](2, 0), 22.0);
    EXPECT_EQ(shape_of(grid[2]), (shape_t{2, 2}));
    EXPECT_EQ(grid[2](0, 0), 30.0);
}

TEST(harness_meaning, idle_pieces) {
    EXPECT_EQ(shape_of(runners::no_piece<float>()), (shape_t{0}));
    EXPECT_EQ(shape_of(runners::idle_piece<float>(7, true)), (shape_t{7, 0}));
    EXPECT_EQ(shape_of(runners::idle_piece<double>(7, false)), (shape_t{0}));
}

// Runs a library-style case's runner on every simulated rank and hands rank 0's problem
// (the harness's inputs and expected outputs; no layer call) to `inspect`.
void inspect_runner(const std::string& json_text,
                    const std::function<void(const case_problem<double>&, const case_spec&)>& inspect) {
    const case_spec spec = parse_case(nlohmann::json::parse(json_text), "inline.json", builtin_registry());
    const layer_runner& runner = *builtin_registry().find(spec.layer);
    sim::run(spec.world_size, [&](const std::shared_ptr<communicator>& comm) {
        case_world world{partition::world(comm), {}};
        for (const auto& [name, p] : spec.partitions)
            world.partitions.emplace(
                name, world.world.create_partition_inclusive(p.workers).create_cartesian_topology_partition(p.shape));
        const auto problem = runner.make_double(spec, world);
        if (comm->rank() == 0) inspect(problem, spec);
    });
}

std::vector<shape_t> shapes(const std::vector<tensor<double>>& pieces) {
    std::vector<shape_t> out;
    for (const auto& p : pieces) out.push_back(shape_of(p));
    return out;
}

TEST(harness_meaning, repartition_unbalanced_input_and_idle_outputs) {
    // P_x: workers 0,1,2 on 3x1; P_y: worker 3 on 1x1; worker 4 in neither. x_shape 5 x 3.
    const char* doc = R"({"schema": 1, "name": "t", "layer": "Repartition", "world_size": 5,
        "partitions": {"P_x": {"workers": [0, 1, 2], "shape": [3, 1]}, "P_y": {"workers": [3], "shape": [1, 1]}},
        "options": {"preserve_batch": PB}, "x_shape": [5, 3], "input_split": "unbalanced", "expect": "pass"})";
    for (const bool preserve : {true, false}) {
        std::string text = doc;
        text.replace(text.find("PB"), 2, preserve ? "true" : "false");
        inspect_runner(text, [&](const case_problem<double>& problem, const case_spec& spec) {
            const auto x = problem.input(spec.seed);
            EXPECT_EQ(shapes(x), (std::vector<shape_t>{{3, 3}, {1, 3}, {1, 3}, {0}, {0}}));
            const shape_t idle = preserve ? shape_t{5, 0} : shape_t{0};
            const auto y = problem.forward(x);
            EXPECT_EQ(shapes(y), (std::vector<shape_t>{idle, idle, idle, {5, 3}, {0}}));
            const auto dx = problem.adjoint(y);
            EXPECT_EQ(shapes(dx), (std::vector<shape_t>{{3, 3}, {1, 3}, {1, 3}, idle, {0}}));
        });
    }
}

TEST(harness_meaning, broadcast_idle_outputs) {
    // P_x: worker 0; P_y: workers 1, 2; worker 3 in neither. Every P_x worker holds 2 x 3.
    const char* doc = R"({"schema": 1, "name": "t", "layer": "Broadcast", "world_size": 4,
        "partitions": {"P_x": {"workers": [0], "shape": [1]}, "P_y": {"workers": [1, 2], "shape": [2]}},
        "options": {"preserve_batch": PB}, "x_shape": [2, 3], "expect": "pass"})";
    for (const bool preserve : {true, false}) {
        std::string text = doc;
        text.replace(text.find("PB"), 2, preserve ? "true" : "false");
        inspect_runner(text, [&](const case_problem<double>& problem, const case_spec& spec) {
            const auto x = problem.input(spec.seed);
            EXPECT_EQ(shapes(x), (std::vector<shape_t>{{2, 3}, {0}, {0}, {0}}));
            const auto y = problem.forward(x);
            const shape_t giver = preserve ? shape_t{2, 0} : shape_t{0};
            EXPECT_EQ(shapes(y), (std::vector<shape_t>{giver, {2, 3}, {2, 3}, {0}}));
            EXPECT_EQ(y[1](1, 2), x[0](1, 2));
        });
    }
}

TEST(harness_meaning, halo_exchange_balanced_input_and_idle_outputs) {
    // P_x: workers 0..2 on 3; worker 3 outside. 8 elements: pieces 3, 3, 2.
    const char* doc = R"({"schema": 1, "name": "t", "layer": "HaloExchange", "world_size": 4,
        "partitions": {"P_x": {"workers": [0, 1, 2], "shape": [3]}},
        "options": {"kernel_size": 3, "padding": 1}, "x_shape": [8], "expect": "pass"})";
    inspect_runner(doc, [&](const case_problem<double>& problem, const case_spec& spec) {
        const auto x = problem.input(spec.seed);
        EXPECT_EQ(shapes(x), (std::vector<shape_t>{{3}, {3}, {2}, {0}}));
        // Output length 8, blocks 3, 3, 2: windows [0,5), [3,8), [6,10) of the padded tensor.
        EXPECT_EQ(shapes(problem.forward(x)), (std::vector<shape_t>{{5}, {5}, {4}, {0}}));
    });
}

}  // namespace
