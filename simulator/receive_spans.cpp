#include "simulator/receive_spans.hpp"

#include <algorithm>

namespace distdl::sim {

std::vector<receive_spans::span>::const_iterator receive_spans::first_ending_after(std::uintptr_t at) const {
    // Disjoint and sorted by begin, so sorted by end too.
    return std::upper_bound(spans_.begin(), spans_.end(), at,
                            [](std::uintptr_t a, const span& s) { return a < s.end; });
}

const void* receive_spans::overlapping(const void* begin, std::size_t bytes) const {
    if (bytes == 0) return nullptr;
    const auto lo = reinterpret_cast<std::uintptr_t>(begin);
    const auto it = first_ending_after(lo);
    return it != spans_.end() && it->begin < lo + bytes ? it->owner : nullptr;
}

void receive_spans::make_room() {
    if (spans_.size() == spans_.capacity()) spans_.reserve(std::max<std::size_t>(8, 2 * spans_.capacity()));
}

void receive_spans::add(const void* begin, std::size_t bytes, const void* owner) {
    if (bytes == 0) return;
    const auto lo = reinterpret_cast<std::uintptr_t>(begin);
    spans_.insert(first_ending_after(lo), {lo, lo + bytes, owner});
}

void receive_spans::remove(const void* begin, const void* owner) {
    // The spans are disjoint, so the owner's, which holds `begin`, is the first ending after it.
    const auto it = first_ending_after(reinterpret_cast<std::uintptr_t>(begin));
    if (it != spans_.end() && it->owner == owner) spans_.erase(it);
}

}  // namespace distdl::sim
