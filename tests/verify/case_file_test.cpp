// The case loader: every broken file is refused with its file name, the JSON path and what
// was wrong; every file of the case library loads.
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "verify/case_file.hpp"
#include "verify/registry.hpp"

namespace {

namespace fs = std::filesystem;
using namespace distdl::verify;

const fs::path source_root = fs::path(__FILE__).parent_path().parent_path().parent_path();
const fs::path broken_dir = source_root / "tests" / "verify_data" / "broken";

// file -> text its error message must contain after "<file>: ".
const std::map<std::string, std::string> expected_errors = {
    {"not_json", "invalid JSON: "},
    {"not_an_object", "expected a JSON object, got a list of 3"},
    {"unknown_top_key", "colour: unknown key (the case format has: schema, name,"},
    {"missing_layer", "layer: missing (required)"},
    {"schema_2", "schema: expected 1, got the integer 2"},
    {"unknown_layer", "layer: unknown layer \"Conv9d\" (this build verifies: AllSumReduce, "},
    {"world_size_zero", "world_size: expected an integer in [1, 4096], got the integer 0"},
    {"name_empty", "name: expected a non-empty string, got the string \"\""},
    {"name_control", "name: expected no control characters (line breaks, tabs), got the string \"broken/two\\nlines\""},
    {"worker_outside_world", "partitions.P_x.workers[2]: rank 4 outside the world of 4 ranks"},
    {"worker_repeated", "partitions.P_y.workers[1]: rank 0 listed twice"},
    {"range_three_numbers", "partitions.P_y.workers.range: expected 2 integers, got 3"},
    {"range_reversed", "partitions.P_y.workers.range: expected a < b (ranks a..b-1), got [3, 1]"},
    {"shape_worker_count", "partitions.P_y.shape: [2,2] holds 4 workers, but \"workers\" lists 3"},
    {"shape_overflow", "partitions.P_x.shape[0]: expected a positive integer at most 4096, got the integer 9223372036854775809"},
    {"partition_missing", "partitions: missing P_y (Broadcast needs P_x, P_y)"},
    {"partition_unknown", "partitions.P_w: unknown key (Broadcast takes: P_x, P_y)"},
    {"partition_case_differs",
     "partitions.P_W: unknown key (Linear takes: P_x, P_y, P_w); keys are case-sensitive: did you mean P_w?"},
    {"partition_key_unknown", "partitions.P_x.ranks: unknown key (a partition has: workers, shape)"},
    {"option_unknown", "options.stride: unknown key (Broadcast takes: transpose_src, transpose_dest, preserve_batch)"},
    {"option_wrong_type", "options.transpose_src: expected true or false, got the string \"yes\""},
    {"stride_wrong_count", "options.stride: expected 2 integers, got 3"},
    {"padding_negative", "options.padding[1]: expected a non-negative integer at most 4194304, got the integer -1"},
    {"kernel_size_missing", "options.kernel_size: missing (required by HaloExchange)"},
    {"axes_not_a_list", "options.axes_reduce: expected a list of integers, got the integer 1"},
    {"input_split_not_accepted", "input_split: not accepted by Broadcast"},
    {"input_split_bad_value", "input_split: expected \"balanced\" or \"unbalanced\", got the string \"random\""},
    {"dtype_float16", "dtype: expected \"float64\" or \"float32\", got the string \"float16\""},
    {"expect_unknown", "expect: expected \"pass\" or {\"error\": \"text\"}, got the string \"fail\""},
    {"expect_empty_error", "expect.error: expected a non-empty string, got the string \"\""},
    {"expect_short_error", "expect.error: expected a text of at least 4 characters besides spaces at its ends (what the "
                           "refusal must say), got the string \" e \""},
    {"seed_negative", "seed: expected a non-negative integer, got the integer -1"},
    {"x_shape_negative", "x_shape[1]: expected a non-negative integer at most 4194304, got the integer -3"},
    {"x_shape_too_big", "x_shape: [4096,4096,2] has more than 4194304 elements, the limit for cases"},
    {"x_shape_overflow", "x_shape[0]: expected a non-negative integer at most 4194304, got the integer 4294967296"},
    {"x_shape_empty", "x_shape: expected a non-empty list of integers, got a list of 0"},
    {"duplicate_key", "options.transpose_src: duplicate key"},
    // Numbers the loader cannot take (issue 11.3): each names the JSON path.
    {"kernel_size_1e400", "options.kernel_size: cannot read this value: [json.exception.out_of_range.406] number overflow parsing '1e400'"},
    {"schema_1e400", "schema: cannot read this value: [json.exception.out_of_range.406] number overflow"},
    {"x_shape_1e400", "x_shape[1]: cannot read this value: [json.exception.out_of_range.406] number overflow"},
    {"seed_1e400", "seed: cannot read this value: "},
    {"axes_1e400", "options.axes_reduce[0]: cannot read this value: "},
    {"range_1e400", "partitions.P_x.workers.range[1]: cannot read this value: "},
    {"kernel_size_fraction", "options.kernel_size: expected an integer or a list of 2 integers, got the number 1.5"},
    {"kernel_size_2_pow_70", "options.kernel_size: expected an integer or a list of 2 integers, got the number 1.1805916207174113e+21 (beyond 64-bit integers)"},
    {"kernel_size_string", "options.kernel_size: expected an integer or a list of 2 integers, got the string \"3\""},
    {"kernel_size_too_big", "options.kernel_size[1]: expected a non-negative integer at most 4194304, got the integer 4194305"},
    {"dilation_2_pow_64_minus_1", "options.dilation: expected a non-negative integer at most 4194304, got the integer 18446744073709551615"},
    {"padding_2_pow_63", "options.padding: expected a non-negative integer at most 4194304, got the integer 9223372036854775808"},
    {"padding_2_pow_62", "options.padding[1]: expected a non-negative integer at most 4194304, got the integer 4611686018427387904"},
    {"stride_negative", "options.stride[0]: expected a non-negative integer at most 4194304, got the integer -2"},
    {"axes_fraction", "options.axes_reduce[0]: expected a non-negative integer at most 4194304, got the number 0.5"},
    {"axes_too_big", "options.axes_reduce[0]: expected a non-negative integer at most 4194304, got the integer 4194305"},
    {"axes_negative", "options.axes_reduce[0]: expected a non-negative integer at most 4194304, got the integer -1"},
    {"world_size_fraction", "world_size: expected an integer in [1, 4096], got the number 2.5"},
    {"world_size_too_big", "world_size: expected an integer in [1, 4096], got the integer 4097"},
    {"world_size_2_pow_70", "world_size: expected an integer in [1, 4096], got the number 1.1805916207174113e+21 (beyond 64-bit integers)"},
    {"world_size_string", "world_size: expected an integer in [1, 4096], got the string \"2\""},
    {"seed_fraction", "seed: expected a non-negative integer, got the number 1.5"},
    {"seed_2_pow_70", "seed: expected a non-negative integer, got the number 1.1805916207174113e+21 (beyond 64-bit integers)"},
    {"worker_fraction", "partitions.P_x.workers[1]: expected a non-negative integer, got the number 1.5"},
    {"worker_negative", "partitions.P_x.workers[0]: expected a non-negative integer, got the integer -1"},
    {"range_negative", "partitions.P_x.workers.range[0]: expected a non-negative integer, got the integer -1"},
    {"range_missing", "partitions.P_x.workers.range: missing (required)"},
    {"workers_empty", "partitions.P_x.workers: expected a non-empty list of ranks or {\"range\": [a, b]}, got a list of 0"},
    {"partition_shape_zero", "partitions.P_x.shape[0]: expected a positive integer at most 4096, got the integer 0"},
    {"partition_shape_fraction", "partitions.P_x.shape[1]: expected a positive integer at most 4096, got the number 2.0"},
    {"x_shape_huge_beside_zero", "x_shape[1]: expected a non-negative integer at most 4194304, got the integer 18446744073709551615"},
    {"x_shape_fraction", "x_shape[1]: expected a non-negative integer at most 4194304, got the number 6.5"},
    // Wrong types and structure.
    {"schema_string", "schema: expected 1, got the string \"1\""},
    {"name_number", "name: expected a non-empty string, got the integer 5"},
    {"description_number", "description: expected a string, got the integer 7"},
    {"options_not_object", "options: expected an object, got a list of 0"},
    {"partition_not_object", "partitions.P_x: expected an object with \"workers\" and \"shape\", got a list of 2"},
    {"partitions_not_object", "partitions: expected an object, got the string \"P_x\""},
    {"expect_missing", "expect: missing (required)"},
    {"trailing_garbage", "invalid JSON: [json.exception.parse_error.101] parse error at line 1"},
    {"duplicate_key_nested", "partitions.P_x.workers: duplicate key"},
    {"dtype_number", "dtype: expected \"float64\" or \"float32\", got the integer 64"},
    {"input_split_on_halo", "input_split: not accepted by HaloExchange"},
    {"input_shape_not_accepted", "input_shape: not accepted by Linear"},
    {"input_shape_bad_value", "input_shape: expected \"given\" or \"learnt\", got a list of 3"},
    {"transpose_as_number", "options.transpose_src: expected true or false, got the integer 1"},
    // Sequential cases and their stages.
    {"stages_missing", "stages: missing (required by Sequential)"},
    {"stages_not_accepted", "stages: not accepted by AllSumReduce"},
    {"stages_empty", "stages: expected a non-empty list of stages, got a list of 0"},
    {"stage_not_chainable", "stages[1].layer: \"HaloExchange\" cannot be a stage (stages may be: AvgPool1d, "},
    {"stage_partition_unknown",
     "stages[1].partitions.P_y: expected the name of one of the case's partitions (P_a, P_b), got the string \"P_q\""},
    {"stage_partition_missing", "stages[0].partitions: missing P_y (Repartition needs P_x, P_y)"},
    {"stage_option_unknown", "stages[0].options.colour: unknown key (MaxPool1d takes: kernel_size, stride, padding, "},
    {"stage_key_unknown", "stages[0].dtype: unknown key (a stage has: layer, partitions, options, input_shape)"},
    {"stage_input_shape_not_accepted", "stages[0].input_shape: not accepted by ReLU"},
    {"stage_input_shape_bad_value",
     "stages[0].input_shape: expected \"given\" or \"learnt\", got the string \"guessed\""},
    {"stage_kernel_wrong_count", "stages[0].options.kernel_size: expected 1 integer, got 2"},
    {"partition_unused", "partitions.P_z: used by no stage"},
};

std::string load_error(const fs::path& file) {
    try {
        load_case(file.string(), builtin_registry());
    } catch (const case_error& e) {
        return e.what();
    }
    return "";
}

TEST(case_file, every_broken_file_names_file_path_and_problem) {
    ASSERT_TRUE(fs::is_directory(broken_dir)) << broken_dir;
    int seen = 0;
    for (const auto& entry : fs::directory_iterator(broken_dir)) {
        const std::string stem = entry.path().stem().string();
        auto it = expected_errors.find(stem);
        ASSERT_NE(it, expected_errors.end()) << "no expected message for " << entry.path() << " (add one)";
        const std::string message = load_error(entry.path());
        EXPECT_EQ(message.rfind(entry.path().string() + ": ", 0), 0u) << stem << ": " << message;
        EXPECT_NE(message.find(entry.path().string() + ": " + it->second), std::string::npos)
            << stem << ":\n  got      " << message << "\n  expected " << it->second;
        ++seen;
    }
    EXPECT_EQ(seen, static_cast<int>(expected_errors.size())) << "an expected file is missing from " << broken_dir;
    EXPECT_GE(seen, 60) << "the bad-input catalogue has shrunk";
}

TEST(case_file, library_loads_and_has_enough_cases) {
    const auto files = find_case_files({(source_root / "cases").string()});
    EXPECT_GE(files.size(), 150u);
    std::map<std::string, int> refusals;
    for (const auto& file : files) {
        try {
            const auto spec = load_case(file, builtin_registry());
            EXPECT_FALSE(spec.description.empty()) << file;
            if (!spec.expect_pass()) ++refusals[spec.layer];
        } catch (const std::exception& e) {
            ADD_FAILURE() << e.what();
        }
    }
    int total = 0;
    for (const auto& [layer, n] : refusals) total += n;
    EXPECT_GE(total, 20);
}

TEST(case_file, parses_every_field) {
    const auto doc = nlohmann::json::parse(R"({
      "schema": 1, "name": "t/all", "description": "d", "layer": "Repartition", "world_size": 6,
      "partitions": {"P_x": {"workers": {"range": [0, 4]}, "shape": [2, 2]},
                     "P_y": {"workers": [5, 4], "shape": [1, 2]}},
      "options": {"preserve_batch": false}, "x_shape": [3, 0], "input_split": "unbalanced",
      "dtype": "float32", "expect": {"error": "boom"}, "seed": 42})");
    const auto spec = parse_case(doc, "inline.json", builtin_registry());
    EXPECT_EQ(spec.file, "inline.json");
    EXPECT_EQ(spec.name, "t/all");
    EXPECT_EQ(spec.world_size, 6);
    EXPECT_EQ(spec.partition("P_x").workers, (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(spec.partition("P_y").workers, (std::vector<int>{5, 4}));
    EXPECT_EQ(spec.partition("P_y").shape, (distdl::shape_t{1, 2}));
    EXPECT_FALSE(spec.flag("preserve_batch", true));
    EXPECT_EQ(spec.x_shape, (distdl::shape_t{3, 0}));
    EXPECT_EQ(spec.split, input_split::unbalanced);
    EXPECT_EQ(spec.type, distdl::dtype::float32);
    EXPECT_EQ(spec.expected_error.value_or(""), "boom");
    EXPECT_EQ(spec.seed, 42u);
}

TEST(case_file, input_shape_learnt) {
    const auto doc = nlohmann::json::parse(R"({
      "schema": 1, "name": "t/learnt", "layer": "AvgPool2d", "world_size": 1,
      "partitions": {"P_x": {"workers": [0], "shape": [1, 1, 1, 1]}},
      "options": {"kernel_size": 2}, "x_shape": [1, 1, 4, 4], "input_shape": "learnt", "expect": "pass"})");
    EXPECT_EQ(parse_case(doc, "inline.json", builtin_registry()).shape_source, input_shape_source::learnt);
}

TEST(case_file, defaults) {
    const auto doc = nlohmann::json::parse(R"({
      "schema": 1, "name": "t/defaults", "layer": "HaloExchange", "world_size": 1,
      "partitions": {"P_x": {"workers": [0], "shape": [1, 1]}},
      "options": {"kernel_size": [3, 1], "padding": 1}, "x_shape": [4, 4], "expect": "pass"})");
    const auto spec = parse_case(doc, "inline.json", builtin_registry());
    EXPECT_TRUE(spec.expect_pass());
    EXPECT_EQ(spec.type, distdl::dtype::float64);
    EXPECT_EQ(spec.split, input_split::balanced);
    EXPECT_EQ(spec.shape_source, input_shape_source::given);
    EXPECT_EQ(spec.seed, default_seed);
    EXPECT_EQ(spec.per_dimension("kernel_size", 2, 1), (std::vector<std::size_t>{3, 1}));
    EXPECT_EQ(spec.per_dimension("padding", 2, 0), (std::vector<std::size_t>{1, 1}));
    EXPECT_EQ(spec.per_dimension("stride", 2, 1), (std::vector<std::size_t>{1, 1}));
}

