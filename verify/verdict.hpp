#pragma once
// The outcome of one case: every worker's result combined in rank order (so the verdict is
// the same on every rank and every run).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/case_file.hpp"
#include "verify/case_runner.hpp"

namespace distdl::verify {

enum class verdict { passed, failed, skipped };

struct case_outcome {
    std::string name;   // the file name when the file could not be loaded
    std::string file;
    std::string layer;  // "(invalid)" for files that could not be loaded
    int world_size = 0;
    std::string dtype_name;
    bool expects_error = false;
    verdict result = verdict::failed;
    std::string message;  // why it failed (or was skipped); the refusal text for error cases
    // Largest relative errors over the workers; NaN where the check did not run.
    double forward_error;
    double adjoint_error;
    double dot_error;
    // Elements of the input and output pieces and parameter gradients over all workers (cases
    // that ran their checks): 0 means every tensor was empty, and the checks compared nothing.
    std::size_t data_elements = 0;
    double seconds = 0;

    case_outcome();
    bool passed() const { return result == verdict::passed; }
};

void to_json(nlohmann::json& out, const case_outcome& outcome);
void from_json(const nlohmann::json& in, case_outcome& outcome);

// An outcome carrying the case's identity and nothing else yet.
case_outcome outcome_for(const case_spec& spec);
// A file that could not be used.
case_outcome invalid_case(const std::string& file, const std::string& message);

// Combines the workers' results (one per rank, any order) into the outcome.
case_outcome judge(const case_spec& spec, std::vector<worker_result> results);

const char* to_string(verdict v);

}  // namespace distdl::verify
