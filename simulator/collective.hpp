#pragma once
// One rank's call of a collective, and the rendezvous where the members of a communicator
// meet for their n-th collective. The last member to arrive checks that all calls agree and
// either moves the data for everyone while the others are still blocked (so their buffers are
// stable), or, for large broadcasts and sums, lets every member move its own share and keeps
// them all in the collective until every share is done.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace distdl::sim {

enum class collective_op { broadcast, reduce_sum, all_reduce_sum, all_gather, all_to_all_v, barrier };

std::string to_string(collective_op op);

struct collective_call {
    collective_op op = collective_op::barrier;
    dtype type = dtype::byte;
    std::size_t count = 0;  // elements per rank (unused by all_to_all_v and barrier)
    int root = -1;          // broadcast and reduce_sum only
    bool nonblocking = false;  // an ibroadcast (matched as a broadcast), for descriptions
    const void* send = nullptr;
    void* recv = nullptr;   // may be null where the rank receives nothing
    // all_to_all_v only, copied so the call can be described after the caller has left.
    std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;
};

// "broadcast(4 x float64, root 0)"
std::string describe(const collective_call& call);

// True when two ranks' calls can belong to the same collective (all_to_all_v counts are
// checked separately, once every call is known).
bool same_signature(const collective_call& a, const collective_call& b);

// For all_to_all_v: the pairs whose counts disagree ("rank 0 sends 3 to rank 1, which expects
// 2"), empty when consistent or for other operations. calls[r] is rank r's call; all present.
std::vector<std::string> count_mismatches(const std::vector<std::optional<collective_call>>& calls);

// Moves the data of a complete, consistent collective. Sums fold in rank order,
// ((rank 0 + rank 1) + rank 2) + ..., so reduce_sum and all_reduce_sum are bit-identical and
// reproducible.
void execute(const std::vector<std::optional<collective_call>>& calls);

// The bytes of its own buffers that member `rank`'s call (of a collective of `members`
// members) has written into it: [first, first + size), size 0 when it writes nothing (a
// broadcast's root, a reduce's non-root, a barrier). A span, not the exact elements: for
// all_to_all_v it runs from the receive buffer to the end of its last non-empty block.
struct written_span {
    const void* first = nullptr;
    std::size_t size = 0;
};
written_span written_bytes(const collective_call& call, int rank, std::size_t members);

// True when every member can move its own share of the data itself, outside the lock and in
// parallel with the others (execute_share): a large broadcast or sum whose destinations
// overlap no other member's buffers (a member's own send and receive may be the same buffer).
// Small or aliased calls go through execute() instead.
bool shares_in_parallel(const std::vector<std::optional<collective_call>>& calls);

// Member `rank`'s share of a collective for which shares_in_parallel() holds. Every member's
// buffers must stay valid until every share is done. The elements are split over all members
// (the broadcast's root too) in whole cache lines of the first receiver's buffer, so members
// running on different cores never write the same line. Broadcast: member k copies its slice
// of the root's data to every receiver, a cache-sized chunk at a time (each chunk read once).
// Sums: member k folds its slice of every member's send buffer in rank order, in one pass
// straight into one receiver's buffer (bit-identical to execute()), and for an all-reduce
// copies that chunk on to the other receivers while it is still in cache.
void execute_share(const std::vector<std::optional<collective_call>>& calls, std::size_t rank);

struct collective_slot {
    std::vector<std::optional<collective_call>> calls;  // by rank, filled as ranks arrive
    int arrived = 0;
    int first = -1;  // the first arrival: every later call is compared with its call
    int departed = 0;
    bool done = false;
    bool in_shares = false;   // done means "agreed": each member then moves its share (execute_share)
    int shares_done = 0;      // members whose share is done; buffers are free once it reaches n
    std::string failure;  // non-empty once a mismatch was found
};

}  // namespace distdl::sim
