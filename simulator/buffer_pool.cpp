#include "simulator/buffer_pool.hpp"

#include <bit>
#include <utility>

namespace distdl::sim {

message_buffer buffer_pool::take(std::size_t size) {
    unsigned k = size <= 1 ? 0u : static_cast<unsigned>(std::bit_width(size - 1));  // 2^k >= size
    if (k < smallest_class) k = smallest_class;
    const std::size_t capacity = std::size_t{1} << k;
    auto& kept = free_[k];
    if (kept.empty()) return {std::unique_ptr<unsigned char[]>(new unsigned char[capacity]), capacity};
    message_buffer found{std::move(kept.back()), capacity};
    kept.pop_back();
    --kept_;
    return found;
}

void buffer_pool::give(message_buffer buffer) {
    if (buffer.capacity == 0) return;
    const unsigned k = static_cast<unsigned>(std::bit_width(buffer.capacity)) - 1;  // 2^k <= capacity
    if (kept_ >= kept_buffers) {
        // Full: the smallest kept buffer makes room, unless this one is no larger.
        unsigned smallest = 0;
        while (free_[smallest].empty()) ++smallest;
        if (smallest >= k) return;
        free_[smallest].pop_back();
        --kept_;
    }
    free_[k].push_back(std::move(buffer.bytes));
    ++kept_;
}

}  // namespace distdl::sim
