#include "simulator/world.hpp"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <thread>

#include "simulator/context.hpp"
#include "simulator/errors.hpp"
#include "simulator/summary.hpp"

namespace distdl::sim {

namespace {

// How many ranks may spin at once (world::spin_for_wake). In a world of a few ranks per core
// all of them: a yielding spinner gives the core to any rank with work. In a larger world
// one per core, so that most cores' time goes to ranks with work.
int spin_limit(int nranks) {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return nranks <= 8 * cores ? nranks : cores;
}

}  // namespace

rank_thread& this_rank_thread() {
    thread_local rank_thread mine;
    return mine;
}

world::world(int nranks)
    : ranks_(static_cast<std::size_t>(nranks)), running_(nranks),
      spin_limit_(spin_limit(nranks)) {}

void world::throw_if_aborted() const {
    if (ended_)
        throw world_ended("sim: the simulated world of " + std::to_string(ranks_.size()) +
                          " ranks has ended (sim::run returned); its communicators and requests can no longer be used");
    if (aborted_) throw aborted("sim: no communication after the world was aborted: " + abort_reason_);
}

bool world::mark_woken(int world_rank) {
    auto& r = ranks_[static_cast<std::size_t>(world_rank)];
    if (r.blocked) {
        if (r.woken) return false;  // already signalled
        // Not ready yet (one of several awaited messages came): it stays blocked, which saves
        // it a wake-up, and keeps it counted as blocked.
        if (!aborted_ && !(*r.ready)()) return false;
        r.woken = true;
        r.woken_hint.store(true, std::memory_order_release);
        ++running_;
    }
    return true;  // a rank not counted as blocked may be in wait_for_peers
}

std::unique_lock<std::mutex> world::lock() {
    std::unique_lock<std::mutex> held(mutex_, std::defer_lock);
    relock(held);
    return held;
}

void world::relock(std::unique_lock<std::mutex>& held) {
    // A rank that finds the lock taken yields a few times before it sleeps on it: the holder
    // keeps it for a few hundred nanoseconds, and a sleeping rank costs its wakers a futex
    // call and itself a trip through the scheduler's sleep path, as in spin_for_wake.
    constexpr int yields_before_sleeping = 50;
    for (int i = 0; i < yields_before_sleeping; ++i) {
        if (held.try_lock()) return;
        std::this_thread::yield();
    }
    held.lock();
}

void world::wait_until(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready,
                       const std::function<std::string()>& describe) {
    throw_if_aborted();
    if (ready()) return;
    auto& me = ranks_[static_cast<std::size_t>(world_rank)];
    me.blocked = true;
    me.ready = &ready;
    me.describe = &describe;
    ++blocked_;
    for (;;) {
        me.woken = false;
        me.woken_hint.store(false, std::memory_order_relaxed);
        --running_;
        check_deadlock_locked();
        if (!me.woken && !aborted_) spin_for_wake(lock, me);
        while (!me.woken && !aborted_) me.wake.wait(lock);
        if (aborted_ || ready()) break;
        // Notified for something else: block again.
    }
    if (!me.woken) ++running_;  // woken by the abort, not by mark_woken()
    me.woken = false;
    me.blocked = false;
    me.ready = nullptr;
    me.describe = nullptr;
    --blocked_;
    // A wait that was satisfied before the abort completes normally (so every member of a
    // failed collective reports the mismatch); the next call will see the abort.
    if (ready()) return;
    // Each rank throws its own exception object (rethrowing one shared object from many
    // threads would share it between them).
    if (deadlocked_) throw deadlock(abort_reason_);
    throw aborted("sim: the world was aborted while this rank waited: " + abort_reason_);
}

void world::spin_for_wake(std::unique_lock<std::mutex>& lock, rank_state& me) {
    // Long enough for a peer to finish a small message or collective step, short enough that
    // a rank waiting on a long computation soon sleeps.
    constexpr auto spin_time = std::chrono::microseconds(100);
    if (spinning_.fetch_add(1, std::memory_order_relaxed) >= spin_limit_) {
        spinning_.fetch_sub(1, std::memory_order_relaxed);
        return;
    }
    lock.unlock();
    const auto until = std::chrono::steady_clock::now() + spin_time;
    while (!me.woken_hint.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
        std::this_thread::yield();
    spinning_.fetch_sub(1, std::memory_order_relaxed);
    relock(lock);
}

void world::wait_for_peers(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready) {
    auto& me = ranks_[static_cast<std::size_t>(world_rank)];
    while (!ready()) me.wake.wait(lock);
}

void world::check_deadlock_locked() {
    if (aborted_ || running_ > 0 || blocked_ == 0) return;
    const auto states = rank_states_locked();  // each blocked or finished
    const std::size_t blocked = blocked_, n = ranks_.size();
    const std::string message = "deadlock: no rank can make progress (" +
                                (blocked == n ? "all " + std::to_string(n) + " ranks blocked"
                                              : std::to_string(blocked) + " of " + std::to_string(n) +
                                                    " ranks blocked, the others finished") +
                                "): " + summarize_ranks(states);
    if (!first_error_) first_error_ = std::make_exception_ptr(deadlock(message));
    abort_locked(true, message);
}

void world::abort_locked(bool deadlocked, const std::string& reason) {
    if (aborted_) return;  // the first reason stays
    aborted_ = true;
    deadlocked_ = deadlocked;
    abort_reason_ = reason;
    for (auto& r : ranks_) r.wake.notify_one();
}

void world::request_dropped(int world_rank, const std::string& what) noexcept {
    try {
        auto held = lock();
        --live_requests_;
        if (!ended_ && !aborted_) ++dropped_[{world_rank, what}];
    } catch (...) {
        // Only bookkeeping for a diagnostic; a destructor must not throw.
    }
}

void world::finish(int world_rank, std::exception_ptr failure) {
    auto held = lock();
    --running_;
    ranks_[static_cast<std::size_t>(world_rank)].finished = true;
    ranks_[static_cast<std::size_t>(world_rank)].failed = failure != nullptr;
    if (!failure) {
        check_deadlock_locked();  // those still blocked may have waited for this rank
        return;
    }
    bool is_aborted = false;
    bool detected_here = false;  // errors the simulator found keep their type
    try {
        std::rethrow_exception(failure);
    } catch (const aborted&) {
        is_aborted = true;
    } catch (const collective_mismatch&) {
        detected_here = true;
    } catch (const message_mismatch&) {
        detected_here = true;
    } catch (const send_buffer_modified&) {
        detected_here = true;
    } catch (const overlapping_receives&) {
        detected_here = true;
    } catch (const deadlock&) {
        detected_here = true;
    } catch (...) {
    }
    if (is_aborted && aborted_) {
        // A consequence of an earlier failure, not a cause.
        if (!fallback_error_) fallback_error_ = failure;
        return;
    }
    const std::string what = describe_exception(failure);
    if (!first_error_)
        first_error_ = detected_here ? failure : std::make_exception_ptr(rank_failure(world_rank, failure));
    abort_locked(false, "rank " + std::to_string(world_rank) + " failed: " + what);
}

void world::abort(const std::string& reason) {
    auto held = lock();
    if (!first_error_ && !aborted_) first_error_ = std::make_exception_ptr(aborted("sim: " + reason));
    abort_locked(false, reason);
}

std::vector<std::pair<int, std::string>> world::rank_states_locked() const {
    std::vector<std::pair<int, std::string>> states;
    states.reserve(ranks_.size());
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
        const rank_state& r = ranks_[i];
        states.emplace_back(static_cast<int>(i),
                            r.failed     ? "has failed"
                            : r.finished ? "has finished"
                            : r.blocked  ? (*r.describe)()
                                         : "is not blocked in the communicator (computing, or blocked elsewhere: a "
                                           "mutex, a join, a function-local static another rank is initializing)");
    }
    return states;
}

std::string world::exceed_time_limit(const std::string& seconds) {
    auto held = lock();
    // The last ranks may have finished since the limit passed: then nothing is late.
    if (std::all_of(ranks_.begin(), ranks_.end(), [](const rank_state& r) { return r.finished; })) return {};
    // After a failure, the world's reason comes first: it is what the late ranks keep from view.
    const std::string message = "sim::run: the time limit of " + seconds + " s has passed" +
                                (aborted_ ? " after the world was aborted (" + abort_reason_ + ")" : "") + ": " +
                                summarize_ranks(rank_states_locked());
    if (!aborted_ && !ended_) {
        first_error_ = std::make_exception_ptr(time_limit_exceeded(message));
        abort_locked(false, message);
    }
    return message;
}

std::string world::unfinished_communication_locked() const {
    constexpr std::size_t shown = 10;  // entries per list; the rest are counted
    std::vector<std::string> unreceived;
    std::size_t unreceived_messages = 0;
    for (const auto& context : contexts_) {
        std::vector<std::pair<std::tuple<int, int, int>, const channel*>> channels;  // in (dest, source, tag) order
        for (const auto& [key, ch] : context->channels)
            if (!ch.pending.empty()) channels.emplace_back(key, &ch);
        std::sort(channels.begin(), channels.end());
        for (const auto& [key, channel_pointer] : channels) {
            const channel& ch = *channel_pointer;
            const auto& [dest, source, tag] = key;
            const message& first = ch.pending.begin()->second;
            unreceived_messages += ch.pending.size();
            std::ostringstream out;
            out << ch.pending.size() << " message(s) from " << who(*context, source) << " to " << who(*context, dest)
                << " with tag " << tag << " on " << name(*context) << " (the first: " << first.count << " x "
                << to_string(first.type) << ")";
            unreceived.push_back(out.str());
        }
    }
    std::size_t dropped_requests = 0;
    for (const auto& entry : dropped_) dropped_requests += entry.second;
    if (unreceived.empty() && dropped_requests == 0 && live_requests_ == 0) return {};

    std::ostringstream out;
    out << "sim: the world ended with unfinished communication";
    if (!unreceived.empty()) {
        out << "; " << unreceived_messages << " message(s) sent and never received: ";
        for (std::size_t i = 0; i < unreceived.size() && i < shown; ++i) out << (i ? ", " : "") << unreceived[i];
        if (unreceived.size() > shown) out << ", and " << unreceived.size() - shown << " more channels";
    }
    if (dropped_requests > 0) {
        out << "; " << dropped_requests << " request(s) never waited on: ";
        std::size_t i = 0;
        for (const auto& [key, count] : dropped_) {
            if (i == shown) {
                out << ", and " << dropped_.size() - shown << " more";
                break;
            }
            out << (i++ ? ", " : "") << "rank " << key.first << ": " << count << " x " << key.second;
        }
    }
    if (live_requests_ > 0)
        out << "; " << live_requests_ << " request(s) still held after the world ended, never waited on";
    return out.str();
}

void world::end() {
    auto held = lock();
    ended_ = true;
    if (first_error_ || aborted_) return;  // the world already failed: that is its error
    const std::string problem = unfinished_communication_locked();
    if (!problem.empty()) first_error_ = std::make_exception_ptr(unfinished_communication(problem));
}

std::exception_ptr world::first_error() {
    auto held = lock();
    return first_error_ ? first_error_ : fallback_error_;
}

}  // namespace distdl::sim
