// distdl-verify --junit: the XML is well-formed, its counts match the run, every case is one
// <testcase> named after its folder and case, a failing case carries <failure> with its message
// (escaped), a skipped one <skipped> with its reason.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include "verify/report.hpp"

namespace {

using namespace distdl::verify;

// A small XML 1.0 well-formedness check for what report_junit writes: one declaration, then
// elements properly nested, attributes quoted and unique, only the five named entities and
// numeric references, no '<' or raw '&' in text or attribute values. Returns "" or the problem.
std::string xml_problem(const std::string& xml) {
    std::vector<std::string> open;
    std::size_t i = 0;
    const std::string declaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    if (xml.compare(0, declaration.size(), declaration) != 0) return "no XML declaration";
    i = declaration.size();
    bool root_seen = false;
    const auto check_text = [](const std::string& text) -> std::string {
        static const std::regex entity("^&(amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);");
        for (std::size_t k = 0; k < text.size(); ++k) {
            if (text[k] == '<') return "'<' in text: " + text;
            if (text[k] == '&' && !std::regex_search(text.substr(k), entity)) return "bad entity in: " + text;
            if (static_cast<unsigned char>(text[k]) < 0x20 && text[k] != '\n' && text[k] != '\t' && text[k] != '\r')
                return "control character in: " + text;
        }
        return "";
    };
    while (i < xml.size()) {
        const std::size_t lt = xml.find('<', i);
        const std::string text = xml.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
        if (auto p = check_text(text); !p.empty()) return p;
        if (open.empty() && text.find_first_not_of(" \n\t\r") != std::string::npos) return "text outside the root: " + text;
        if (lt == std::string::npos) break;
        const std::size_t gt = xml.find('>', lt);
        if (gt == std::string::npos) return "unclosed tag";
        std::string tag = xml.substr(lt + 1, gt - lt - 1);
        i = gt + 1;
        if (!tag.empty() && tag[0] == '/') {
            if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
            open.pop_back();
            continue;
        }
        const bool self_closing = !tag.empty() && tag.back() == '/';
        if (self_closing) tag.pop_back();
        static const std::regex name_re("^[A-Za-z_][A-Za-z0-9_.-]*");
        std::smatch m;
        if (!std::regex_search(tag, m, name_re)) return "bad tag <" + tag + ">";
        const std::string name = m.str();
        if (open.empty()) {
            if (root_seen) return "second root element <" + name + ">";
            root_seen = true;
        }
        // Attributes: name="value" separated by white space.
        std::string rest = tag.substr(name.size());
        static const std::regex attribute_re("^\\s+([A-Za-z_][A-Za-z0-9_.-]*)=\"([^\"]*)\"");
        std::map<std::string, int> seen;
        while (std::regex_search(rest, m, attribute_re)) {
            if (seen[m.str(1)]++) return "attribute " + m.str(1) + " twice in <" + name + ">";
            if (auto p = check_text(m.str(2)); !p.empty()) return p;
            rest = m.suffix();
        }
        if (rest.find_first_not_of(" \n\t") != std::string::npos) return "malformed attributes in <" + tag + ">";
        if (!self_closing) open.push_back(name);
    }
    if (!root_seen) return "no root element";
    if (!open.empty()) return "<" + open.back() + "> never closed";
    return "";
}

int occurrences(const std::string& text, const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

case_outcome outcome(std::string name, std::string file, std::string layer, verdict result, std::string message,
                     double seconds) {
    case_outcome o;
    o.name = std::move(name);
    o.file = std::move(file);
    o.layer = std::move(layer);
    o.result = result;
    o.message = std::move(message);
    o.seconds = seconds;
    return o;
}

run_record sample_run() {
    run_record record;
    record.transport = "sim";
    record.total_seconds = 1.25;
    record.outcomes = {
        outcome("overlap_3_to_2x3", "cases/broadcast/overlap_3_to_2x3.json", "Broadcast", verdict::passed, "", 0.5),
        outcome("gather_<bad>", "cases/broadcast/gather.json", "Broadcast", verdict::failed,
                "forward differs: x & y \"quoted\" 'single'\nsecond line", 0.25),
        outcome("needs_48", "cases/repartition/needs_48.json", "Repartition", verdict::skipped,
                "world_size 48 > 18 ranks of the job", 0),
        outcome("cases/broken/not_json.json", "cases/broken/not_json.json", "(invalid)", verdict::failed,
                "invalid JSON: \x01 at byte 3", 0),
    };
    return record;
}

TEST(Junit, IsWellFormedXml) {
    const std::string xml = report_junit(sample_run());
    EXPECT_EQ(xml_problem(xml), "") << xml;
}

TEST(Junit, TheCheckerRefusesMalformedXml) {
    // The checker above is what the other tests rely on: it must catch what it claims to.
    const std::string head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    EXPECT_EQ(xml_problem(head + "<a><b/></a>\n"), "");
    EXPECT_NE(xml_problem(head + "<a><b></a>\n"), "");
    EXPECT_NE(xml_problem(head + "<a x=\"1 < 2\"/>\n"), "");
    EXPECT_NE(xml_problem(head + "<a x=\"A & B\"/>\n"), "");
    EXPECT_NE(xml_problem(head + "<a x=\"1\" x=\"2\"/>\n"), "");
    EXPECT_NE(xml_problem(head + "<a>\x01</a>\n"), "");
    EXPECT_NE(xml_problem(head + "<a/><b/>\n"), "");
    EXPECT_NE(xml_problem("<a/>\n"), "");
}

TEST(Junit, CountsMatchTheRun) {
    const std::string xml = report_junit(sample_run());
    EXPECT_NE(xml.find("<testsuites name=\"distdl-verify (sim)\" tests=\"4\" failures=\"2\" errors=\"0\" skipped=\"1\" "
                       "time=\"1.250\">"),
              std::string::npos)
        << xml;
    EXPECT_EQ(occurrences(xml, "<testcase "), 4);
    EXPECT_EQ(occurrences(xml, "<failure "), 2);
    EXPECT_EQ(occurrences(xml, "<skipped "), 1);
    // One suite per folder, sorted, with its own counts.
    EXPECT_EQ(occurrences(xml, "<testsuite "), 3);
    EXPECT_NE(xml.find("<testsuite name=\"broadcast\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.750\">"),
              std::string::npos)
        << xml;
    EXPECT_LT(xml.find("name=\"broadcast\""), xml.find("name=\"broken\""));
    EXPECT_LT(xml.find("name=\"broken\""), xml.find("name=\"repartition\""));
}

TEST(Junit, EachCaseIsATestcaseNamedByFolderAndCase) {
    const std::string xml = report_junit(sample_run());
    EXPECT_NE(xml.find("<testcase classname=\"broadcast\" name=\"overlap_3_to_2x3\" time=\"0.500\"/>"), std::string::npos)
        << xml;
    EXPECT_NE(xml.find("<testcase classname=\"repartition\" name=\"needs_48\" time=\"0.000\">\n"
                       "      <skipped message=\"world_size 48 &gt; 18 ranks of the job\"/>\n"
                       "    </testcase>"),
              std::string::npos)
        << xml;
}

// Suites are the folders below the one all case files share: two folders of the same name stay
// apart; a run on one folder keeps its name; cases without a folder (random) go by layer.
TEST(Junit, SuitesAreFoldersBelowTheCommonOne) {
    run_record record;
    record.transport = "sim";
    record.outcomes = {outcome("p", "j/x/a/p.json", "ReLU", verdict::passed, "", 0),
                       outcome("q", "j/y/a/q.json", "ReLU", verdict::passed, "", 0),
                       outcome("random/0", "random_7_0.json", "Broadcast", verdict::passed, "", 0)};
    std::string xml = report_junit(record);
    EXPECT_NE(xml.find("<testcase classname=\"x/a\" name=\"p\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("<testcase classname=\"y/a\" name=\"q\""), std::string::npos) << xml;
    EXPECT_NE(xml.find("<testcase classname=\"Broadcast\" name=\"random/0\""), std::string::npos) << xml;
    record.outcomes.resize(1);
    xml = report_junit(record);
    EXPECT_NE(xml.find("<testcase classname=\"a\" name=\"p\""), std::string::npos) << xml;
}

// The root is the folder the PATH arguments share (a file counts as its folder), whatever their
// spelling; suites lie below it however few cases a filter leaves.
TEST(Junit, SuitesLieBelowTheFolderThePathsShare) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("distdl_junit_root_" + std::to_string(::getpid()));
    fs::create_directories(dir / "j" / "x" / "a");
    fs::create_directories(dir / "j" / "y" / "a");
    std::ofstream(dir / "j" / "y" / "a" / "q.json") << "{}";
    const std::string root = distdl::verify::common_folder(
        {(dir / "j" / "x" / "a").string() + "/", (dir / "j" / "." / "y" / "a" / "q.json").string()});
    EXPECT_EQ(root, (dir / "j").string());
    run_record record;
    record.transport = "sim";
    record.case_root = root;
    record.outcomes = {outcome("p", (dir / "j" / "x" / "a" / "p.json").string(), "ReLU", verdict::passed, "", 0)};
    const std::string xml = report_junit(record);
    EXPECT_NE(xml.find("<testcase classname=\"x/a\" name=\"p\""), std::string::npos) << xml;
    EXPECT_EQ(distdl::verify::common_folder({(dir / "j").string(), (dir / "j" / ".").string()}), (dir / "j").string());
    fs::remove_all(dir);
}

TEST(Junit, AFailingCaseCarriesItsMessageEscaped) {
    const std::string xml = report_junit(sample_run());
    EXPECT_NE(xml.find("<testcase classname=\"broadcast\" name=\"gather_&lt;bad&gt;\" time=\"0.250\">\n"
                       "      <failure message=\"forward differs: x &amp; y &quot;quoted&quot; &apos;single&apos;&#10;"
                       "second line\" type=\"verification\">cases/broadcast/gather.json: forward differs"),
              std::string::npos)
        << xml;
    // A file that could not be loaded is a failure too, named by its file name, its control
    // character replaced.
    EXPECT_NE(xml.find("<testcase classname=\"broken\" name=\"not_json.json\" time=\"0.000\">\n"
                       "      <failure message=\"invalid JSON: ? at byte 3\" type=\"invalid case file\">"),
              std::string::npos)
        << xml;
}

TEST(Junit, WriteJunitWritesTheFileAndRefusesAnUnwritablePath) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("distdl_junit_test_" + std::to_string(::getpid()));
    const fs::path file = dir / "nested" / "verify.junit.xml";
    write_junit(file.string(), sample_run());
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), report_junit(sample_run()));
    fs::remove_all(dir);
    EXPECT_THROW(write_junit("/proc/distdl_no_such_dir/verify.junit.xml", sample_run()), distdl::error);
}

}  // namespace

