#include "simulator/collective.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/communicator.hpp"
#include "core/error.hpp"
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
    out << to_string(call.op) << '(';
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

using bytes = std::vector<unsigned char>;

// Copies that tolerate null pointers for empty ranges (memcpy does not).
bytes stage(const void* src, std::size_t n) {
    bytes out(n);
    if (n > 0) std::memcpy(out.data(), src, n);
    return out;
}

void put(void* dst, const unsigned char* src, std::size_t n) {
    if (n > 0) std::memcpy(dst, src, n);
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
            bytes sum = stage(calls[0]->send, block);
            for (std::size_t r = 1; r < n && block > 0; ++r) add_into(sum.data(), calls[r]->send, first.count, first.type);
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
            std::vector<bytes> sends(n);
            for (std::size_t i = 0; i < n; ++i) {
                const auto& c = *calls[i];
                std::size_t extent = 0;
                for (std::size_t j = 0; j < n; ++j) extent = std::max(extent, c.send_displs[j] + c.send_counts[j]);
                sends[i] = stage(c.send, extent * elem);
            }
            for (std::size_t i = 0; i < n; ++i) {
                for (std::size_t j = 0; j < n; ++j) {
                    const auto& to = *calls[j];
                    const std::size_t len = calls[i]->send_counts[j] * elem;
                    if (len == 0) continue;
                    put(static_cast<unsigned char*>(to.recv) + to.recv_displs[i] * elem,
                        sends[i].data() + calls[i]->send_displs[j] * elem, len);
                }
            }
            break;
        }
        case collective_op::barrier: break;
    }
}

}  // namespace distdl::sim
