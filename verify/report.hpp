#pragma once
// Console lines, the --report files (verify.md, verify.json) and the --junit file of a run.
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/verdict.hpp"

namespace distdl::verify {

struct run_record {
    std::string transport;  // "sim" or "mpi"
    int job_ranks = 1;      // MPI ranks of the job (1 on the simulator)
    double total_seconds = 0;
    std::vector<case_outcome> outcomes;  // in the order the cases ran
    std::string case_root;  // the folder the PATH arguments share (JUnit suites lie below it); may be empty
};

struct layer_totals {
    int passed = 0, failed = 0, skipped = 0;
    double seconds = 0;
};

// Per layer, sorted by layer name.
std::map<std::string, layer_totals> totals_by_layer(const std::vector<case_outcome>& outcomes);
layer_totals grand_total(const std::vector<case_outcome>& outcomes);

// "0", "3.1e-16", "-" (did not run), "inf".
std::string format_error(double e);

// One line per case as it runs (a second, indented line carries the failure message).
std::string case_line(const case_outcome& outcome);
// The per-layer summary table and the total time.
void print_summary(std::ostream& out, const run_record& record);

struct machine_info {
    std::string hostname;
    unsigned cores = 0;
    std::string git_commit;  // short hash, or "unknown"
};
machine_info describe_machine();

nlohmann::json report_json(const run_record& record, const machine_info& machine);
std::string report_markdown(const run_record& record, const machine_info& machine);
// Writes DIR/verify.md and DIR/verify.json (creating DIR). Throws distdl::error on failure.
void write_reports(const std::string& dir, const run_record& record);

// JUnit XML, the format CI systems read: one <testsuite> per folder below case_root
// (cases/<folder>/ for a run on cases/), one <testcase> per case (classname = that folder, name
// = case name, time in seconds), failed cases with <failure message=...>, skipped ones with
// <skipped message=reason>.
std::string report_junit(const run_record& record);
// The deepest folder that holds every path (absolute; a file counts as its folder), for
// run_record::case_root; empty for no paths.
std::string common_folder(const std::vector<std::string>& paths);
// Writes the JUnit XML to `file` (creating its folder). Throws distdl::error on failure.
void write_junit(const std::string& file, const run_record& record);

}  // namespace distdl::verify
