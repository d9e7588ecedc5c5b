#pragma once
// Storage for buffered messages, reused across messages: a message that waits for its receive
// borrows a buffer and gives it back once received, so a steady loop of sends allocates (and
// page-faults) nothing after its first iteration. Buffers are not zero-filled. Guarded by the
// world's lock; one pool per world (no global state).
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

namespace distdl::sim {

struct message_buffer {
    std::unique_ptr<unsigned char[]> bytes;
    std::size_t capacity = 0;
};

class buffer_pool {
  public:
    // A buffer of at least `size` bytes: capacities are powers of two (at least 64 bytes), so
    // that finding a kept one is a vector pop, with no search and no allocation.
    message_buffer take(std::size_t size);
    // Keeps the buffer for later messages (the pool holds at most `kept_buffers`, the largest:
    // enough for every message of an all-to-all exchange among 64 ranks to be in storage).
    void give(message_buffer buffer);

  private:
    static constexpr std::size_t kept_buffers = 4096;
    static constexpr unsigned smallest_class = 6;  // 64 bytes
    std::array<std::vector<std::unique_ptr<unsigned char[]>>, 64> free_;  // by log2(capacity)
    std::size_t kept_ = 0;
};

}  // namespace distdl::sim
