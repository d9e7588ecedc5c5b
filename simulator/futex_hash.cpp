#include "simulator/futex_hash.hpp"

#include <mutex>

#if defined(__linux__)
#include <sys/prctl.h>
#endif

namespace distdl::sim {

void widen_futex_hash(int threads) {
#if defined(__linux__)
    // From linux/prctl.h (6.16), which older headers lack.
    constexpr int pr_futex_hash = 78;
    constexpr unsigned long set_slots = 1, get_slots = 2;
    constexpr long most_slots = 1 << 16;
    long wanted = 16;  // four slots per thread, as the kernel's own default per CPU
    while (wanted < 4L * threads && wanted < most_slots) wanted *= 2;
    static std::mutex mutex;  // one resize at a time; concurrent worlds only ever grow it
    std::lock_guard<std::mutex> held(mutex);
    const int slots = prctl(pr_futex_hash, get_slots, 0, 0, 0);
    if (slots < 0 || slots >= wanted) return;  // unsupported, or large enough (0: none made yet)
    prctl(pr_futex_hash, set_slots, static_cast<unsigned long>(wanted), 0, 0);
#else
    (void)threads;
#endif
}

}  // namespace distdl::sim
