#pragma once
// One simulated run: the mutex that guards every context of the run, a condition variable per
// rank, the bookkeeping that finds deadlocks, the abort state, and what the end-of-world check
// needs (every context, requests not yet waited on). Owned (shared) by sim::run and by every
// communicator and request of the run; nothing here is global, so worlds run side by side.
//
// Deadlock detection without scanning: `running_` counts ranks that are neither blocked nor
// finished, where a blocked rank that has been woken counts as running (mark_woken() moves it
// back before it even wakes). A notification may be spurious; the rank then re-checks its
// condition and blocks again. When `running_` drops to zero while some rank is blocked, no rank
// can ever notify another: that is a deadlock, found in O(1) at the moment it happens (the
// diagnostic is built only then). No polling or timeout is involved.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simulator/buffer_pool.hpp"
#include "simulator/receive_spans.hpp"

namespace distdl::sim {

struct context_state;

// A deferred message (context.hpp, struct message) of one sending rank: where it waits.
struct deferred_send {
    std::shared_ptr<context_state> context;
    std::tuple<int, int, int> channel;  // (dest, source, tag) in the context
    std::uint64_t number;               // the message's number in its channel
};

// How the deferred messages of a world have moved so far (a test hook): straight from the send
// buffer into the receive buffer (one copy), or through pooled storage (two copies).
struct deferred_moves {
    std::size_t straight = 0;
    std::size_t buffered = 0;
};

class world;

// The rank whose body the calling thread runs (sim::run sets it in each rank's thread): no
// world and rank -1 in any other thread.
struct rank_thread {
    const world* owner = nullptr;
    int rank = -1;
};
rank_thread& this_rank_thread();

class world {
  public:
    explicit world(int nranks);
    world(const world&) = delete;
    world& operator=(const world&) = delete;

    int size() const { return static_cast<int>(ranks_.size()); }
    std::unique_lock<std::mutex> lock();
    // Takes the lock back after the caller let it go (as lock() takes it).
    void relock(std::unique_lock<std::mutex>& held);

    // --- The caller holds the lock. ---

    // Throws sim::world_ended once sim::run has returned, sim::aborted once the world was
    // aborted: no communication after either.
    void throw_if_aborted() const;
    int next_context_id() { return next_context_id_++; }
    // Keeps the context for the end-of-world check (messages never received).
    void register_context(std::shared_ptr<context_state> context) { contexts_.push_back(std::move(context)); }
    // Wakes a rank that may be able to continue (a rank blocked in wait_until only once its
    // ready() holds), in two steps, so that the signal can be sent after the lock is released (a
    // rank signalled under the lock wakes only to block on it again): marks the rank woken and
    // says whether it must be signalled (false only when it already was or is not ready); then
    // signal(), with or without the lock.
    bool mark_woken(int world_rank);
    void signal(int world_rank) { ranks_[static_cast<std::size_t>(world_rank)].wake.notify_one(); }
    // Blocks `world_rank` until ready() holds (evaluated under the lock). While it waits,
    // describe() says what for ("waits in barrier() on ...") if a deadlock is reported. Throws
    // sim::deadlock if this wait is part of a deadlock, sim::aborted if the world is aborted.
    void wait_until(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready,
                    const std::function<std::string()>& describe);
    // Blocks `world_rank` until ready() holds, for waits that cannot be part of a deadlock
    // (peers finishing work that needs no other rank) and must outlast an abort (those peers
    // may still be reading this rank's buffers). The rank counts as running meanwhile.
    void wait_for_peers(std::unique_lock<std::mutex>& lock, int world_rank, const std::function<bool()>& ready);
    // Storage for buffered messages.
    buffer_pool& pool() { return pool_; }
    // The deferred messages the rank sent that are still in its send buffers (only that rank's
    // thread changes its list).
    std::vector<deferred_send>& deferred(int world_rank) { return ranks_[static_cast<std::size_t>(world_rank)].deferred; }
    deferred_moves& moves_of_deferred() { return deferred_moves_; }
    // The buffers of the rank's pending plain receives.
    receive_spans& receiving(int world_rank) { return ranks_[static_cast<std::size_t>(world_rank)].receiving; }
    // A request was created / was completed by wait_all.
    void request_created() { ++live_requests_; }
    void request_waited() { --live_requests_; }

