#include "simulator/world.hpp"

#include <sstream>

#include "simulator/errors.hpp"

namespace distdl::sim {

world::world(int nranks) : ranks_(static_cast<std::size_t>(nranks)), running_(nranks) {}

void world::throw_if_aborted() const {
    if (aborted_) throw aborted("sim: no communication after the world was aborted: " + abort_reason_);
}

void world::notify(int world_rank) { ranks_[static_cast<std::size_t>(world_rank)].wake.notify_one(); }

void world::wait_until(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready,
                       const std::function<std::string()>& describe) {
    throw_if_aborted();
    if (ready()) return;
    auto& me = ranks_[static_cast<std::size_t>(world_rank)];
    me.blocked = true;
    me.ready = &ready;
    me.describe = &describe;
    --running_;
    check_deadlock_locked();
    while (!aborted_ && !ready()) me.wake.wait(lock);
    me.blocked = false;
    me.ready = nullptr;
    me.describe = nullptr;
    ++running_;
    // A wait that was satisfied before the abort completes normally (so every member of a
    // failed collective reports the mismatch); the next call will see the abort.
    if (ready()) return;
    // Each rank throws its own exception object (rethrowing one shared object from many
    // threads would share it between them).
    if (deadlocked_) throw deadlock(abort_reason_);
    throw aborted("sim: the world was aborted while this rank waited: " + abort_reason_);
}

void world::check_deadlock_locked() {
    if (aborted_ || running_ > 0) return;
    bool any_blocked = false;
    for (const auto& r : ranks_) {
        if (!r.blocked) continue;
        if ((*r.ready)()) return;  // notified, about to wake: not stuck
        any_blocked = true;
    }
    if (!any_blocked) return;  // every rank finished
    std::ostringstream out;
    out << "deadlock: no rank can make progress: ";
    for (std::size_t i = 0; i < ranks_.size(); ++i) {
        out << (i ? "; " : "") << "rank " << i << ' ';
        if (ranks_[i].blocked) out << (*ranks_[i].describe)();
        else out << "has finished";
    }
    const std::string message = out.str();
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

void world::finish(int world_rank, std::exception_ptr failure) {
    auto held = lock();
    ranks_[static_cast<std::size_t>(world_rank)].finished = true;
    --running_;
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

std::exception_ptr world::first_error() {
    auto held = lock();
    return first_error_ ? first_error_ : fallback_error_;
}

}  // namespace distdl::sim
