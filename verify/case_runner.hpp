#pragma once
// One case on one worker, whatever the transport: build the partitions and the module,
// generate the input from the seed, run forward and adjoint, and evaluate this worker's part
// of both checks. The verdict (verdict.hpp) combines every worker's worker_result.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/communicator.hpp"
#include "verify/case_file.hpp"
#include "verify/checks.hpp"
#include "verify/layer_runner.hpp"
#include "verify/serial_memo.hpp"

namespace distdl::verify {

struct worker_result {
    int rank = 0;
    // Cases that expect an error: whether construction or the first forward threw, and what.
    bool refused = false;
    std::string refusal;
    // Cases that expect to pass: the first problem this worker found (empty: none).
    std::string problem;
    double forward_error = 0;  // relative error of the output piece against the reference
    double adjoint_error = 0;  // relative error of the adjoint piece against the reference
    dot_terms terms;           // this worker's share of the dot-product test
    // Elements of its input and output pieces and parameter gradients: 0 on every worker, nothing was compared.
    std::size_t data_elements = 0;
    // Layers with parameters (parameter_checks.hpp): this worker's share of the dot-product
    // test with respect to each parameter; adjoint_error also covers the parameter gradients.
    std::vector<std::string> parameter_names;
    std::vector<dot_terms> parameter_terms;
};

void to_json(nlohmann::json& out, const worker_result& result);
void from_json(const nlohmann::json& in, worker_result& result);

// Runs the case on this worker of `world` (a communicator of exactly spec.world_size ranks,
// which every rank of it calls with). In a case that should pass, a failure of the module
// propagates (the transport aborts the world and names the rank); a failure of a check is
// recorded in the result.
// `shared` (optional): the case's serial side, the same object for every worker of the case.
worker_result run_worker(const case_spec& spec, const layer_runner& runner, const std::shared_ptr<communicator>& world,
                         serial_memo* shared = nullptr);

}  // namespace distdl::verify
