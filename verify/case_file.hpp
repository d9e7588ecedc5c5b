#pragma once
// Case files (DESIGN §6, a contract other tools read): loading and validation. Every
// problem is reported as "<file>: <json path>: <what was expected, what was given>", and
// unknown keys are errors.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::verify {

class runner_registry;
struct layer_runner;

// A case file that cannot be used; what() is "<file>: <path>: <message>".
class case_error : public error {
  public:
    using error::error;
};

struct partition_spec {
    std::vector<int> workers;  // world ranks, in partition order
    shape_t shape;
};

enum class input_split { balanced, unbalanced };
// Whether the layer is told the global input shape at construction (and plans there) or
// learns it from the pieces at the first forward (convolutions and pooling).
enum class input_shape_source { given, learnt };

// Seed used when a case gives none.
constexpr std::uint64_t default_seed = 20240601;

struct case_spec {
    std::string file;
    std::string name;
    std::string description;
    std::string layer;
    int world_size = 0;
    std::map<std::string, partition_spec> partitions;
    nlohmann::json options = nlohmann::json::object();  // validated against the layer's runner
    shape_t x_shape;
    input_split split = input_split::balanced;
    input_shape_source shape_source = input_shape_source::given;
    dtype type = dtype::float64;
    std::optional<std::string> expected_error;  // set for {"error": "..."} cases
    std::uint64_t seed = default_seed;
    // Sequential: its stages in order, each a case of its own layer with this case's world, dtype,
    // seed and file, its partitions this case's under the stage's own names. A stage's x_shape
    // is set when the chain is built: the case's for the first, the output of the one before for
    // the others.
    std::vector<case_spec> stages;
    // A stage's partition names -> the names they have in the case.
    std::map<std::string, std::string> partition_sources;
    // A stage's runner, from the registry that loaded the case (which outlives it).
    const layer_runner* stage_runner = nullptr;
    // What the case was parsed from, and by which registry: to parse it again in another
    // process (the simulator transport's worker, a fork of this one).
    nlohmann::json source;
    const runner_registry* registry = nullptr;

    bool expect_pass() const { return !expected_error.has_value(); }
    const partition_spec& partition(const std::string& name) const;

    // Typed access to validated options (the fallback when the option is absent).
    bool flag(const std::string& option, bool fallback) const;
    std::size_t count(const std::string& option, std::size_t fallback) const;
    std::vector<std::size_t> list(const std::string& option) const;
    // A per-dimension option expanded to `dims` entries (a scalar applies to all).
    std::vector<std::size_t> per_dimension(const std::string& option, std::size_t dims, std::size_t fallback) const;
};

// Validates a parsed document; `file` names it in messages. Throws case_error.
case_spec parse_case(const nlohmann::json& document, const std::string& file, const runner_registry& registry);
// Reads, parses and validates one file. Throws case_error.
case_spec load_case(const std::string& path, const runner_registry& registry);

// The *.json files named by `paths` (files as given, folders searched recursively), sorted
// and without duplicates. Throws distdl::invalid_argument for a path that does not exist.
std::vector<std::string> find_case_files(const std::vector<std::string>& paths);

}  // namespace distdl::verify