TEST(case_file, find_case_files_is_recursive_sorted_and_unique) {
    const fs::path dir = fs::temp_directory_path() / ("distdl_verify_find_" + std::to_string(::getpid()));
    fs::create_directories(dir / "b" / "deep");
    fs::create_directories(dir / "a");
    for (const auto& p : {dir / "b" / "deep" / "z.json", dir / "a" / "y.json", dir / "b" / "x.json",
                          dir / "a" / "note.txt", dir / "a" / "w.JSON"})
        std::ofstream(p) << "{}";
    const auto files = find_case_files({(dir / "b").string(), dir.string(), (dir / "a" / "y.json").string()});
    // The extension in any case (a file saved as W.JSON on another system).
    const std::vector<std::string> want = {(dir / "a" / "w.JSON").string(), (dir / "a" / "y.json").string(),
                                           (dir / "b" / "deep" / "z.json").string(), (dir / "b" / "x.json").string()};
    EXPECT_EQ(files, want);
    EXPECT_THROW(find_case_files({(dir / "missing").string()}), distdl::invalid_argument);
    // One file named twice, in two spellings, runs once (not as a duplicate case of itself).
    const fs::path other_spelling = dir / "b" / ".." / "a" / "y.json";
    EXPECT_EQ(find_case_files({(dir / "a" / "y.json").string(), other_spelling.string()}),
              std::vector<std::string>{(dir / "a" / "y.json").string()});
    // Neither a file nor a folder; a *.json in a folder that is not a file (a dangling link).
    const auto error_of = [](const std::string& path) -> std::string {
        try {
            find_case_files({path});
        } catch (const distdl::invalid_argument& e) {
            return e.what();
        }
        return "no error";
    };
    EXPECT_EQ(error_of("/dev/null"), "/dev/null: neither a file nor a folder (a pipe or a device); give case files or "
                                     "folders of them");
    fs::create_symlink(dir / "gone.json", dir / "b" / "dangling.json");
    EXPECT_EQ(error_of((dir / "b").string()), (dir / "b" / "dangling.json").string() +
                                                  ": not a regular file (a dangling link, a pipe or a device); a case "
                                                  "file must be one");
    fs::remove_all(dir);
}

}  // namespace