    // --- These take the lock themselves. ---

    // A request was destroyed without being waited on (`what`: "a receive from rank 1 with
    // tag 5 on context 0"); reported at the end of the world.
    void request_dropped(int world_rank, const std::string& what) noexcept;
    // The rank's body returned (failure null) or threw; a failure aborts the world.
    void finish(int world_rank, std::exception_ptr failure);
    // Aborts the world for a reason outside any rank (e.g. a thread could not start).
    void abort(const std::string& reason);
    // sim::run's time limit (`seconds`, as given) has passed: returns what each rank is doing,
    // and unless the world already failed makes that its error (sim::time_limit_exceeded) and
    // aborts it, waking the ranks blocked in the communicator. Returns "" and does nothing if
    // every rank has finished meanwhile.
    std::string exceed_time_limit(const std::string& seconds);
    // After every rank's body has returned: the world has ended (later calls throw
    // sim::world_ended). Unless the world already failed, messages sent and never received and
    // requests never waited on become its error, sim::unfinished_communication.
    void end();
    // What sim::run rethrows, or null if the run succeeded.
    std::exception_ptr first_error();

  private:
    struct rank_state {
        std::condition_variable wake;
        bool blocked = false;
        bool woken = false;  // blocked, but notified since it last blocked (counted as running)
        std::atomic<bool> woken_hint{false};  // `woken`, readable without the lock (spin_for_wake)
        const std::function<bool()>* ready = nullptr;
        const std::function<std::string()>* describe = nullptr;
        std::vector<deferred_send> deferred;
        receive_spans receiving;
        bool finished = false;  // its body has returned or thrown
        bool failed = false;    // thrown
    };

    void abort_locked(bool deadlocked, const std::string& reason);
    // Before a blocked rank sleeps: with the lock released, watches for a notification for a
    // few microseconds, yielding the core meanwhile. A notification that comes in that time
    // costs neither side a futex call or a context switch through the kernel's sleep path,
    // which dominates a small message or collective. At most `spin_limit_` ranks spin at once
    // (all in a world of a few ranks per core, else one per core).
    void spin_for_wake(std::unique_lock<std::mutex>& lock, rank_state& me);
    void check_deadlock_locked();
    // What each rank is doing: what it waits for when blocked, "has finished", or neither.
    std::vector<std::pair<int, std::string>> rank_states_locked() const;
    std::string unfinished_communication_locked() const;

    std::mutex mutex_;
    std::vector<rank_state> ranks_;
    int running_;      // ranks neither blocked (un-notified) nor finished; not yet started counts as running
    int blocked_ = 0;  // ranks inside wait_until
    std::atomic<int> spinning_{0};
    int spin_limit_;
    int next_context_id_ = 1;  // 0 is the world communicator
    std::vector<std::shared_ptr<context_state>> contexts_;
    buffer_pool pool_;
    deferred_moves deferred_moves_;
    std::size_t live_requests_ = 0;                           // created and neither waited on nor dropped
    std::map<std::pair<int, std::string>, std::size_t> dropped_;  // (world rank, what) -> requests never waited on

    bool ended_ = false;
    bool aborted_ = false;
    bool deadlocked_ = false;  // the abort was a detected deadlock: blocked ranks throw sim::deadlock
    std::string abort_reason_;
    std::exception_ptr first_error_;
    std::exception_ptr fallback_error_;  // a sim::aborted, used only if nothing else failed
};

}  // namespace distdl::sim
