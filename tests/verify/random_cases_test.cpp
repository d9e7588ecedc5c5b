// The random case generator (distdl-verify --random): deterministic, valid case documents
// within the world budget (some spoilt into refusals), and varied enough to reach what
// hand-written cases miss.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "verify/case_file.hpp"
#include "verify/random_cases.hpp"
#include "verify/registry.hpp"

namespace {

using namespace distdl::verify;

TEST(random_cases, the_same_seed_gives_the_same_cases_and_another_seed_others) {
    const auto a = random_case_documents(50, 11, 8), b = random_case_documents(50, 11, 8);
    EXPECT_EQ(a, b);
    const auto c = random_case_documents(50, 12, 8);
    std::size_t same = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        same += a[i].at("partitions") == c[i].at("partitions") && a[i].at("x_shape") == c[i].at("x_shape");
    EXPECT_LT(same, 5u);
    // Case i does not depend on how many come after it.
    const auto longer = random_case_documents(80, 11, 8);
    EXPECT_EQ(longer[49], a[49]);
}

TEST(random_cases, every_case_is_valid_within_the_world_and_some_expect_a_refusal) {
    for (const int world : {1, 3, 12}) {
        std::set<std::string> names;
        std::size_t refusals = 0;
        for (const auto& doc : random_case_documents(300, 5, world)) {
            const case_spec spec = parse_case(doc, "generated", builtin_registry());
            EXPECT_GE(spec.world_size, 1);
            EXPECT_LE(spec.world_size, world) << spec.name;
            EXPECT_EQ(!spec.expect_pass(), spec.name.ends_with("_refused")) << spec.name;
            refusals += !spec.expect_pass();
            EXPECT_TRUE(names.insert(spec.name).second) << "repeated name " << spec.name;
        }
        EXPECT_GT(refusals, 20u) << "world " << world;  // about one case in seven
        EXPECT_LT(refusals, 80u) << "world " << world;
    }
}

// A refusal found at the first forward reaches the layer's workers only: a case that learns its
// input shape and expects a refusal has no idle world rank.
TEST(random_cases, a_refusal_with_a_learnt_shape_has_no_idle_worker) {
    std::size_t learnt_refusals = 0;
    for (const auto& doc : random_case_documents(3000, 6, 12)) {
        if (doc["expect"] == "pass" || doc.value("input_shape", "given") != "learnt") continue;
        ++learnt_refusals;
        std::set<int> members;
        for (const auto& [name, p] : doc["partitions"].items())
            for (const int r : p["workers"]) members.insert(r);
        EXPECT_EQ(members.size(), doc["world_size"].get<std::size_t>()) << doc["name"];
    }
    EXPECT_GT(learnt_refusals, 0u);
}

TEST(random_cases, cover_every_layer_both_precisions_and_the_hard_geometries) {
    std::set<std::string> layers;
    std::set<std::string> types, shape_sources, refused_layers;
    bool padding_only_window = false, padding_beyond_stride = false, blocked_channels = false, empty_batch = false,
         transposed = false, scalar_option = false, default_stride = false;
    for (const auto& doc : random_case_documents(2000, 3, 12)) {
        layers.insert(doc["layer"].get<std::string>());
        types.insert(doc.value("dtype", "float64"));
        empty_batch |= doc["x_shape"][0] == 0;
        if (doc["expect"] != "pass") refused_layers.insert(doc["layer"].get<std::string>());
        if (!doc.contains("options")) continue;  // Broadcast, SumReduce, Repartition
        const auto& o = doc["options"];
        transposed |= o.value("transpose_src", false) && o.value("transpose_dest", false);
        if (o.contains("in_channels")) blocked_channels |= o["in_channels"] == 16 && o["out_channels"] == 16;
        if (!o.contains("kernel_size")) continue;  // Linear, AllSumReduce
        if (doc["layer"] != "HaloExchange") shape_sources.insert(doc.value("input_shape", "given"));
        // The compact forms: one number for every dimension, a default left out.
        scalar_option |= o["kernel_size"].is_number();
        default_stride |= !o.contains("stride");
        const case_spec spec = parse_case(doc, "generated", builtin_registry());
        const std::size_t dims = spec.x_shape.size() - (doc["layer"] == "HaloExchange" ? 0 : 2);
        const auto k = spec.per_dimension("kernel_size", dims, 1), p = spec.per_dimension("padding", dims, 0);
        const auto d = spec.per_dimension("dilation", dims, 1);
        const bool pool = doc["layer"].get<std::string>().find("Pool") != std::string::npos;
        const auto s = o.contains("stride") || !pool ? spec.per_dimension("stride", dims, 1) : k;
        for (std::size_t e = 0; e < dims; ++e) {
            padding_only_window |= p[e] >= d[e] * (k[e] - 1) + 1;
            padding_beyond_stride |= s[e] >= 2 && p[e] > s[e];
        }
    }
    EXPECT_EQ(layers.size(), 25u);  // five primitives, Linear, six layer families in 1-d, 2-d and 3-d, Sequential
    EXPECT_EQ(types.size(), 2u);
    EXPECT_EQ(shape_sources.size(), 2u);  // convolutions and poolings given the input shape, and learning it
    EXPECT_EQ(refused_layers.size(), 25u);
    EXPECT_TRUE(padding_only_window);
    EXPECT_TRUE(padding_beyond_stride);
    EXPECT_TRUE(blocked_channels);
    EXPECT_TRUE(empty_batch);
    EXPECT_TRUE(transposed);
    EXPECT_TRUE(scalar_option);
    EXPECT_TRUE(default_stride);
}

// Chains: every stage family in 1-3 dimensions, Linear and Flatten, stages that take the
// partition the stage before left its output on and stages after a Repartition; some spoilt,
// with a stage given other channels or a kernel that does not fit; some ending in a classifier's
// head (Flatten on a partition that splits the batch only, then Linear, ReLU between two), a few
// of those with the Repartition before Flatten missing; ReLUs after convolutions. (That each
// kernel of the others fits what the chain gives it, and that the spoilt ones are refused as
// expected, shows when they run: the verify_random tests.)
TEST(random_cases, chains_draw_every_stage_family_joined_directly_and_by_repartitions) {
    std::set<std::string> stage_layers;
    std::size_t chains = 0, linear_chains = 0, direct = 0, repartitions = 0, other_channels = 0, kernel_misfits = 0,
                heads = 0, missing_repartitions = 0, relus_after_convolutions = 0, shaped_stages = 0, learnt_stages = 0;
    for (const auto& doc : random_case_documents(4000, 4, 12)) {
        if (doc["layer"] != "Sequential") continue;
        ++chains;
        linear_chains += doc["stages"][0]["layer"] == "Linear";
        EXPECT_NO_THROW(parse_case(doc, "generated", builtin_registry())) << doc["name"];
        if (doc["expect"] != "pass") {
            const std::string text = doc["expect"]["error"];
            if (text.starts_with("Flatten: P_x")) ++missing_repartitions;
            else (text.starts_with("input_shape") ? other_channels : kernel_misfits) += 1;
        }
        std::string last_output, previous;
        for (const auto& stage : doc["stages"]) {
            const std::string layer = stage["layer"];
            relus_after_convolutions += layer == "ReLU" && previous.find("Conv") != std::string::npos;
            previous = layer;
            stage_layers.insert(layer);
            const auto& parts = stage["partitions"];
            if (layer == "Repartition") ++repartitions;
            else if (parts["P_x"] == last_output) ++direct;
            heads += layer == "Flatten";
            const bool shaped = layer.find("Conv") != std::string::npos || layer.find("Pool") != std::string::npos;
            shaped_stages += shaped;
            if (stage.contains("input_shape")) {
                EXPECT_TRUE(shaped) << doc["name"] << ": " << layer;
                EXPECT_EQ(stage["input_shape"], "learnt") << doc["name"];
                ++learnt_stages;
            }
            if (layer == "Flatten" && doc["expect"] == "pass") {  // a spoilt head's Flatten splits the image
                const auto& P_x = doc["partitions"][std::string(parts["P_x"])];
                const auto& P_y = doc["partitions"][std::string(parts["P_y"])];
                EXPECT_EQ(P_x["workers"], P_y["workers"]) << doc["name"];
                for (std::size_t d = 1; d < P_x["shape"].size(); ++d) EXPECT_EQ(P_x["shape"][d], 1u) << doc["name"];
            }
            last_output = parts.contains("P_y") ? parts["P_y"] : parts["P_x"];
        }
    }
    EXPECT_GT(chains, 230u);  // about one case in 13
    EXPECT_LT(chains, 390u);
    EXPECT_GT(linear_chains, 40u);  // one chain in 4
    EXPECT_LT(linear_chains, chains / 2);
    EXPECT_EQ(stage_layers.size(), 22u);  // six families in 1-d, 2-d and 3-d, Linear, Flatten, ReLU, Repartition
    EXPECT_GT(heads, 40u);                // one chain of convolutions and poolings in 3
    EXPECT_LT(heads, chains / 2);
    EXPECT_GT(direct, 100u);
    EXPECT_GT(repartitions, 100u);
    // One chain of convolutions and poolings in 6 spoilt, half of those at a convolution's channels.
    EXPECT_GT(other_channels, 5u);
    EXPECT_GT(kernel_misfits, 10u);
    // One head in 4 of the unspoilt chains given a partition that splits the image, where the
    // last stage's does.
    EXPECT_GT(missing_repartitions, 5u);
    EXPECT_GT(relus_after_convolutions, 100u);  // after half the convolutions
    // Half the convolutions and poolings learn their input shape (not a spoilt one).
    EXPECT_GT(learnt_stages, shaped_stages * 2 / 5);
    EXPECT_LT(learnt_stages, shaped_stages * 3 / 5);
}

}  // namespace
