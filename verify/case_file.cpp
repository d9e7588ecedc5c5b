#include "verify/case_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "verify/registry.hpp"

namespace distdl::verify {

namespace {

using json = nlohmann::json;

constexpr int max_world_size = 4096;
constexpr std::size_t max_x_volume = std::size_t{1} << 22;
// Largest value of a count, an index or a per-dimension option (kernel size, stride, padding,
// dilation): far beyond any case, and small enough that no derived size can overflow.
constexpr std::size_t max_option_value = std::size_t{1} << 22;

// Product of the extents, or limit + 1 as soon as it exceeds limit (so it never wraps around).
std::size_t bounded_volume(const shape_t& shape, std::size_t limit) {
    for (auto e : shape)
        if (e == 0) return 0;
    std::size_t v = 1;
    for (auto e : shape) {
        if (v > limit / e) return limit + 1;
        v *= e;
    }
    return v;
}

std::string join(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
    return out.empty() ? "none" : out;
}

// "a string", "an array of 3", ... for "got ..." in messages.
std::string describe(const json& value) {
    switch (value.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return value.get<bool>() ? "true" : "false";
        case json::value_t::number_integer:
        case json::value_t::number_unsigned: return "the integer " + value.dump();
        case json::value_t::number_float: {
            // Integers beyond 64 bits arrive as floating-point numbers.
            const double v = value.get<double>();
            const bool huge_integer = std::abs(v) >= 18446744073709551616.0 && std::floor(v) == v;
            return "the number " + value.dump() + (huge_integer ? " (beyond 64-bit integers)" : "");
        }
        case json::value_t::string: return "the string " + value.dump();
        case json::value_t::array: return "a list of " + std::to_string(value.size());
        case json::value_t::object: return "an object";
        default: return "a value of an unsupported type";
    }
}

// "1 integer", "3 integers".
std::string integers(std::size_t n) { return std::to_string(n) + (n == 1 ? " integer" : " integers"); }

bool is_integer(const json& v) { return v.is_number_integer() || v.is_number_unsigned(); }
bool is_non_negative_integer(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0); }

// Walks one document, remembering the file for every message.
class validator {
  public:
    validator(std::string file, const runner_registry& registry) : file_(std::move(file)), registry_(registry) {}

