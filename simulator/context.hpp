#pragma once
// The shared state of one communication context: the world communicator, or one
// sub-communicator (every member's communicator object points at the same context). Each
// context has its own message space and its own sequence of collectives. Every field except
// the two constants is guarded by the world's mutex.
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/array_box.hpp"
#include "core/dtype.hpp"
#include "simulator/buffer_pool.hpp"
#include "simulator/collective.hpp"

namespace distdl::sim {

// A message sent and not yet received. Its data is copied while it is `in_flight` (outside the
// lock, by the sender): straight into the receive buffer when that receive was already posted
// (`delivered`), otherwise into a pooled buffer that the receive copies from and gives back.
// A large message whose receive was not posted at isend is `deferred` instead: its data stays
// in the send buffer (only the sending rank's own thread ever reads it) and moves straight into
// the receive buffer once that is posted and the sender is in a blocking call (wait_all, a
// collective, create_sub: a blocked sender is woken to move it). It goes into pooled storage
// only where the send buffer must be free before the receive is posted: at the end of the
// sender's wait_all on it, when its request is dropped, or before a collective of the sender
// that writes over that buffer.
// Send and receive buffers are boxes of arrays (core/array_box.hpp; a plain buffer is one
// run): "straight" means from the sender's box into the receiver's box, run by run, in one
// pass; a pooled buffer holds the data packed.
struct message {
    dtype type = dtype::byte;
    std::size_t count = 0;
    bool in_flight = false;
    bool delivered = false;
    message_buffer data;  // buffered messages only
    const void* deferred = nullptr;        // the send array while the data is still there
    strided_layout deferred_layout;        // the box of it that is sent
    std::uint64_t deferred_fingerprint = 0;  // its fingerprint at isend
    int sender_world = -1;                 // the world rank to wake when its receive is posted
};

// Where a posted receive wants its message: a box of the array `buf`.
struct posted_receive {
    void* buf = nullptr;
    strided_layout layout;
    std::size_t count = 0;
    dtype type = dtype::byte;
};

// Messages from one source to one destination with one tag. Sends are numbered in send order
// and receives take numbers in posting order; receive k takes message k. That is MPI's
// non-overtaking matching for an explicit source and tag.
struct channel {
    std::uint64_t next_send = 0;
    std::uint64_t next_recv = 0;
    std::map<std::uint64_t, message> pending;
    std::map<std::uint64_t, posted_receive> posted;  // receives whose message was not sent yet
};

// Hash of a channel's (dest, source, tag).
struct channel_key_hash {
    std::size_t operator()(const std::tuple<int, int, int>& key) const {
        const auto [dest, source, tag] = key;
        std::uint64_t h = static_cast<std::uint32_t>(dest) * 0x9e3779b97f4a7c15ULL;
        h ^= (h >> 29) + static_cast<std::uint32_t>(source) * 0xc2b2ae3d27d4eb4fULL;
        h ^= (h >> 31) + static_cast<std::uint32_t>(tag) * 0x165667b19e3779f9ULL;
        return static_cast<std::size_t>(h ^ (h >> 32));
    }
};

struct context_state;

// The n-th creation of a sub-communicator over one set of members of a context. Only the
// first arrival's list is kept; later arrivals are compared with it (memory O(members), not
// O(members^2), for a communicator of every rank).
struct creation_slot {
    std::vector<int> list;                  // the ordered list the first arrival passed
    std::vector<int> arrived;               // members (parent ranks) in arrival order
    std::map<int, std::vector<int>> differing;  // members whose list differs from `list`
    std::size_t departed = 0;
    std::shared_ptr<context_state> created;  // set once every member has arrived
    std::string failure;                     // non-empty once two lists disagree
};

struct context_state {
    // By (dest, source, tag); unordered (the end-of-world report sorts what it lists).
    using channel_map = std::unordered_map<std::tuple<int, int, int>, channel, channel_key_hash>;
    using message_map = std::map<std::uint64_t, message>;
    using posted_map = std::map<std::uint64_t, posted_receive>;

    context_state(int context_id, std::vector<int> world_ranks) : id(context_id), members(std::move(world_ranks)) {}

    const int id;                   // for messages only
    const std::vector<int> members; // world rank of each rank of the context

    channel_map channels;
    std::map<std::uint64_t, collective_slot> collectives;   // by collective call number
    std::map<std::pair<std::vector<int>, std::uint64_t>, creation_slot> creations;  // by (sorted members, n)

    // Channels and messages live in map nodes that are kept for reuse once drained or taken
    // (up to `spare_nodes` of each kind): a steady loop of messages allocates no node after
    // its first iteration.
    // The channel (dest, source, tag), added (empty) if it has none.
    channel& channel_at(const std::tuple<int, int, int>& key);
    // Drops a drained channel (nothing pending or posted, as many sends as receives).
    void drop_channel(channel_map::iterator it);
    message& add_message(channel& ch, std::uint64_t number, message&& m);
    // Takes message `number` (which must be there) off its channel.
    message take_message(channel& ch, std::uint64_t number);
    void add_posted(channel& ch, std::uint64_t number, const posted_receive& r);
    void erase_posted(channel& ch, posted_map::iterator it);

  private:
    static constexpr std::size_t spare_nodes = 1024;
    std::vector<channel_map::node_type> spare_channels_;
    std::vector<message_map::node_type> spare_messages_;
    std::vector<posted_map::node_type> spare_posted_;
};

// "context 2 (world ranks [2,3])"
std::string name(const context_state& context);
// "rank 1" on the world context, "rank 1 (world rank 3)" elsewhere.
std::string who(const context_state& context, int rank);

}  // namespace distdl::sim
