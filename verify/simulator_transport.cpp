// The simulator transport of the harness: one case = one sim::run, in a child process of its
// own, so that a case past the time limit is killed with all its threads and memory, and a
// case that crashes fails alone instead of ending the run.
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simulator/run.hpp"
#include "verify/case_runner.hpp"
#include "verify/transports.hpp"

namespace distdl::verify {

namespace {

case_outcome failed_case(const case_spec& spec, const std::string& message) {
    case_outcome out = outcome_for(spec);
    out.result = verdict::failed;
    out.message = message;
    return out;
}

// Writes all of `text` (a pipe may take it in parts); false if the reader is gone.
bool write_all(int fd, const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
        const ssize_t n = write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += std::size_t(n);
    }
    return true;
}

// Reads `fd` until its end or `deadline`; false at the deadline.
bool read_until(int fd, std::chrono::steady_clock::time_point deadline, std::string& text) {
    char chunk[65536];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) return false;
        pollfd p{fd, POLLIN, 0};
        const int ready = poll(&p, 1, int(std::min<long long>(left.count(), 1000)));
        if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
        if (ready < 0) return true;  // nothing more to read: judged by the child's end
        const ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return true;
        text.append(chunk, std::size_t(n));
    }
}

std::string seconds_as_given(double seconds) {
    std::ostringstream given;  // 0.5 stays 0.5, 30 stays 30
    given << seconds;
    return given.str();
}

}  // namespace

case_outcome run_in_this_process(const case_spec& spec, const layer_runner& runner) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<worker_result> results(static_cast<std::size_t>(spec.world_size));
    serial_memo serial;  // computed once, not once per worker
    case_outcome out;
    try {
        sim::run(spec.world_size, [&](const std::shared_ptr<communicator>& world) {
            results[static_cast<std::size_t>(world->rank())] = run_worker(spec, runner, world, &serial);
        });
        out = judge(spec, results);
    } catch (const std::exception& e) {
        out = failed_case(spec, e.what());
        if (!spec.expect_pass()) {
            // Usually some ranks refused and the others waited for them: say which.
            std::string refused;
            for (const auto& r : results)
                if (r.refused) refused += (refused.empty() ? "" : ",") + std::to_string(r.rank);
            out.message += " (every rank must refuse with \"" + *spec.expected_error + "\"; refused: [" + refused + "])";
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

case_outcome run_on_simulator(const case_spec& spec, const layer_runner& runner, double time_limit_seconds) {
    const auto start = std::chrono::steady_clock::now();
    std::cout.flush();  // else the child would print what this process has buffered again
    std::cerr.flush();
    std::fflush(nullptr);
    int ends[2];
    if (pipe(ends) != 0) return failed_case(spec, std::string("could not make a pipe for the case: ") + std::strerror(errno));
    const pid_t child = fork();
    if (child < 0) {
        const int error = errno;
        close(ends[0]);
        close(ends[1]);
        return failed_case(spec, std::string("could not start a process for the case: ") + std::strerror(error));
    }
    if (child == 0) {
        close(ends[0]);
        std::string result;
        try {
            result = nlohmann::json(run_in_this_process(spec, runner)).dump();
        } catch (const std::exception& e) {
            result = nlohmann::json(failed_case(spec, e.what())).dump();
        }
        const bool sent = write_all(ends[1], result);
        close(ends[1]);
        std::exit(sent ? 0 : 1);  // a normal end: a sanitizer's leak check covers the case
    }
    close(ends[1]);
    std::string result;
    const bool in_time = read_until(ends[0], start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                          std::chrono::duration<double>(time_limit_seconds)),
                                    result);
    close(ends[0]);
    if (!in_time) kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }

    case_outcome out;
    if (!in_time) {
        out = failed_case(spec, "exceeded the time limit of " + seconds_as_given(time_limit_seconds) +
                                    " s without the simulator detecting a deadlock (a rank computes or spins forever); "
                                    "its process was killed");
    } else if (WIFSIGNALED(status)) {
        const int signal = WTERMSIG(status);
        out = failed_case(spec, "the case's process died of signal " + std::to_string(signal) + " (" +
                                    strsignal(signal) + ")" + (result.empty() ? " before it sent its result" : ""));
    } else {
        try {
            out = nlohmann::json::parse(result).get<case_outcome>();
        } catch (const std::exception&) {
            out = failed_case(spec, "the case's process ended with exit status " + std::to_string(WEXITSTATUS(status)) +
                                        " before it sent its result");
        }
        if (WEXITSTATUS(status) != 0 && out.passed()) {
            out.result = verdict::failed;
            out.message = "the case's process ended with exit status " + std::to_string(WEXITSTATUS(status)) +
                          " after its result (a sanitizer's report above?)";
        }
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace distdl::verify
