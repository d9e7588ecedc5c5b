#pragma once
// One simulated run: the mutex that guards every context of the run, a condition variable per
// rank, the bookkeeping that finds deadlocks, and the abort state. Owned (shared) by sim::run
// and by every communicator of the run; nothing here is global, so worlds run side by side.
//
// Deadlock detection: `running_` counts ranks that are neither blocked nor finished. When it
// drops to zero (a rank blocks or finishes), every blocked rank's readiness is re-evaluated
// under the mutex; if none can continue, the world is aborted with sim::deadlock. A rank that
// was notified but has not yet woken is still "blocked" but ready, so it is never mistaken for
// a deadlock, and no polling or timeout is involved.
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace distdl::sim {

class world {
  public:
    explicit world(int nranks);
    world(const world&) = delete;
    world& operator=(const world&) = delete;

    int size() const { return static_cast<int>(ranks_.size()); }
    std::unique_lock<std::mutex> lock() { return std::unique_lock<std::mutex>(mutex_); }

    // --- The caller holds the lock. ---

    // Throws sim::aborted once the world was aborted: no communication after that.
    void throw_if_aborted() const;
    int next_context_id() { return next_context_id_++; }
    // Wakes a rank that may be able to continue.
    void notify(int world_rank);
    // Blocks `world_rank` until ready() holds (evaluated under the lock). While it waits,
    // describe() says what for ("waits in barrier() on ...") if a deadlock is reported. Throws
    // sim::deadlock if this wait is part of a deadlock, sim::aborted if the world is aborted.
    void wait_until(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready,
                    const std::function<std::string()>& describe);

    // --- These take the lock themselves. ---

    // The rank's body returned (failure null) or threw; a failure aborts the world.
    void finish(int world_rank, std::exception_ptr failure);
    // Aborts the world for a reason outside any rank (e.g. a thread could not start).
    void abort(const std::string& reason);
    // What sim::run rethrows, or null if the run succeeded.
    std::exception_ptr first_error();

  private:
    struct rank_state {
        std::condition_variable wake;
        bool blocked = false;
        bool finished = false;
        const std::function<bool()>* ready = nullptr;
        const std::function<std::string()>* describe = nullptr;
    };

    void abort_locked(bool deadlocked, const std::string& reason);
    void check_deadlock_locked();

    std::mutex mutex_;
    std::vector<rank_state> ranks_;
    int running_;  // ranks neither blocked nor finished (a rank not yet started counts as running)
    int next_context_id_ = 1;  // 0 is the world communicator

    bool aborted_ = false;
    bool deadlocked_ = false;  // the abort was a detected deadlock: blocked ranks throw sim::deadlock
    std::string abort_reason_;
    std::exception_ptr first_error_;
    std::exception_ptr fallback_error_;  // a sim::aborted, used only if nothing else failed
};

}  // namespace distdl::sim
