#include "verify/report.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "core/error.hpp"
#include "verify/build_commit.hpp"
#include "verify/json_text.hpp"
#include "verify/random_cases.hpp"

namespace distdl::verify {

std::map<std::string, layer_totals> totals_by_layer(const std::vector<case_outcome>& outcomes) {
    std::map<std::string, layer_totals> totals;
    for (const auto& o : outcomes) {
        auto& t = totals[o.layer];
        if (o.result == verdict::passed) ++t.passed;
        else if (o.result == verdict::failed) ++t.failed;
        else ++t.skipped;
        t.seconds += o.seconds;
    }
    return totals;
}

layer_totals grand_total(const std::vector<case_outcome>& outcomes) {
    layer_totals total;
    for (const auto& [layer, t] : totals_by_layer(outcomes)) {
        total.passed += t.passed;
        total.failed += t.failed;
        total.skipped += t.skipped;
        total.seconds += t.seconds;
    }
    return total;
}

std::string format_error(double e) {
    if (std::isnan(e)) return "-";
    if (std::isinf(e)) return "inf";
    if (e == 0) return "0";
    char text[32];
    std::snprintf(text, sizeof text, "%.1e", e);
    return text;
}

namespace {

std::string format_seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", s);
    return text;
}

// The checks' columns of one case, shared by the console and the Markdown report.
std::string checks_text(const case_outcome& o) {
    if (o.layer == "(invalid)") return "invalid case file";
    if (o.result == verdict::skipped) return "skipped: " + o.message;
    if (o.expects_error) return o.passed() ? "refused as expected" : "expected a refusal";
    std::string text = "fwd " + format_error(o.forward_error) + "  adj " + format_error(o.adjoint_error) + "  dot " +
                       format_error(o.dot_error);
    if (o.passed() && o.data_elements == 0) text += "  (all empty: nothing compared)";
    return text;
}

std::string markdown_cell(std::string text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    gmtime_r(&now, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

}  // namespace

std::string case_line(const case_outcome& o) {
    std::ostringstream line;
    line << "[ " << to_string(o.result) << " ] " << std::left << std::setw(52) << o.name;
    if (o.layer != "(invalid)") line << " ws " << std::right << std::setw(2) << o.world_size << "  " << o.dtype_name;
    line << "  " << checks_text(o) << "  " << format_seconds(o.seconds) << " s";
    if (o.result == verdict::failed) line << "\n         " << o.message;
    return line.str();
}

void print_summary(std::ostream& out, const run_record& record) {
    out << "\n" << std::left << std::setw(16) << "layer" << std::right << std::setw(8) << "passed" << std::setw(8) << "failed"
        << std::setw(9) << "skipped" << std::setw(11) << "time (s)" << "\n";
    auto row = [&](const std::string& name, const layer_totals& t) {
        out << std::left << std::setw(16) << name << std::right << std::setw(8) << t.passed << std::setw(8) << t.failed
            << std::setw(9) << t.skipped << std::setw(11) << format_seconds(t.seconds) << "\n";
    };
    for (const auto& [layer, t] : totals_by_layer(record.outcomes)) row(layer, t);
    row("total", grand_total(record.outcomes));
    out << "total time " << format_seconds(record.total_seconds) << " s on the " << record.transport << " transport";
    if (record.transport == "mpi") out << " (" << record.job_ranks << (record.job_ranks == 1 ? " rank)" : " ranks)");
    out << "\n";
    const auto total = grand_total(record.outcomes);
    if (total.failed > 0) {
        out << "\nFailed cases:\n";
        for (const auto& o : record.outcomes)
            if (o.result == verdict::failed) out << "  " << o.name << ": " << o.message << "\n";
    }
}

machine_info describe_machine() {
    machine_info m;
    char host[256] = {};
    m.hostname = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
    m.cores = std::thread::hardware_concurrency();
    m.git_commit = build_commit();
    return m;
}

nlohmann::json report_json(const run_record& record, const machine_info& machine) {
    nlohmann::json layers = nlohmann::json::object();
    for (const auto& [layer, t] : totals_by_layer(record.outcomes)) {
        nlohmann::json cases = nlohmann::json::array();
        for (const auto& o : record.outcomes)
            if (o.layer == layer) cases.push_back(o);
        layers[layer] = {{"passed", t.passed}, {"failed", t.failed}, {"skipped", t.skipped}, {"seconds", t.seconds},
                         {"cases", cases}};
    }
    const auto total = grand_total(record.outcomes);
    return {{"tool", "distdl-verify"},
            {"generated", utc_now()},
            {"transport", record.transport},
            {"job_ranks", record.job_ranks},
            {"machine", {{"hostname", machine.hostname}, {"cores", machine.cores}}},
            {"git_commit", machine.git_commit},
            {"totals",
             {{"cases", total.passed + total.failed + total.skipped},
              {"passed", total.passed},
              {"failed", total.failed},
              {"skipped", total.skipped},
              {"case_seconds", total.seconds},
              {"total_seconds", record.total_seconds}}},
            {"layers", layers}};
}

std::string report_markdown(const run_record& record, const machine_info& machine) {
    std::ostringstream md;
    const auto total = grand_total(record.outcomes);
    md << "# distdl verification report\n\n";
    md << "- generated: " << utc_now() << "\n";
    md << "- transport: " << record.transport;
    if (record.transport == "mpi") md << " (" << record.job_ranks << (record.job_ranks == 1 ? " rank)" : " ranks)");
    md << "\n- machine: " << machine.hostname << ", " << machine.cores << " cores\n";
    md << "- git commit: " << machine.git_commit << "\n";
    md << "- cases: " << total.passed + total.failed + total.skipped << " — " << total.passed << " passed, "
       << total.failed << " failed, " << total.skipped << " skipped\n";
    md << "- total time: " << format_seconds(record.total_seconds) << " s\n\n";
    md << "Errors: `fwd`, `adj` = largest relative error of the forward and adjoint pieces against the serial "
          "reference, relative to the largest value of the whole reference tensor or its largest sum of "
          "|terms| when larger (data movement must be "
          "exactly 0; limit 1e-12 double, 1e-5 float); `dot` = adjoint dot-product test "
          "(limit 1e-13 double, 1e-5 float).\n\n";
    md << "## Summary\n\n| layer | passed | failed | skipped | time (s) |\n| --- | ---: | ---: | ---: | ---: |\n";
    for (const auto& [layer, t] : totals_by_layer(record.outcomes))
        md << "| " << layer << " | " << t.passed << " | " << t.failed << " | " << t.skipped << " | "
           << format_seconds(t.seconds) << " |\n";
    md << "| **total** | " << total.passed << " | " << total.failed << " | " << total.skipped << " | "
       << format_seconds(total.seconds) << " |\n";
    for (const auto& [layer, t] : totals_by_layer(record.outcomes)) {
        md << "\n## " << layer << "\n\n| case | world size | dtype | fwd | adj | dot | time (s) | verdict |\n"
           << "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n";
        for (const auto& o : record.outcomes) {
            if (o.layer != layer) continue;
            std::string verdict_text = to_string(o.result);
            if (o.expects_error && o.passed()) verdict_text += " (refused: " + o.message + ")";
            else if (!o.passed()) verdict_text += ": " + o.message;
            md << "| " << markdown_cell(o.name) << " | " << o.world_size << " | " << o.dtype_name << " | "
               << format_error(o.forward_error) << " | " << format_error(o.adjoint_error) << " | "
               << format_error(o.dot_error) << " | " << format_seconds(o.seconds) << " | " << markdown_cell(verdict_text)
               << " |\n";
        }
    }
    return md.str();
}

void write_reports(const std::string& dir, const run_record& record) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(dir, ec);
    DISTDL_REQUIRE_AS(!ec, error, "cannot create the report folder " << dir << ": " << ec.message());
    const machine_info machine = describe_machine();
    const auto write = [&](const std::string& name, const std::string& text) {
        const fs::path path = fs::path(dir) / name;
        std::ofstream out(path);
        out << text;
        out.close();
        DISTDL_REQUIRE_AS(out.good(), error, "cannot write " << path.string());
    };
    write("verify.md", report_markdown(record, machine));
    write("verify.json", json_text(report_json(record, machine), 2) + "\n");
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4), or 0 if there is none there.
std::size_t utf8_length(const std::string& text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    if (lead < 0x80) return 1;
    const std::size_t n = lead >= 0xC2 && lead <= 0xDF   ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((byte(i + k) & 0xC0) != 0x80) return 0;
    const unsigned char second = byte(i + 1);  // no overlong forms, surrogates or code points beyond U+10FFFF
    if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) || (lead == 0xF0 && second < 0x90) ||
        (lead == 0xF4 && second > 0x8F))
        return 0;
    return n;
}

