#include "core/detail/shared_members.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <unordered_map>

namespace distdl::detail {

namespace {

std::uint64_t hash_of(const std::vector<int>& ranks) {
    // Four independent lanes, so the multiplications overlap (a list of 4,096 ranks in ~1 us).
    constexpr std::uint64_t k = 0x9e3779b97f4a7c15ULL;
    std::uint64_t h[4] = {0x243f6a8885a308d3ULL ^ ranks.size(), 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                          0x082efa98ec4e6c89ULL};
    std::size_t i = 0;
    for (; i + 4 <= ranks.size(); i += 4)
        for (std::size_t lane = 0; lane < 4; ++lane) {
            h[lane] = (h[lane] ^ static_cast<std::uint32_t>(ranks[i + lane])) * k;
            h[lane] ^= h[lane] >> 29;
        }
    for (; i < ranks.size(); ++i) h[0] = ((h[0] ^ static_cast<std::uint32_t>(ranks[i])) * k) ^ (h[0] >> 31);
    std::uint64_t out = h[0];
    for (std::size_t lane = 1; lane < 4; ++lane) out = (out ^ h[lane]) * k ^ ((out ^ h[lane]) >> 31);
    return out;
}

// Live lists by hash. Entries whose lists died are swept when the table has doubled since the
// last sweep, so it stays proportional to the lists alive.
class member_table {
  public:
    member_list intern(std::vector<int> ranks) {
        const std::uint64_t h = hash_of(ranks);
        std::lock_guard<std::mutex> held(mutex_);
        auto range = lists_.equal_range(h);
        for (auto it = range.first; it != range.second; ++it) {
            member_list live = it->second.lock();
            if (live && *live == ranks) return live;
        }
        auto made = std::make_shared<const std::vector<int>>(std::move(ranks));
        lists_.emplace(h, made);
        if (lists_.size() > 2 * swept_size_ + 64) sweep();
        return made;
    }

    member_list iota(int n) {
        {
            std::lock_guard<std::mutex> held(mutex_);
            if (auto it = iotas_.find(n); it != iotas_.end())
                if (member_list live = it->second.lock()) return live;
        }
        std::vector<int> ranks(static_cast<std::size_t>(n));
        std::iota(ranks.begin(), ranks.end(), 0);
        member_list made = intern(std::move(ranks));
        std::lock_guard<std::mutex> held(mutex_);
        iotas_[n] = made;
        return made;
    }

  private:
    void sweep() {
        for (auto it = lists_.begin(); it != lists_.end();) it = it->second.expired() ? lists_.erase(it) : std::next(it);
        for (auto it = iotas_.begin(); it != iotas_.end();) it = it->second.expired() ? iotas_.erase(it) : std::next(it);
        swept_size_ = lists_.size();
    }

    std::mutex mutex_;
    std::unordered_multimap<std::uint64_t, std::weak_ptr<const std::vector<int>>> lists_;
    std::map<int, std::weak_ptr<const std::vector<int>>> iotas_;
    std::size_t swept_size_ = 0;
};

member_table& table() {
    static member_table* the_table = new member_table;  // never destroyed: threads still running at exit may use it
    return *the_table;
}

}  // namespace

member_list shared_members(std::vector<int> ranks) { return table().intern(std::move(ranks)); }

member_list shared_iota(int n) { return table().iota(n); }

}  // namespace distdl::detail
