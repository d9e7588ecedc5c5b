#include "simulator/collective.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <sstream>

#include "core/error.hpp"
#include "simulator/sum_kernels.hpp"
#include "simulator/summary.hpp"

namespace distdl::sim {

std::string to_string(collective_op op) {
    switch (op) {
        case collective_op::broadcast: return "broadcast";
        case collective_op::reduce_sum: return "reduce_sum";
        case collective_op::all_reduce_sum: return "all_reduce_sum";
        case collective_op::all_gather: return "all_gather";
        case collective_op::all_to_all_v: return "all_to_all_v";
        case collective_op::barrier: return "barrier";
    }
    return "unknown collective";
}

std::string describe(const collective_call& call) {
    std::ostringstream out;
    out << (call.nonblocking ? "i" : "") << to_string(call.op) << '(';
    switch (call.op) {
        case collective_op::broadcast:
        case collective_op::reduce_sum:
            out << call.count << " x " << to_string(call.type) << ", root " << call.root;
            break;
        case collective_op::all_reduce_sum:
        case collective_op::all_gather:
            out << call.count << " x " << to_string(call.type);
            break;
        case collective_op::all_to_all_v:
            out << to_string(call.type) << ", send counts " << format_long_list(call.send_counts) << ", receive counts "
                << format_long_list(call.recv_counts);
            break;
        case collective_op::barrier: break;
    }
    out << ')';
    // The simulator runs it at its call: a member that waits for a message before it calls
    // ibroadcast leaves the others here, where MPI would let them go on to their waits.
    if (call.nonblocking) out << " (run at its call by the simulator, which MPI need not do)";
    return out.str();
}

bool same_signature(const collective_call& a, const collective_call& b) {
    if (a.op != b.op) return false;
    switch (a.op) {
        case collective_op::broadcast:
        case collective_op::reduce_sum: return a.type == b.type && a.count == b.count && a.root == b.root;
        case collective_op::all_reduce_sum:
        case collective_op::all_gather: return a.type == b.type && a.count == b.count;
        case collective_op::all_to_all_v: return a.type == b.type;
        case collective_op::barrier: return true;
    }
    return false;
}

std::vector<std::string> count_mismatches(const std::vector<std::optional<collective_call>>& calls) {
    std::vector<std::string> problems;
    if (calls.empty() || calls.front()->op != collective_op::all_to_all_v) return problems;
    for (std::size_t i = 0; i < calls.size(); ++i) {
        for (std::size_t j = 0; j < calls.size(); ++j) {
            const std::size_t sent = calls[i]->send_counts[j];
            const std::size_t expected = calls[j]->recv_counts[i];
            if (sent == expected) continue;
            std::ostringstream out;
            out << "rank " << i << " sends " << sent << " to rank " << j << ", which expects " << expected;
            problems.push_back(out.str());
        }
    }
    return problems;
}

namespace {

// Staging storage, not zero-filled: every byte is written before it is read.
struct bytes {
    bytes() = default;
    explicit bytes(std::size_t n) : data_(std::make_unique_for_overwrite<unsigned char[]>(n)), size_(n) {}
    unsigned char* data() { return data_.get(); }
    const unsigned char* data() const { return data_.get(); }
    std::size_t size() const { return size_; }

