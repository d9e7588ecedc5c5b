#include "simulator/run.hpp"

#include <new>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>

#include "simulator/context.hpp"
#include "simulator/futex_hash.hpp"
#include "simulator/sim_communicator.hpp"
#include "simulator/world.hpp"

namespace distdl::sim {

run_report run(int nranks, const std::function<void(const std::shared_ptr<communicator>&)>& body) {
    DISTDL_REQUIRE(nranks >= 1, "sim::run: the number of ranks must be at least 1, got " << nranks);
    DISTDL_REQUIRE(static_cast<bool>(body), "sim::run: the body is empty");

    widen_futex_hash(nranks);  // nearly every rank's thread is blocked at any time
    std::shared_ptr<world> owner;
    std::vector<std::shared_ptr<communicator>> comms;
    std::vector<std::thread> threads;
    try {
        owner = std::make_shared<world>(nranks);
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
            threads.emplace_back([&body, &owner, comm = comms[static_cast<std::size_t>(r)], r] {
                this_rank_thread() = {owner.get(), r};
                try {
                    body(comm);
                } catch (...) {
                    owner->finish(r, std::current_exception());
                    return;
                }
                owner->finish(r, nullptr);
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
    for (auto& t : threads) t.join();
    owner->end();

    if (auto failure = owner->first_error()) std::rethrow_exception(failure);
    run_report report;
    for (const auto& comm : comms) report.traffic.push_back(comm->traffic());
    return report;
}

}  // namespace distdl::sim
