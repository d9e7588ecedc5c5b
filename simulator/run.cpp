#include "simulator/run.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <numeric>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>

#include "simulator/context.hpp"
#include "simulator/futex_hash.hpp"
#include "simulator/sim_communicator.hpp"
#include "simulator/summary.hpp"
#include "simulator/world.hpp"

namespace distdl::sim {

namespace {

// The run's time limit in seconds: the option, else DISTDL_SIM_TIME_LIMIT, else none (0).
double time_limit_of(const run_options& options) {
    const auto valid = [](double s) { return s > 0 && s <= 1e6; };  // false for NaN
    if (options.time_limit != 0) {
        DISTDL_REQUIRE(valid(options.time_limit), "sim::run: run_options::time_limit must be a number of seconds "
                                                  "in (0, 1000000], or 0 for none, got "
                                                      << options.time_limit);
        return options.time_limit;
    }
    const char* text = std::getenv("DISTDL_SIM_TIME_LIMIT");
    if (text == nullptr || *text == '\0') return 0;
    // A decimal number only (strtod would also take spaces, hex, inf and nan); 0 means none.
    const std::string given = text;
    char* end = nullptr;
    const double s = std::strtod(text, &end);
    const bool decimal = given.find_first_not_of("0123456789.eE+-") == std::string::npos && *end == '\0';
    DISTDL_REQUIRE(decimal && (s == 0 || valid(s)), "sim::run: DISTDL_SIM_TIME_LIMIT must be a number of seconds "
                                                    "in (0, 1000000], or 0 for none, got \""
                                                        << given << "\"");
    return s;
}

// Which rank bodies have returned (or thrown): what the time limit waits for.
struct returns {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<char> returned;
    std::size_t count = 0;
};

// Waits for every body to return within `limit` seconds; past it aborts the world, and if a
// rank still has not returned as long again later (at least 1 s), ends the process: its thread
// cannot be stopped, and joining it would hang.
void enforce_time_limit(world& owner, returns& done, double limit) {
    const auto all_returned = [&] { return done.count == done.returned.size(); };
    std::unique_lock<std::mutex> held(done.mutex);
    if (done.changed.wait_for(held, std::chrono::duration<double>(limit), all_returned)) return;
    held.unlock();
    std::string report;
    try {
        std::ostringstream seconds;
        seconds << limit;
        report = owner.exceed_time_limit(seconds.str());
        if (report.empty()) return;  // every rank finished meanwhile
    } catch (...) {
        // No report (no memory for it?): the limit still holds.
        report = "sim::run: the time limit has passed";
        owner.abort(report);
    }
    held.lock();
    const double grace = std::max(1.0, limit);
    if (done.changed.wait_for(held, std::chrono::duration<double>(grace), all_returned)) return;
    std::vector<int> stuck;
    for (std::size_t r = 0; r < done.returned.size(); ++r)
        if (!done.returned[r]) stuck.push_back(static_cast<int>(r));
    std::fprintf(stderr,
                 "%s\nsim::run: rank(s) %s did not return within %g s after that, and a thread cannot be stopped: "
                 "ending the process\n",
                 report.c_str(), format_ranks(stuck).c_str(), grace);
    std::fflush(stderr);
    std::abort();
}

}  // namespace

run_report run(int nranks, const std::function<void(const std::shared_ptr<communicator>&)>& body,
               const run_options& options) {
    DISTDL_REQUIRE(nranks >= 1, "sim::run: the number of ranks must be at least 1, got " << nranks);
    DISTDL_REQUIRE(static_cast<bool>(body), "sim::run: the body is empty");
    const double time_limit = time_limit_of(options);

    widen_futex_hash(nranks);  // nearly every rank's thread is blocked at any time
    std::shared_ptr<world> owner;
    std::vector<std::shared_ptr<communicator>> comms;
    std::vector<std::thread> threads;
    returns done;
    try {
        owner = std::make_shared<world>(nranks);
        done.returned.assign(static_cast<std::size_t>(nranks), 0);
        std::vector<int> everyone(static_cast<std::size_t>(nranks));
        std::iota(everyone.begin(), everyone.end(), 0);
        auto world_context = std::make_shared<context_state>(0, std::move(everyone));
        owner->register_context(world_context);
        for (int r = 0; r < nranks; ++r) comms.push_back(std::make_shared<sim_communicator>(owner, world_context, r));
        threads.reserve(comms.size());
    } catch (const std::bad_alloc&) {
        throw error("sim::run: not enough memory for the state of a world of " + std::to_string(nranks) +
                    " simulated ranks");
    }
    try {
        for (int r = 0; r < nranks; ++r) {
            threads.emplace_back([&body, &owner, &done, comm = comms[static_cast<std::size_t>(r)], r] {
                this_rank_thread() = {owner.get(), r};
                std::exception_ptr failure;
                try {
                    body(comm);
                } catch (...) {
                    failure = std::current_exception();
                }
                owner->finish(r, failure);
                {
                    const std::lock_guard<std::mutex> held(done.mutex);
                    done.returned[static_cast<std::size_t>(r)] = 1;
                    ++done.count;
                }
                done.changed.notify_all();
            });
        }
    } catch (const std::system_error& e) {
        // The system refused a thread: a clear error instead of the bare errno text.
        const std::string why = "sim::run: could not start the thread of rank " + std::to_string(threads.size()) +
                                " of " + std::to_string(nranks) + " (" + e.what() +
                                "); every simulated rank is a thread of this process, and the system limits them "
                                "(ulimit -u, /proc/sys/kernel/threads-max, vm.max_map_count: two mappings per "
                                "thread, and the address space, ulimit -v, which each thread's stack, ulimit -s, "
                                "takes from)";
        owner->abort(why);
        for (auto& t : threads) t.join();
        owner->end();
        throw error(why);
    }
    if (time_limit > 0) enforce_time_limit(*owner, done, time_limit);
    for (auto& t : threads) t.join();
    owner->end();

    if (auto failure = owner->first_error()) std::rethrow_exception(failure);
    run_report report;
    for (const auto& comm : comms) report.traffic.push_back(comm->traffic());
    return report;
}

}  // namespace distdl::sim
