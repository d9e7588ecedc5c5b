#pragma once
// Running one case on a transport, with a time limit: a case that hangs fails with a clear
// message instead of stalling the run.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/partition.hpp"
#include "verify/layer_runner.hpp"
#include "verify/verdict.hpp"

namespace distdl::verify {

// A time limit as the user wrote it in decimal (0.5, 30, 1000000), for messages.
std::string seconds_as_given(double seconds);

// ---- simulator ----

// Runs the case as spec.world_size threads (sim::run) in a worker process (a fork of this one,
// kept for the next cases) and waits at most `time_limit_seconds`; past that the case fails
// and the worker is killed. A worker that dies (a crash) fails the case it ran. The worker runs
// the document the case was parsed from: change a document, not a parsed case (a change the
// outcome shows, as of its name or expectation, throws std::logic_error). A case not made by
// parse_case (no document) runs in this process.
case_outcome run_on_simulator(const case_spec& spec, const layer_runner& runner, double time_limit_seconds);
// Ends the worker after the last case: its wait status, or that of an earlier worker ended for
// another registry's cases, if that was not 0 (0 if there was none). Not 0: a worker ended
// badly after its cases' results (a sanitizer's report: a leak, a race).
int finish_simulator_cases();
// "ended with exit status 23", "died of signal 6 (Aborted)": a wait status for a message.
std::string describe_wait_status(int status);
// The case in this process, without a time limit (to debug a case): a crash ends the caller.
case_outcome run_in_this_process(const case_spec& spec, const layer_runner& runner);

// ---- MPI (any communicator-based job) ----

// Calls `on_expiry` from its own thread when armed for longer than the limit (and not
// disarmed). Used under MPI, where a hung collective cannot be interrupted: the job is ended.
class watchdog {
  public:
    explicit watchdog(std::function<void(const std::string& what, double seconds)> on_expiry);
    ~watchdog();
    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;

    void arm(const std::string& what, double seconds);
    void disarm();

  private:
    void loop();

    std::function<void(const std::string&, double)> on_expiry_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool armed_ = false;
    bool stopping_ = false;
    std::string what_;
    double seconds_ = 0;
    std::chrono::steady_clock::time_point deadline_;
    std::thread thread_;
};

struct job_case_result {
    case_outcome outcome;       // identical on every rank of the job
    std::string local_problem;  // this rank's own finding, if it failed (for ranks != 0 to print)
};

// Collective over every rank of `job`: the ranks 0..world_size-1 run the case on a partition
// of their own (the others idle), every member's result is gathered, and rank 0's verdict is
// broadcast so that all ranks agree. A case larger than the job is skipped.
job_case_result run_on_job(const case_spec& spec, const layer_runner& runner, const partition& job, watchdog& dog,
                           double time_limit_seconds);

}  // namespace distdl::verify
