// The job transport of the harness: a case runs on the first world_size ranks of a job (an
// MPI job under mpiexec), the other ranks idle, and every rank ends with the same verdict.
#include <limits>
#include <numeric>

#include "verify/json_text.hpp"
#include "verify/transports.hpp"

namespace distdl::verify {

watchdog::watchdog(std::function<void(const std::string&, double)> on_expiry)
    : on_expiry_(std::move(on_expiry)), thread_([this] { loop(); }) {}

watchdog::~watchdog() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
}

void watchdog::arm(const std::string& what, double seconds) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        armed_ = true;
        what_ = what;
        seconds_ = seconds;
        deadline_ = std::chrono::steady_clock::now() +
                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
    }
    wake_.notify_all();
}

void watchdog::disarm() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        armed_ = false;
    }
    wake_.notify_all();
}

void watchdog::loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
        if (!armed_) {
            wake_.wait(lock);
            continue;
        }
        const auto deadline = deadline_;
        if (wake_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ && !stopping_ &&
            deadline_ == deadline) {
            const std::string what = what_;
            const double seconds = seconds_;
            armed_ = false;
            lock.unlock();
            on_expiry_(what, seconds);  // normally ends the process
            lock.lock();
        }
    }
}

job_case_result run_on_job(const case_spec& spec, const layer_runner& runner, const partition& job, watchdog& dog,
                           double time_limit_seconds) {
    const auto start = std::chrono::steady_clock::now();
    job_case_result out;
    if (spec.world_size > job.size()) {
        out.outcome = outcome_for(spec);
        out.outcome.result = verdict::skipped;
        out.outcome.message = "needs " + std::to_string(spec.world_size) + " ranks, the job has " + std::to_string(job.size());
        return out;
    }
    dog.arm(spec.name, time_limit_seconds);

    std::vector<int> members(static_cast<std::size_t>(spec.world_size));
    std::iota(members.begin(), members.end(), 0);
    const partition team = job.create_partition_inclusive(members);
    if (team.active()) {
        worker_result mine;
        try {
            mine = run_worker(spec, runner, team.comm());
        } catch (const std::exception& e) {
            // The other members usually fail the same way (the reference, a rule every rank
            // checks); if they do not, they hang and the watchdog ends the job.
            mine = worker_result{};
            mine.rank = team.rank();
            mine.problem = e.what();
            mine.forward_error = mine.adjoint_error = std::numeric_limits<double>::quiet_NaN();
        }
        if (!mine.problem.empty()) out.local_problem = mine.problem;
        else if (!spec.expect_pass() && (!mine.refused || mine.refusal.find(*spec.expected_error) == std::string::npos))
            out.local_problem = mine.refused ? "refused with \"" + mine.refusal + "\"" : "was not refused";

        const std::string text = json_text(nlohmann::json(mine));
        const auto gathered = team.allgather_data(std::vector<char>(text.begin(), text.end()));
        std::vector<worker_result> results;
        for (const auto& piece : gathered)
            results.push_back(nlohmann::json::parse(std::string(piece.begin(), piece.end())).get<worker_result>());
        out.outcome = judge(spec, std::move(results));
        out.outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }

    // Rank 0 always takes part; its verdict is everyone's.
    std::string text = job.rank() == 0 ? json_text(nlohmann::json(out.outcome)) : std::string();
    const auto agreed = job.broadcast_data(std::vector<char>(text.begin(), text.end()), 0);
    out.outcome = nlohmann::json::parse(std::string(agreed.begin(), agreed.end())).get<case_outcome>();
    dog.disarm();
    return out;
}

}  // namespace distdl::verify
