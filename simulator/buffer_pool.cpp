#include "simulator/buffer_pool.hpp"

#include <algorithm>
#include <utility>

namespace distdl::sim {

message_buffer buffer_pool::take(std::size_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->capacity >= size && (best == free_.end() || it->capacity < best->capacity)) best = it;
    if (best == free_.end()) return {std::unique_ptr<unsigned char[]>(new unsigned char[size]), size};
    message_buffer found = std::move(*best);
    *best = std::move(free_.back());
    free_.pop_back();
    return found;
}

void buffer_pool::give(message_buffer buffer) {
    if (buffer.capacity == 0) return;
    if (free_.size() < kept_buffers) {
        free_.push_back(std::move(buffer));
        return;
    }
    auto smallest = std::min_element(free_.begin(), free_.end(), [](const message_buffer& a, const message_buffer& b) {
        return a.capacity < b.capacity;
    });
    if (smallest->capacity < buffer.capacity) *smallest = std::move(buffer);
}

}  // namespace distdl::sim