// Text safe inside XML content and double-quoted attributes. Characters XML 1.0 cannot carry
// (control characters other than tab, newline, carriage return) become '?', bytes that are not
// UTF-8 (a path holds whatever the file system does) U+FFFD.
std::string xml_escape(const std::string& text, bool attribute) {
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = utf8_length(text, i);
        if (n != 1) {
            out += n == 0 ? std::string("\xEF\xBF\xBD") : text.substr(i, n);
            i += n == 0 ? 1 : n;
            continue;
        }
        const char c = text[i++];
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            case '\n': out += attribute ? "&#10;" : "\n"; break;
            case '\r': out += "&#13;"; break;
            case '\t': out += attribute ? "&#9;" : "\t"; break;
            default:
                out += (static_cast<unsigned char>(c) < 0x20) ? '?' : c;
        }
    }
    return out;
}

// The suite (classname) of each outcome: its file's folder below `root` (run_record::case_root:
// "linear" for a run on cases/; "x/a" and "y/a" for j/x/a and j/y/a, which the folder name alone
// would merge), or below the folder the case files share when no root is given; the folder's own
// name when that is the root itself; the layer's name for random cases.
std::vector<std::string> suite_names(const std::vector<case_outcome>& outcomes, std::string root) {
    namespace fs = std::filesystem;
    // Random cases have no file of their own; case files count by their absolute folder, however
    // the path was spelt ("a.json", "./a.json", "../x/a.json" from x alike).
    const auto random = [](const case_outcome& o) { return o.file.empty() || is_random_case_name(o.name); };
    if (root.empty()) {
        std::vector<std::string> files;
        for (const auto& o : outcomes)
            if (!random(o)) files.push_back(o.file);
        root = common_folder(files);
    }
    std::vector<std::string> names;
    for (const auto& o : outcomes) {
        if (random(o)) {
            names.push_back(o.layer);
            continue;
        }
        const fs::path folder = fs::absolute(o.file).lexically_normal().parent_path();
        const fs::path below = folder.lexically_relative(root);
        const bool inside = !below.empty() && below != "." && *below.begin() != "..";
        names.push_back(inside ? below.generic_string() : folder.filename().string());
    }
    return names;
}

