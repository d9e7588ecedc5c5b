#pragma once
// Linux keeps a per-process hash of the futexes threads block on; since Linux 6.16 its default
// size follows the number of CPUs (16 slots on a 2-core machine), not the number of threads.
// A simulated world of n ranks keeps nearly all its n threads blocked, so every wake-up would
// walk a chain of about n/16 waiters: O(n^2) in all. Before starting its threads, sim::run
// asks for a hash sized for them (prctl PR_FUTEX_HASH). Elsewhere, or on kernels without the
// setting, this does nothing (their futex hash is global and sized by the machine).
namespace distdl::sim {

// Makes the process's futex hash at least large enough for `threads` blocked threads (it
// never shrinks it). Thread-safe; errors are ignored (it is only a speed-up).
void widen_futex_hash(int threads);

}  // namespace distdl::sim