    case_spec run(const json& doc) {
        if (!doc.is_object()) fail("", "expected a JSON object, got " + describe(doc));
        spec_.file = file_;
        check_keys(doc, "", {"schema", "name", "description", "layer", "world_size", "partitions", "options",
                             "x_shape", "input_split", "input_shape", "dtype", "expect", "seed", "stages"},
                   "the case format has");
        for (const char* key : {"schema", "name", "layer", "world_size", "partitions", "x_shape", "expect"})
            if (!doc.contains(key)) fail(key, "missing (required)");

        const json& schema = doc.at("schema");
        if (!is_integer(schema) || schema.get<std::int64_t>() != 1) fail("schema", "expected 1, got " + describe(schema));

        spec_.name = non_empty_string(doc.at("name"), "name");
        // It starts a console line, a JUnit test and a report row: a line break would forge one.
        if (std::any_of(spec_.name.begin(), spec_.name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
            fail("name", "expected no control characters (line breaks, tabs), got " + describe(doc.at("name")));
        if (doc.contains("description")) {
            if (!doc.at("description").is_string()) fail("description", "expected a string, got " + describe(doc.at("description")));
            spec_.description = doc.at("description").get<std::string>();
        }

        spec_.layer = non_empty_string(doc.at("layer"), "layer");
        runner_ = registry_.find(spec_.layer);
        if (!runner_) fail("layer", "unknown layer \"" + spec_.layer + "\" (this build verifies: " + join(registry_.layers()) + ")");

        const json& ws = doc.at("world_size");
        if (!is_integer(ws) || ws.get<std::int64_t>() < 1 || ws.get<std::int64_t>() > max_world_size)
            fail("world_size", "expected an integer in [1, " + std::to_string(max_world_size) + "], got " + describe(ws));
        spec_.world_size = ws.get<int>();

        spec_.x_shape = shape(doc.at("x_shape"), "x_shape", 0, max_x_volume);
        // Every worker builds every piece: keep a typo from exhausting memory.
        if (bounded_volume(spec_.x_shape, max_x_volume) > max_x_volume)
            fail("x_shape", format_list(spec_.x_shape) + " has more than " + std::to_string(max_x_volume) +
                                " elements, the limit for cases");
        partitions(doc.at("partitions"));
        spec_.options = options(doc.contains("options") ? doc.at("options") : json::object(), "options", *runner_);

        if (second_choice(doc, "input_split", runner_->accepts_input_split, "balanced", "unbalanced"))
            spec_.split = input_split::unbalanced;
        if (second_choice(doc, "input_shape", runner_->accepts_input_shape, "given", "learnt"))
            spec_.shape_source = input_shape_source::learnt;
        if (second_choice(doc, "dtype", true, "float64", "float32")) spec_.type = dtype::float32;
        expect(doc.at("expect"));
        if (doc.contains("seed")) {
            const json& seed = doc.at("seed");
            if (!is_non_negative_integer(seed)) fail("seed", "expected a non-negative integer, got " + describe(seed));
            spec_.seed = seed.get<std::uint64_t>();
        }
        if (runner_->takes_stages) {
            if (!doc.contains("stages")) fail("stages", "missing (required by " + spec_.layer + ")");
            stages(doc.at("stages"));
        } else if (doc.contains("stages")) {
            fail("stages", "not accepted by " + spec_.layer);
        }
        return spec_;
    }

  private:
    [[noreturn]] void fail(const std::string& path, const std::string& message) const {
        throw case_error(file_ + ": " + (path.empty() ? "" : path + ": ") + message);
    }

    static std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
    static std::string item(const std::string& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

    void check_keys(const json& object, const std::string& path, const std::vector<std::string>& allowed,
                    const std::string& lead) const {
        for (const auto& entry : object.items())
            if (std::find(allowed.begin(), allowed.end(), entry.key()) == allowed.end())
                fail(child(path, entry.key()),
                     "unknown key (" + lead + ": " + join(allowed) + ")" + other_case_hint(entry.key(), allowed));
    }

    // Keys are case-sensitive; the spec writes Linear's weight partition P_W, case files P_w.
    static std::string other_case_hint(const std::string& key, const std::vector<std::string>& allowed) {
        const auto lower = [](std::string s) {
            for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            return s;
        };
        for (const std::string& a : allowed)
            if (lower(a) == lower(key)) return "; keys are case-sensitive: did you mean " + a + "?";
        return {};
    }

    // An optional key of two strings (absent: the first), which only some layers may accept:
    // whether it gives the second. `object` is the case or a stage at `path`, of layer `layer`.
    bool second_choice(const json& object, const std::string& path, const std::string& layer, const char* key,
                       bool accepted, const char* first, const char* second) const {
        if (!object.contains(key)) return false;
        const json& value = object.at(key);
        const std::string at = child(path, key);
        if (!accepted) fail(at, "not accepted by " + layer);
        if (value != first && value != second)
            fail(at, std::string("expected \"") + first + "\" or \"" + second + "\", got " + describe(value));
        return value == second;
    }
    bool second_choice(const json& doc, const char* key, bool accepted, const char* first, const char* second) const {
        return second_choice(doc, "", spec_.layer, key, accepted, first, second);
    }

    static constexpr std::size_t min_refusal_text = 4;

    std::string non_empty_string(const json& value, const std::string& path) const {
        if (!value.is_string() || value.get<std::string>().empty())
            fail(path, "expected a non-empty string, got " + describe(value));
        return value.get<std::string>();
    }

    std::size_t non_negative(const json& value, const std::string& path, std::size_t minimum,
                             std::size_t maximum = std::numeric_limits<std::size_t>::max()) const {
        const bool unbounded = maximum == std::numeric_limits<std::size_t>::max();
        if (!is_non_negative_integer(value) || value.get<std::uint64_t>() < minimum ||
            value.get<std::uint64_t>() > maximum)
            fail(path, std::string("expected ") + (minimum > 0 ? "a positive" : "a non-negative") + " integer" +
                           (unbounded ? "" : " at most " + std::to_string(maximum)) + ", got " + describe(value));
        return value.get<std::size_t>();
    }

    std::size_t option_value(const json& value, const std::string& path) const {
        return non_negative(value, path, 0, max_option_value);
    }

    shape_t shape(const json& value, const std::string& path, std::size_t minimum, std::size_t maximum) const {
        if (!value.is_array() || value.empty())
            fail(path, "expected a non-empty list of integers, got " + describe(value));
        shape_t out;
        // No extent can exceed the case limits on volumes and worlds (even beside a zero).
        for (std::size_t i = 0; i < value.size(); ++i)
            out.push_back(non_negative(value[i], item(path, i), minimum, maximum));
        return out;
    }

    void partitions(const json& value) {
        const std::string path = "partitions";
        if (!value.is_object()) fail(path, "expected an object, got " + describe(value));
        if (!runner_->takes_stages) takes_partitions(value, path, *runner_);
        for (const auto& entry : value.items()) spec_.partitions[entry.key()] = partition(entry.value(), child(path, entry.key()));
    }

    partition_spec partition(const json& value, const std::string& path) const {
        if (!value.is_object()) fail(path, "expected an object with \"workers\" and \"shape\", got " + describe(value));
        check_keys(value, path, {"workers", "shape"}, "a partition has");
        for (const char* key : {"workers", "shape"})
            if (!value.contains(key)) fail(child(path, key), "missing (required)");
        partition_spec out;
        out.workers = workers(value.at("workers"), child(path, "workers"));
        out.shape = shape(value.at("shape"), child(path, "shape"), 1, static_cast<std::size_t>(max_world_size));
        const auto world_limit = static_cast<std::size_t>(max_world_size);
        const std::size_t holds = bounded_volume(out.shape, world_limit);
        if (holds != out.workers.size())
            fail(child(path, "shape"), format_list(out.shape) + " holds " +
                                           (holds > world_limit ? "more than " + std::to_string(world_limit)
                                                                : std::to_string(holds)) +
                                           " workers, but \"workers\" lists " + std::to_string(out.workers.size()));
        return out;
    }

    std::vector<int> workers(const json& value, const std::string& path) const {
        const auto ws = static_cast<std::size_t>(spec_.world_size);
        std::vector<int> out;
        if (value.is_object()) {
            check_keys(value, path, {"range"}, "a worker range has");
            if (!value.contains("range")) fail(child(path, "range"), "missing (required)");
            const json& range = value.at("range");
            const std::string rpath = child(path, "range");
            if (!range.is_array() || range.size() != 2)
                fail(rpath, "expected 2 integers, got " + (range.is_array() ? std::to_string(range.size()) : describe(range)));
            const std::size_t a = non_negative(range[0], item(rpath, 0), 0);
            const std::size_t b = non_negative(range[1], item(rpath, 1), 0);
            if (a >= b) fail(rpath, "expected a < b (ranks a..b-1), got [" + std::to_string(a) + ", " + std::to_string(b) + "]");
            if (b > ws)
                fail(rpath, "range [" + std::to_string(a) + ", " + std::to_string(b) + ") leaves the world of " +
                                std::to_string(ws) + " ranks");
            for (std::size_t r = a; r < b; ++r) out.push_back(static_cast<int>(r));
            return out;
        }
        if (!value.is_array() || value.empty())
            fail(path, "expected a non-empty list of ranks or {\"range\": [a, b]}, got " + describe(value));
        std::set<std::size_t> seen;
        for (std::size_t i = 0; i < value.size(); ++i) {
            const std::size_t r = non_negative(value[i], item(path, i), 0);
            if (r >= ws)
                fail(item(path, i), "rank " + std::to_string(r) + " outside the world of " + std::to_string(ws) + " ranks");
            if (!seen.insert(r).second) fail(item(path, i), "rank " + std::to_string(r) + " listed twice");
            out.push_back(static_cast<int>(r));
        }
        return out;
    }

    // The partition names of `runner`'s layer: every required one and no others.
    void takes_partitions(const json& value, const std::string& path, const layer_runner& runner) const {
        std::vector<std::string> allowed = runner.partitions;
        allowed.insert(allowed.end(), runner.optional_partitions.begin(), runner.optional_partitions.end());
        check_keys(value, path, allowed, runner.layer + " takes");
        for (const auto& name : runner.partitions)
            if (!value.contains(name))
                fail(path, "missing " + name + " (" + runner.layer + " needs " + join(runner.partitions) + ")");
    }

    // The validated options of `runner`'s layer.
    json options(const json& value, const std::string& path, const layer_runner& runner) const {
        if (!value.is_object()) fail(path, "expected an object, got " + describe(value));
        std::vector<std::string> names;
        for (const auto& option : runner.options) names.push_back(option.name);
        check_keys(value, path, names, runner.layer + " takes");
        for (const auto& option : runner.options) {
            const std::string opath = child(path, option.name);
            if (!value.contains(option.name)) {
                if (option.required) fail(opath, "missing (required by " + runner.layer + ")");
                continue;
            }
            const json& v = value.at(option.name);
            switch (option.kind) {
                case option_kind::boolean:
                    if (!v.is_boolean()) fail(opath, "expected true or false, got " + describe(v));
                    break;
                case option_kind::count: option_value(v, opath); break;
                case option_kind::index_list:
                    if (!v.is_array()) fail(opath, "expected a list of integers, got " + describe(v));
                    for (std::size_t i = 0; i < v.size(); ++i) option_value(v[i], item(opath, i));
                    break;
                case option_kind::per_dimension: per_dimension(v, opath, runner.leading_dims); break;
            }
        }
        return value;
    }

    // Every stage has x_shape's rank: the chainable layers keep it.
    void per_dimension(const json& v, const std::string& path, std::size_t leading_dims) const {
        const std::size_t rank = spec_.x_shape.size();
        const std::size_t dims = rank > leading_dims ? rank - leading_dims : 0;
        if (is_integer(v)) {
            option_value(v, path);
            return;
        }
        if (!v.is_array())
            fail(path, "expected an integer or a list of " + integers(dims) + ", got " + describe(v));
        if (v.size() != dims)
            fail(path, "expected " + integers(dims) + ", got " + std::to_string(v.size()));
        for (std::size_t i = 0; i < v.size(); ++i) option_value(v[i], item(path, i));
    }

    void stages(const json& value) {
        if (!value.is_array() || value.empty())
            fail("stages", "expected a non-empty list of stages, got " + describe(value));
        std::set<std::string> used;
        for (std::size_t i = 0; i < value.size(); ++i) spec_.stages.push_back(stage(value[i], i, used));
        for (const auto& entry : spec_.partitions)
            if (!used.count(entry.first)) fail(child("partitions", entry.first), "used by no stage");
    }

    // Stage i: a case of its own layer on this case's partitions (`used` collects their names).
    case_spec stage(const json& value, std::size_t i, std::set<std::string>& used) const {
        const std::string path = item("stages", i);
        if (!value.is_object())
            fail(path, "expected an object with \"layer\", \"partitions\" and \"options\", got " + describe(value));
        check_keys(value, path, {"layer", "partitions", "options", "input_shape"}, "a stage has");
        for (const char* key : {"layer", "partitions"})
            if (!value.contains(key)) fail(child(path, key), "missing (required)");
        case_spec s;
        s.file = file_;
        s.name = spec_.name + " stage " + std::to_string(i);
        s.layer = non_empty_string(value.at("layer"), child(path, "layer"));
        const layer_runner* runner = registry_.find(s.layer);
        if (!runner || !runner->chainable) {
            std::vector<std::string> chainable;
            for (const auto& name : registry_.layers())
                if (registry_.find(name)->chainable) chainable.push_back(name);
            fail(child(path, "layer"),
                 "\"" + s.layer + "\" cannot be a stage (stages may be: " + join(chainable) + ")");
        }
        s.stage_runner = runner;
        s.world_size = spec_.world_size;
        s.type = spec_.type;
        s.seed = spec_.seed;

        const std::string ppath = child(path, "partitions");
        const json& parts = value.at("partitions");
        if (!parts.is_object()) fail(ppath, "expected an object, got " + describe(parts));
        takes_partitions(parts, ppath, *runner);
        for (const auto& entry : parts.items()) {
            if (!entry.value().is_string() || !spec_.partitions.count(entry.value().get<std::string>())) {
                std::vector<std::string> names;
                for (const auto& named : spec_.partitions) names.push_back(named.first);
                fail(child(ppath, entry.key()), "expected the name of one of the case's partitions (" + join(names) +
                                                    "), got " + describe(entry.value()));
            }
            const std::string source = entry.value().get<std::string>();
            s.partitions[entry.key()] = spec_.partitions.at(source);
            s.partition_sources[entry.key()] = source;
            used.insert(source);
        }
        s.options = options(value.contains("options") ? value.at("options") : json::object(), child(path, "options"),
                            *runner);
        if (second_choice(value, path, s.layer, "input_shape", runner->accepts_input_shape, "given", "learnt"))
            s.shape_source = input_shape_source::learnt;
        return s;
    }

    void expect(const json& value) {
        if (value == "pass") return;
        if (value.is_object()) {
            check_keys(value, "expect", {"error"}, "expect has");
            if (!value.contains("error")) fail("expect.error", "missing (required)");
            spec_.expected_error = non_empty_string(value.at("error"), "expect.error");
            // Nearly any error contains a space or a letter: such a text proves nothing about the refusal.
            const auto first = spec_.expected_error->find_first_not_of(" \t\n");
            const auto last = spec_.expected_error->find_last_not_of(" \t\n");
            if (first == std::string::npos || last - first + 1 < min_refusal_text)
                fail("expect.error", "expected a text of at least " + std::to_string(min_refusal_text) +
                                         " characters besides spaces at its ends (what the refusal must say), got " +
                                         describe(value.at("error")));
            return;
        }
        fail("expect", "expected \"pass\" or {\"error\": \"text\"}, got " + describe(value));
    }

    std::string file_;
    const runner_registry& registry_;
    const layer_runner* runner_ = nullptr;
    case_spec spec_;
};

// A parser callback that refuses duplicate keys (nlohmann would silently keep the last one,
// hiding a mistake in a hand-written case).
class duplicate_key_guard {
  public:
    explicit duplicate_key_guard(std::string file) : file_(std::move(file)) {}

    bool operator()(int /*depth*/, json::parse_event_t event, json& parsed) {
        switch (event) {
            case json::parse_event_t::object_start: frames_->push_back({true, {}, "", 0}); break;
            case json::parse_event_t::array_start: frames_->push_back({false, {}, "", 0}); break;
            case json::parse_event_t::key: {
                auto& top = frames_->back();
                top.key = parsed.get<std::string>();
                if (!top.keys.insert(top.key).second) throw case_error(file_ + ": " + path() + ": duplicate key");
                break;
            }
            case json::parse_event_t::object_end:
            case json::parse_event_t::array_end:
                frames_->pop_back();
                next_item();
                break;
            case json::parse_event_t::value: next_item(); break;
        }
        return true;
    }

  private:
    struct frame {
        bool object;
        std::set<std::string> keys;
        std::string key;
        std::size_t index;
    };

    void next_item() {
        if (!frames_->empty() && !frames_->back().object) ++frames_->back().index;
    }

  public:
    // Where the parser is: the path of the value being read (for errors the parser raises).
    std::string path() const {
        std::string out;
        for (const auto& f : *frames_)
            out += f.object ? (out.empty() ? "" : ".") + f.key : "[" + std::to_string(f.index) + "]";
        return out;
    }

  private:
    std::string file_;
    // Shared: nlohmann copies the callback.
    std::shared_ptr<std::vector<frame>> frames_ = std::make_shared<std::vector<frame>>();
};

}  // namespace

const partition_spec& case_spec::partition(const std::string& name) const {
    auto it = partitions.find(name);
    DISTDL_REQUIRE(it != partitions.end(), file << ": the case has no partition " << name);
    return it->second;
}

bool case_spec::flag(const std::string& option, bool fallback) const {
    return options.contains(option) ? options.at(option).get<bool>() : fallback;
}

std::size_t case_spec::count(const std::string& option, std::size_t fallback) const {
    return options.contains(option) ? options.at(option).get<std::size_t>() : fallback;
}

std::vector<std::size_t> case_spec::list(const std::string& option) const {
    return options.contains(option) ? options.at(option).get<std::vector<std::size_t>>() : std::vector<std::size_t>{};
}

std::vector<std::size_t> case_spec::per_dimension(const std::string& option, std::size_t dims, std::size_t fallback) const {
    if (!options.contains(option)) return std::vector<std::size_t>(dims, fallback);
    const auto& v = options.at(option);
    if (v.is_array()) return v.get<std::vector<std::size_t>>();
    return std::vector<std::size_t>(dims, v.get<std::size_t>());
}

case_spec parse_case(const nlohmann::json& document, const std::string& file, const runner_registry& registry) {
    case_spec spec = validator(file, registry).run(document);
    spec.source = document;
    spec.registry = &registry;
    return spec;
}

case_spec load_case(const std::string& path, const runner_registry& registry) {
    std::ifstream in(path);
    if (!in) throw case_error(path + ": cannot open the file");
    nlohmann::json document;
    const duplicate_key_guard guard(path);  // copies share its position
    try {
        document = nlohmann::json::parse(in, guard);
    } catch (const nlohmann::json::parse_error& e) {
        throw case_error(path + ": invalid JSON: " + e.what());
    } catch (const nlohmann::json::exception& e) {
        // E.g. 1e400: a number no double holds (nlohmann reports no position for it).
        const std::string where = guard.path();
        throw case_error(path + ": " + (where.empty() ? "" : where + ": ") + "cannot read this value: " + e.what());
    }
    return parse_case(document, path, registry);
}

namespace {

// *.json in any case: a file saved as CASE.JSON is meant as one too.
bool has_json_extension(const std::filesystem::path& file) {
    std::string extension = file.extension().string();
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension == ".json";
}

}  // namespace

std::vector<std::string> find_case_files(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    std::set<std::string> files;  // as first named, sorted
    std::set<fs::path> seen;      // each file once, however it is spelled (./a.json, a.json)
    const auto add = [&](const fs::path& file) {
        std::error_code ec;
        const fs::path key = fs::weakly_canonical(file, ec);
        if (seen.insert(ec ? file : key).second) files.insert(file.string());
    };
    for (const auto& path : paths) {
        std::error_code ec;
        const fs::file_status status = fs::status(path, ec);
        if (fs::is_directory(status)) {
            for (const auto& entry : fs::recursive_directory_iterator(path)) {
                if (!has_json_extension(entry.path()) || entry.is_directory()) continue;
                DISTDL_REQUIRE(entry.is_regular_file(), entry.path().string()
                                                            << ": not a regular file (a dangling link, a pipe or a "
                                                               "device); a case file must be one");
                add(entry.path());
            }
        } else if (fs::is_regular_file(status)) {
            add(path);
        } else {
            DISTDL_REQUIRE(!fs::exists(status), path << ": neither a file nor a folder (a pipe or a device); give "
                                                        "case files or folders of them");
            DISTDL_REQUIRE(false, "no such file or folder: " << path);
        }
    }
    return {files.begin(), files.end()};
}

}  // namespace distdl::verify