  private:
    std::unique_ptr<unsigned char[]> data_;
    std::size_t size_ = 0;
};

// Copies that tolerate null pointers for empty ranges (memcpy does not).
bytes stage(const void* src, std::size_t n) {
    bytes out(n);
    if (n > 0) std::memcpy(out.data(), src, n);
    return out;
}

void put(void* dst, const unsigned char* src, std::size_t n) {
    if (n > 0) std::memcpy(dst, src, n);
}

// Whether `size` bytes at `first` share a byte with `span`.
bool overlap(const void* first, std::size_t size, const written_span& span) {
    if (size == 0 || span.size == 0) return false;
    const auto a = reinterpret_cast<std::uintptr_t>(first), b = reinterpret_cast<std::uintptr_t>(span.first);
    return a < b + span.size && b < a + size;
}

}  // namespace

void execute(const std::vector<std::optional<collective_call>>& calls) {
    const auto& first = *calls.front();
    const std::size_t n = calls.size();
    const std::size_t elem = size_of(first.type);
    const std::size_t block = first.count * elem;
    // Sources are staged before any destination is written, so buffers that happen to alias
    // (a rank's send and another's receive) still give the result of a real transfer.
    switch (first.op) {
        case collective_op::broadcast: {
            const bytes data = stage(calls[static_cast<std::size_t>(first.root)]->send, block);
            for (std::size_t r = 0; r < n; ++r)
                if (static_cast<int>(r) != first.root) put(calls[r]->recv, data.data(), block);
            break;
        }
        case collective_op::reduce_sum:
        case collective_op::all_reduce_sum: {
            // One pass over the terms, folded in rank order.
            bytes sum(block);
            std::vector<const void*> terms(n);
            for (std::size_t r = 0; r < n; ++r) terms[r] = calls[r]->send;
            fold_sum(sum.data(), terms.data(), n, first.count, first.type);
            for (std::size_t r = 0; r < n; ++r) {
                if (first.op == collective_op::reduce_sum && static_cast<int>(r) != first.root) continue;
                put(calls[r]->recv, sum.data(), block);
            }
            break;
        }
        case collective_op::all_gather: {
            bytes all(block * n);
            for (std::size_t r = 0; r < n; ++r)
                if (block > 0) std::memcpy(all.data() + r * block, calls[r]->send, block);
            for (std::size_t r = 0; r < n; ++r) put(calls[r]->recv, all.data(), all.size());
            break;
        }
        case collective_op::all_to_all_v: {
            // Staged only where some send buffer overlaps some receive buffer (otherwise every
            // source stays as it is while the destinations are written).
            std::vector<std::size_t> extents(n);
            std::vector<written_span> written(n);
            for (std::size_t i = 0; i < n; ++i) {
                const auto& c = *calls[i];
                for (std::size_t j = 0; j < n; ++j) extents[i] = std::max(extents[i], c.send_displs[j] + c.send_counts[j]);
                written[i] = written_bytes(c, static_cast<int>(i), n);
            }
            bool aliased = false;
            for (std::size_t i = 0; i < n && !aliased; ++i)
                for (std::size_t j = 0; j < n && !aliased; ++j) aliased = overlap(calls[i]->send, extents[i] * elem, written[j]);
            std::vector<bytes> staged(aliased ? n : 0);
            for (std::size_t i = 0; i < staged.size(); ++i) staged[i] = stage(calls[i]->send, extents[i] * elem);
            for (std::size_t i = 0; i < n; ++i) {
                const auto* from = aliased ? staged[i].data() : static_cast<const unsigned char*>(calls[i]->send);
                for (std::size_t j = 0; j < n; ++j) {
                    const auto& to = *calls[j];
                    const std::size_t len = calls[i]->send_counts[j] * elem;
                    if (len == 0) continue;
                    put(static_cast<unsigned char*>(to.recv) + to.recv_displs[i] * elem,
                        from + calls[i]->send_displs[j] * elem, len);
                }
            }
            break;
        }
        case collective_op::barrier: break;
    }
}

written_span written_bytes(const collective_call& call, int rank, std::size_t members) {
    const std::size_t elem = size_of(call.type);
    std::size_t size = 0;
    switch (call.op) {
        case collective_op::broadcast: size = rank == call.root ? 0 : call.count * elem; break;
        case collective_op::reduce_sum: size = rank == call.root ? call.count * elem : 0; break;
        case collective_op::all_reduce_sum: size = call.count * elem; break;
        case collective_op::all_gather: size = call.count * elem * members; break;
        case collective_op::all_to_all_v:
            for (std::size_t j = 0; j < call.recv_counts.size() && j < call.recv_displs.size(); ++j)
                if (call.recv_counts[j] > 0) size = std::max(size, (call.recv_displs[j] + call.recv_counts[j]) * elem);
            break;
        case collective_op::barrier: break;
    }
    if (call.recv == nullptr || size == 0) return {};
    return {call.recv, size};
}

namespace {

constexpr std::size_t cache_line = 64;
// Work units of execute_share: a broadcast's chunk is read once and then written to every
// receiver while it is in the first-level cache; a sum's chunk is folded into the first
// receiver and copied from there to the others while it is (measured: 16 KiB beat 8 and 64).
constexpr std::size_t copy_chunk_bytes = 32 * 1024;
constexpr std::size_t sum_chunk_bytes = 16 * 1024;

// Member `rank`'s elements [lo, hi) of `count`, balanced over `n` members in whole cache lines
// of `anchor`, a destination buffer (other buffers usually share its alignment): no two
// members write the same line. The part before anchor's first line boundary goes to member 0.
std::pair<std::size_t, std::size_t> share_of(std::size_t count, std::size_t elem, std::size_t n, std::size_t rank,
                                             const void* anchor) {
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(anchor) % cache_line;
    const std::size_t head_bytes = misaligned == 0 ? 0 : cache_line - misaligned;
    const std::size_t head = head_bytes % elem == 0 ? std::min(count, head_bytes / elem) : 0;
    const std::size_t per_line = cache_line / elem;
    const std::size_t lines = (count - head + per_line - 1) / per_line;
    const auto boundary = [&](std::size_t k) {
        if (k == 0) return std::size_t{0};
        if (k == n) return count;
        return std::min(count, head + lines * k / n * per_line);
    };
    return {boundary(rank), boundary(rank + 1)};
}

// Below this the members' threads would cost more than they save.
constexpr std::size_t parallel_threshold_bytes = 64 * 1024;
// The overlap check is quadratic in the members; larger teams take the serial path.
constexpr std::size_t parallel_max_members = 64;

bool overlap(const void* a, const void* b, std::size_t n) {
    const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
    return x < y + n && y < x + n;
}

// Where member r writes, or null.
const void* destination(const collective_call& first, const collective_call& call, std::size_t r) {
    switch (first.op) {
        case collective_op::broadcast: return static_cast<int>(r) == first.root ? nullptr : call.recv;
        case collective_op::reduce_sum: return static_cast<int>(r) == first.root ? call.recv : nullptr;
        case collective_op::all_reduce_sum: return call.recv;
        default: return nullptr;
    }
}

// What member r contributes, or null.
const void* source(const collective_call& first, const collective_call& call, std::size_t r) {
    if (first.op == collective_op::broadcast) return static_cast<int>(r) == first.root ? call.send : nullptr;
    return call.send;
}

}  // namespace

bool shares_in_parallel(const std::vector<std::optional<collective_call>>& calls) {
    const auto& first = *calls.front();
    const std::size_t n = calls.size();
    const bool sum = first.op == collective_op::reduce_sum || first.op == collective_op::all_reduce_sum;
    if (first.op != collective_op::broadcast && !sum) return false;
    if (sum && first.type == dtype::byte) return false;  // not summable: execute() reports it
    const std::size_t block = first.count * size_of(first.type);
    if (block < parallel_threshold_bytes || n > parallel_max_members) return false;
    for (std::size_t r = 0; r < n; ++r) {
        const void* dst = destination(first, *calls[r], r);
        if (dst == nullptr) continue;
        for (std::size_t q = 0; q < n; ++q) {
            const void* src = source(first, *calls[q], q);
            // A member's own in-place buffer is fine: only the member owning a slice reads
            // and then writes it (execute_share), never another member.
            if (src != nullptr && overlap(dst, src, block) && !(q == r && src == dst && sum)) return false;
            const void* other = q == r ? nullptr : destination(first, *calls[q], q);
            if (other != nullptr && overlap(dst, other, block)) return false;
        }
    }
    return true;
}

void execute_share(const std::vector<std::optional<collective_call>>& calls, std::size_t rank) {
    const auto& first = *calls.front();
    const std::size_t n = calls.size();
    const std::size_t elem = size_of(first.type);
    const auto root = static_cast<std::size_t>(first.root);
    const auto bytes_at = [&](const void* p, std::size_t element) { return static_cast<const unsigned char*>(p) + element * elem; };
    const auto out_at = [&](std::size_t r, std::size_t element) { return static_cast<unsigned char*>(calls[r]->recv) + element * elem; };
    std::size_t anchor = 0;  // the first member that writes: shares are whole lines of its buffer
    while (anchor < n && destination(first, *calls[anchor], anchor) == nullptr) ++anchor;
    if (anchor == n) return;  // a broadcast to nobody
    const auto [lo, hi] = share_of(first.count, elem, n, rank, destination(first, *calls[anchor], anchor));

    if (first.op == collective_op::broadcast) {
        // Each chunk of the root's data is read once and written to every receiver while it
        // is in this core's cache; every member (the root too) fans out its own share.
        const std::size_t chunk = copy_chunk_bytes / elem;
        for (std::size_t at = lo; at < hi; at += chunk) {
            const std::size_t len = std::min(chunk, hi - at) * elem;
            for (std::size_t r = 0; r < n; ++r)
                if (r != root) std::memcpy(out_at(r, at), bytes_at(calls[root]->send, at), len);
        }
        return;
    }
    // Sums fold a chunk at a time in rank order, ((s0 + s1) + s2) + ... as execute() does, in
    // one pass over the terms straight into the first receiver's buffer; the other receivers
    // (all-reduce) copy that chunk while it is in this core's cache. Every term of a line is
    // read before the line is written, so an in-place member (send == recv) still contributes
    // its old values.
    const bool to_all = first.op == collective_op::all_reduce_sum;
    const std::size_t writer = to_all ? rank : root;  // receives the sum first
    std::vector<const void*> terms(n);
    const std::size_t chunk = sum_chunk_bytes / elem;
    for (std::size_t at = lo; at < hi; at += chunk) {
        const std::size_t len = std::min(chunk, hi - at);
        unsigned char* out = out_at(writer, at);
        for (std::size_t r = 0; r < n; ++r) terms[r] = bytes_at(calls[r]->send, at);
        fold_sum(out, terms.data(), n, len, first.type);
        if (to_all)
            for (std::size_t r = 0; r < n; ++r)
                if (r != writer) std::memcpy(out_at(r, at), out, len * elem);
    }
}

}  // namespace distdl::sim
