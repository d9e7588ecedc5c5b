// The simulator transport of the harness: one case = one sim::run, in a worker process (a fork
// of this one) that runs the cases it is sent one after another, so that a case past the time
// limit is killed with all its threads and memory, and a case that crashes fails alone instead
// of ending the run. A fresh worker takes the cases after either. One worker for many cases: a
// fork per case cost 1.5-17 ms per case (page tables and copied pages of a large plan).
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "simulator/run.hpp"
#include "verify/case_runner.hpp"
#include "verify/json_text.hpp"
#include "verify/registry.hpp"
#include "verify/transports.hpp"

namespace distdl::verify {

namespace {

using clock = std::chrono::steady_clock;

case_outcome failed_case(const case_spec& spec, const std::string& message) {
    case_outcome out = outcome_for(spec);
    out.result = verdict::failed;
    out.message = message;
    return out;
}

// Messages through a pipe: 8 bytes of length, then the text.
bool write_all(int fd, const char* data, std::size_t size) {
    for (std::size_t done = 0; done < size;) {
        const ssize_t n = write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += std::size_t(n);
    }
    return true;
}

bool write_message(int fd, const std::string& text) {
    const std::uint64_t size = text.size();
    return write_all(fd, reinterpret_cast<const char*>(&size), sizeof size) && write_all(fd, text.data(), text.size());
}

enum class reading { done, ended, late };

// Reads `size` bytes into `into`, waiting until `deadline` at the most (none: for ever).
reading read_exactly(int fd, std::size_t size, std::optional<clock::time_point> deadline, char* into) {
    for (std::size_t got = 0; got < size;) {
        if (deadline) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - clock::now()).count();
            if (left <= 0) return reading::late;
            pollfd p{fd, POLLIN, 0};
            const int ready = poll(&p, 1, int(std::min<long long>(left, 1000)));
            if (ready == 0 || (ready < 0 && errno == EINTR)) continue;
            if (ready < 0) return reading::ended;
        }
        const ssize_t n = read(fd, into + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return reading::ended;
        got += std::size_t(n);
    }
    return reading::done;
}

reading read_message(int fd, std::optional<clock::time_point> deadline, std::string& text) {
    std::uint64_t size = 0;
    if (const auto r = read_exactly(fd, sizeof size, deadline, reinterpret_cast<char*>(&size)); r != reading::done)
        return r;
    text.assign(std::size_t(size), '\0');
    return read_exactly(fd, text.size(), deadline, text.data());
}

// The worker's side: each case it is sent ({"file", "doc"}), parsed again by the registry that
// parsed it here, run in the worker; the outcome sent back. Ends when the request pipe closes.
[[noreturn]] void serve_cases(int requests, int replies, const runner_registry& registry) {
    for (std::string request; read_message(requests, std::nullopt, request) == reading::done;) {
        const auto doc = nlohmann::json::parse(request);
        const case_spec spec = parse_case(doc.at("doc"), doc.at("file").get<std::string>(), registry);
        std::string reply;
        try {
            reply = json_text(nlohmann::json(run_in_this_process(spec, *registry.find(spec.layer))));
        } catch (const std::exception& e) {
            reply = json_text(nlohmann::json(failed_case(spec, e.what())));
        }
        if (!write_message(replies, reply)) std::_Exit(1);
    }
    std::exit(0);  // a normal end: a sanitizer's leak check covers the cases
}

// The parent's side of one worker process.
class case_worker {
  public:
    // Forks the worker; nullptr (and `why`) if the system refuses.
    static std::unique_ptr<case_worker> start(const runner_registry& registry, std::string& why) {
        std::signal(SIGPIPE, SIG_IGN);  // a request to a worker that died fails instead of ending us
        std::cout.flush();  // else the worker would print what this process has buffered again
        std::cerr.flush();
        std::fflush(nullptr);
        int to_worker[2], from_worker[2];
        if (pipe(to_worker) != 0) return refused("could not make a pipe for the cases' process", why);
        if (pipe(from_worker) != 0) {
            close(to_worker[0]), close(to_worker[1]);
            return refused("could not make a pipe for the cases' process", why);
        }
        const pid_t parent = getpid();
        const pid_t pid = fork();
        if (pid == 0) {
            // The worker ends with this process, however it ends (killed by CI, say): the time
            // limit is this process's to enforce, so an orphan would run a hung case forever.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) std::_Exit(1);  // it ended before the line above
            close(to_worker[1]), close(from_worker[0]);
            serve_cases(to_worker[0], from_worker[1], registry);
        }
        close(to_worker[0]), close(from_worker[1]);
        if (pid < 0) {
            close(to_worker[1]), close(from_worker[0]);
            return refused("could not start a process for the cases", why);
        }
        return std::unique_ptr<case_worker>(new case_worker(pid, to_worker[1], from_worker[0], &registry));
    }