// A case file's suite does not depend on how its path was spelt: "a.json" and "./a.json" from
// its folder, or "j/a.json" from above, all give the folder's name.
TEST(Junit, ASuiteDoesNotDependOnThePathsSpelling) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("distdl_junit_spelling_" + std::to_string(::getpid()));
    fs::create_directories(dir / "j");
    const fs::path before = fs::current_path();
    fs::current_path(dir / "j");
    for (const char* spelt : {"a.json", "./a.json", "../j/a.json"}) {
        run_record record;
        record.transport = "sim";
        record.case_root = common_folder({spelt});
        record.outcomes = {outcome("p", spelt, "ReLU", verdict::passed, "", 0)};
        const std::string xml = report_junit(record);
        EXPECT_NE(xml.find("<testcase classname=\"j\" name=\"p\""), std::string::npos) << spelt << "\n" << xml;
    }
    fs::current_path(before);
    fs::remove_all(dir);
}

// Bytes that are not UTF-8 (a path holds whatever the file system does) become U+FFFD: the
// XML stays well-formed and the JSON report is written.
TEST(Junit, BytesThatAreNotUtf8AreReplaced) {
    run_record record = sample_run();
    record.outcomes.push_back(outcome("x\xE9.json", "cases/broken/x\xE9.json", "(invalid)", verdict::failed,
                                      "cases/broken/x\xE9.json: invalid JSON \xF0\x9F\x98", 0));
    const std::string xml = report_junit(record);
    EXPECT_EQ(xml_problem(xml), "");
    EXPECT_NE(xml.find("name=\"x\xEF\xBF\xBD.json\""), std::string::npos) << xml;
    EXPECT_EQ(xml.find("\xE9"), std::string::npos);
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("distdl_report_utf8_" + std::to_string(::getpid()));
    write_reports(dir.string(), record);
    std::ifstream in(dir / "verify.json");
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_NE(text.str().find("x\xEF\xBF\xBD.json"), std::string::npos);
    fs::remove_all(dir);
}