// A case's name; for a file that could not be loaded (named by its path), the file's name.
std::string junit_name(const case_outcome& o) {
    return o.layer == "(invalid)" ? std::filesystem::path(o.file).filename().string() : o.name;
}

// The body of a <failure>: where, what, and the checks' line as the console shows it.
std::string failure_text(const case_outcome& o) {
    const bool names_file = !o.file.empty() && o.message.rfind(o.file, 0) == 0;
    return (names_file || o.file.empty() ? "" : o.file + ": ") + o.message + "\n" + checks_text(o);
}

}  // namespace

std::string common_folder(const std::vector<std::string>& paths) {
    namespace fs = std::filesystem;
    std::optional<fs::path> common;
    for (const auto& p : paths) {
        fs::path folder = fs::absolute(p).lexically_normal();
        if (!fs::is_directory(folder)) folder = folder.parent_path();  // a file (or one not there: its folder)
        if (!folder.has_filename()) folder = folder.parent_path();      // "cases/" as "cases"
        if (!common) {
            common = folder;
            continue;
        }
        fs::path shared;  // the components both begin with
        auto a = common->begin(), b = folder.begin();
        for (; a != common->end() && b != folder.end() && *a == *b; ++a, ++b) shared /= *a;
        common = shared;
    }
    return common ? common->string() : std::string();
}

std::string report_junit(const run_record& record) {
    std::map<std::string, std::vector<const case_outcome*>> by_folder;  // sorted by folder
    const auto suites = suite_names(record.outcomes, record.case_root);
    for (std::size_t i = 0; i < suites.size(); ++i) by_folder[suites[i]].push_back(&record.outcomes[i]);
    const auto total = grand_total(record.outcomes);
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"distdl-verify (" << xml_escape(record.transport, true) << ")\" tests=\""
        << record.outcomes.size() << "\" failures=\"" << total.failed << "\" errors=\"0\" skipped=\"" << total.skipped
        << "\" time=\"" << format_seconds(record.total_seconds) << "\">\n";
    for (const auto& [folder, outcomes] : by_folder) {
        layer_totals t;
        for (const auto* o : outcomes) {
            t.failed += o->result == verdict::failed;
            t.skipped += o->result == verdict::skipped;
            t.seconds += o->seconds;
        }
        out << "  <testsuite name=\"" << xml_escape(folder, true) << "\" tests=\"" << outcomes.size()
            << "\" failures=\"" << t.failed << "\" errors=\"0\" skipped=\"" << t.skipped << "\" time=\""
            << format_seconds(t.seconds) << "\">\n";
        for (const auto* o : outcomes) {
            out << "    <testcase classname=\"" << xml_escape(folder, true) << "\" name=\"" << xml_escape(junit_name(*o), true)
                << "\" time=\"" << format_seconds(o->seconds) << "\"";
            if (o->result == verdict::passed) {
                out << "/>\n";
                continue;
            }
            out << ">\n";
            if (o->result == verdict::skipped) {
                out << "      <skipped message=\"" << xml_escape(o->message, true) << "\"/>\n";
            } else {
                out << "      <failure message=\"" << xml_escape(o->message, true) << "\" type=\""
                    << (o->layer == "(invalid)" ? "invalid case file" : "verification") << "\">"
                    << xml_escape(failure_text(*o), false) << "</failure>\n";
            }
            out << "    </testcase>\n";
        }
        out << "  </testsuite>\n";
    }
    out << "</testsuites>\n";
    return out.str();
}

void write_junit(const std::string& file, const run_record& record) {
    namespace fs = std::filesystem;
    const fs::path path(file);
    std::error_code ec;
    if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
    DISTDL_REQUIRE_AS(!ec, error, "cannot create the folder of " << file << ": " << ec.message());
    std::ofstream out(path);
    out << report_junit(record);
    out.close();
    DISTDL_REQUIRE_AS(out.good(), error, "cannot write " << file);
}

}  // namespace distdl::verify
