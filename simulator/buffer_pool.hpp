#pragma once
// Storage for buffered messages, reused across messages: a message that waits for its receive
// borrows a buffer and gives it back once received, so a steady loop of sends allocates (and
// page-faults) nothing after its first iteration. Buffers are not zero-filled. Guarded by the
// world's lock; one pool per world (no global state).
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
    // A buffer of at least `size` bytes: the smallest pooled one that fits, else a new one.
    message_buffer take(std::size_t size);
    // Keeps the buffer for later messages (the pool holds at most `kept_buffers`, the largest).
    void give(message_buffer buffer);

  private:
    static constexpr std::size_t kept_buffers = 64;
    std::vector<message_buffer> free_;
};

}  // namespace distdl::sim
