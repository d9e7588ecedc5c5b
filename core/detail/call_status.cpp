#include "core/detail/call_status.hpp"

#include <cstdint>
#include <vector>

#include "core/error.hpp"

namespace distdl::detail {

namespace {

// Broadcast of `root`'s text (collective).
std::string text_of(communicator& comm, const std::string& mine, int root) {
    std::uint64_t length = root == comm.rank() ? mine.size() : 0;
    comm.broadcast(&length, 1, dtype::uint64, root);
    std::string text(length, '\0');
    if (root == comm.rank()) text = mine;
    comm.broadcast(text.data(), length, dtype::byte, root);
    return text;
}

}  // namespace

bool agree_on_call(communicator& comm, const std::string& problem, bool changed, const problem_formatter& message) {
    traffic_scope scope(comm.traffic(), comm.traffic().label() + ".status");
    const std::uint64_t mine[2] = {problem.empty() ? 0u : 1u, changed ? 1u : 0u};
    std::uint64_t total[2] = {0, 0};
    comm.all_reduce_sum(mine, total, 2, dtype::uint64);
    if (total[0] == 0) return total[1] != 0;

    // Error path: the lowest-ranked member with a problem tells its text to everyone.
    const auto n = static_cast<std::size_t>(comm.size());
    std::vector<std::uint64_t> bits((n + 63) / 64, 0), any(bits.size(), 0);
    const auto me = static_cast<std::size_t>(comm.rank());
    if (!problem.empty()) bits[me / 64] |= std::uint64_t{1} << (me % 64);
    comm.all_reduce_sum(bits.data(), any.data(), bits.size(), dtype::uint64);  // disjoint bits: sum == or
    int first = -1, last = -1;
    for (std::size_t w = 0; w < any.size(); ++w) {
        if (any[w] == 0) continue;
        if (first < 0) first = static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(any[w])));
        last = static_cast<int>(w * 64 + 63 - static_cast<std::size_t>(__builtin_clzll(any[w])));
    }
    const std::string first_text = text_of(comm, problem, first);
    std::string text;
    if (message) {
        text = message(first_text, last == first ? first_text : text_of(comm, problem, last), total[0]);
    } else {
        text = first_text;
        if (total[0] > 1) text += " (and " + std::to_string(total[0] - 1) + " more worker(s) with a problem)";
    }
    throw invalid_argument(text);
}

}  // namespace distdl::detail
