#include "simulator/buffer_pool.hpp"

#include <utility>

namespace distdl::sim {

message_buffer buffer_pool::take(std::size_t size) {
    // A much larger buffer is left for a message of its size (else that one would allocate).
    auto fit = free_.lower_bound(size);
    if (fit == free_.end() || fit->first > 2 * size + 4096) return {std::unique_ptr<unsigned char[]>(new unsigned char[size]), size};
    message_buffer found{std::move(fit->second), fit->first};
    free_.erase(fit);
    return found;
}

void buffer_pool::give(message_buffer buffer) {
    if (buffer.capacity == 0) return;
    if (free_.size() >= kept_buffers) {
        if (free_.begin()->first >= buffer.capacity) return;
        free_.erase(free_.begin());
    }
    free_.emplace(buffer.capacity, std::move(buffer.bytes));
}

}  // namespace distdl::sim