    ~case_worker() { finish(); }

    const runner_registry* registry() const { return registry_; }

    // Sends the case, waits for its outcome until `deadline`: the outcome's text, or nothing
    // if the worker died (it is then ended) or was late (it is then killed).
    reading run(const case_spec& spec, clock::time_point deadline, std::string& outcome) {
        const nlohmann::json request{{"file", spec.file}, {"doc", spec.source}};
        if (!write_message(requests_, json_text(request))) return reading::ended;
        return read_message(replies_, deadline, outcome);
    }

    // Ends the worker (killed first if `kill_it`); its wait status (0 if it had ended).
    int finish(bool kill_it = false) {
        if (pid_ <= 0) return 0;
        if (kill_it) kill(pid_, SIGKILL);
        close(requests_), close(replies_);  // a live worker reads the end of its requests and exits
        int status = 0;
        while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
        return status;
    }

  private:
    case_worker(pid_t pid, int requests, int replies, const runner_registry* registry)
        : pid_(pid), requests_(requests), replies_(replies), registry_(registry) {}

    static std::unique_ptr<case_worker> refused(const std::string& what, std::string& why) {
        why = what + ": " + std::strerror(errno);
        return nullptr;
    }

    pid_t pid_;
    int requests_, replies_;
    const runner_registry* registry_;
};

std::unique_ptr<case_worker> worker;  // the harness runs one case at a time
int earlier_ending = 0;               // a worker's bad wait status, kept for finish_simulator_cases

// Ends the worker (killed first if `kill_it`): its wait status.
int end_worker(bool kill_it = false) {
    const int status = worker->finish(kill_it);
    worker.reset();
    return status;
}

}  // namespace

std::string seconds_as_given(double seconds) {
    std::ostringstream given;  // 0.5 stays 0.5, 1000000 stays 1000000 (the limit's largest)
    given << std::setprecision(12) << seconds;
    return given.str();
}

std::string describe_wait_status(int status) {
    if (WIFSIGNALED(status))
        return "died of signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
    return "ended with exit status " + std::to_string(WEXITSTATUS(status));
}

case_outcome run_in_this_process(const case_spec& spec, const layer_runner& runner) {
    const auto start = clock::now();
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
            out.message +=
                " (every rank must refuse with \"" + *spec.expected_error + "\"; refused: [" + refused + "])";
        }
    }
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return out;
}

case_outcome run_on_simulator(const case_spec& spec, const layer_runner& runner, double time_limit_seconds) {
    if (spec.registry == nullptr) return run_in_this_process(spec, runner);  // not parsed: cannot be sent
    const auto start = clock::now();
    if (worker && worker->registry() != spec.registry) {  // another registry: a worker of its own
        const int ending = end_worker();
        if (earlier_ending == 0) earlier_ending = ending;
    }
    if (!worker) {
        std::string why;
        worker = case_worker::start(*spec.registry, why);
        if (!worker) return failed_case(spec, why);
    }
    std::string text;
    const auto deadline =
        start + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(time_limit_seconds));
    const reading r = worker->run(spec, deadline, text);
    case_outcome out;
    if (r == reading::done) {
        try {
            out = nlohmann::json::parse(text).get<case_outcome>();
        } catch (const std::exception& e) {
            out = failed_case(spec, std::string("the process running the case sent an unreadable result: ") + e.what());
        }
        // The worker ran the document: a spec changed after parsing would be judged as it was.
        const case_outcome sent = outcome_for(spec);
        if (out.name != sent.name || out.layer != sent.layer || out.world_size != sent.world_size ||
            out.dtype_name != sent.dtype_name || out.expects_error != sent.expects_error)
            throw std::logic_error("run_on_simulator: case " + spec.name +
                                   " differs from the document it was parsed from; parse the changed document");
    } else if (r == reading::late) {
        end_worker(true);
        out = failed_case(spec, "exceeded the time limit of " + seconds_as_given(time_limit_seconds) +
                                    " s, still running, without the simulator detecting a deadlock (a rank computes or "
                                    "spins forever, or the case needs more time: see --time-limit); its process was killed");
    } else {
        out = failed_case(spec, "the process running the case " + describe_wait_status(end_worker()) +
                                    " before it sent its result");
    }
    out.seconds = std::chrono::duration<double>(clock::now() - start).count();
    return out;
}

int finish_simulator_cases() {
    const int ending = worker ? end_worker() : 0;
    const int first = earlier_ending != 0 ? earlier_ending : ending;
    earlier_ending = 0;
    return first;
}

}  // namespace distdl::verify
