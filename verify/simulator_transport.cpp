// The simulator transport of the harness: one case = one sim::run on a helper thread.
#include <atomic>
#include <future>
#include <sstream>

#include "simulator/run.hpp"
#include "verify/case_runner.hpp"
#include "verify/transports.hpp"

namespace distdl::verify {

namespace {

std::atomic<int> abandoned{0};

// Owned jointly by the caller and the helper thread, so an abandoned run keeps its data.
struct simulated_case {
    case_spec spec;
    layer_runner runner;
    std::vector<worker_result> results;
    std::shared_ptr<serial_memo> serial = std::make_shared<serial_memo>();  // computed once, not once per worker
    std::string failure;
    std::promise<void> done;
};

}  // namespace

int abandoned_simulator_cases() { return abandoned.load(); }

case_outcome run_on_simulator(const case_spec& spec, const layer_runner& runner, double time_limit_seconds) {
    const auto start = std::chrono::steady_clock::now();
    auto state = std::make_shared<simulated_case>();
    state->spec = spec;
    state->runner = runner;
    state->results.resize(static_cast<std::size_t>(spec.world_size));
    auto finished = state->done.get_future();

    std::thread helper([state] {
        try {
            sim::run(state->spec.world_size, [&state](const std::shared_ptr<communicator>& world) {
                state->results[static_cast<std::size_t>(world->rank())] =
                    run_worker(state->spec, state->runner, world, state->serial.get());
            });
        } catch (const std::exception& e) {
            state->failure = e.what();
        } catch (...) {
            state->failure = "unknown exception";
        }
        state->done.set_value();
    });

    case_outcome out;
    const auto limit = std::chrono::duration<double>(time_limit_seconds);
    if (finished.wait_for(limit) == std::future_status::timeout) {
        helper.detach();
        ++abandoned;
        out = outcome_for(spec);
        out.result = verdict::failed;
        std::ostringstream given;  // as given: 0.5 stays 0.5, 30 stays 30
        given << time_limit_seconds;
        out.message = "exceeded the time limit of " + given.str() +
                      " s without the simulator detecting a deadlock (a rank computes or spins forever); abandoned";
    } else {
        helper.join();
        if (!state->failure.empty()) {
            out = outcome_for(spec);
            out.result = verdict::failed;
            out.message = state->failure;
            if (!spec.expect_pass()) {
                // Usually some ranks refused and the others waited for them: say which.
                std::string refused;
                for (const auto& r : state->results)
                    if (r.refused) refused += (refused.empty() ? "" : ",") + std::to_string(r.rank);
                out.message += " (every rank must refuse with \"" + *spec.expected_error + "\"; refused: [" + refused + "])";
            }
        } else {
            out = judge(spec, state->results);
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace distdl::verify
