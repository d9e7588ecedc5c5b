#pragma once
// The simulator's communicator: one object per rank per context. Sends are buffered (the data
// is copied at isend: into the receive buffer if that receive is already posted, else into
// pooled storage; a large send whose receive is not posted yet is deferred: its data moves
// straight into the receive buffer once that is posted, while the sender is in any blocking
// call, collectives and create_sub included; a wait_all leaves its own sends' unreceived
// deferred data in pooled storage, so no wait ever blocks on a send). Box sends and receives
// (isend_box / irecv_box) take the same paths: the data moves from the sender's box into the
// receiver's box in one pass when both are known, and is packed only into pooled storage.
// Receives complete in wait_all, collectives meet in a rendezvous slot numbered by the
// communicator's own call count (large ones then move their data in parallel, each member its
// own share), sub-communicators in a creation slot of the parent context keyed by the member
// set.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "simulator/collective.hpp"
#include "simulator/context.hpp"
#include "simulator/world.hpp"

namespace distdl::sim {

// What keeps a communicator's requests usable: its world and context. Each communicator has
// one anchor, so creating and dropping a request changes only that rank's reference count,
// not the world's and the context's, which every rank shares (a cache line moving between
// cores at every message).
struct request_anchor {
    std::shared_ptr<world> owner;
    std::shared_ptr<context_state> context;
};

// Whether a deferred send (context.hpp) whose receive is not posted goes into pooled storage now.
using buffer_rule = std::function<bool(const deferred_send&, const message&)>;

class sim_communicator final : public communicator {
  public:
    sim_communicator(std::shared_ptr<world> owner, std::shared_ptr<context_state> context, int rank);
    // Test hook: how the deferred messages of this communicator's world have moved so far.
    deferred_moves deferred_moves_so_far() const;

  protected:
    int do_rank() const override { return rank_; }
    int do_size() const override { return static_cast<int>(context_->members.size()); }
    std::shared_ptr<communicator> do_create_sub(const std::vector<int>& ranks) override;
    request do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) override;
    request do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) override;
    request do_isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag) override;
    request do_irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag) override;
    bool do_moves_boxes() const override { return true; }
    void do_wait_all(std::vector<request>& requests) override;
    void do_broadcast(void* buf, std::size_t count, dtype type, int root) override;
    void do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) override;
    void do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) override;
    void do_all_gather(const void* send, void* recv, std::size_t count, dtype type) override;
    void do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                         const std::vector<std::size_t>& send_displs, void* recv,
                         const std::vector<std::size_t>& recv_counts,
                         const std::vector<std::size_t>& recv_displs, dtype type) override;
    void do_barrier() override;
    bool do_collectives_are_one_step() const override { return true; }  // one rendezvous, any size

  private:
    // Both kinds of send and receive: a box of an array (a plain buffer is one run).
    request post_send(const void* array, const strided_layout& layout, std::size_t count, dtype type, int dest, int tag);
    request post_receive(void* array, const strided_layout& layout, std::size_t count, dtype type, int source, int tag);
    int world_rank() const { return context_->members[static_cast<std::size_t>(rank_)]; }
    // The world's lock for a call of this communicator, once it is known that the world still
    // runs (sim::world_ended, sim::aborted) and that the caller is this rank's thread
    // (sim::wrong_thread).
    std::unique_lock<std::mutex> lock_for_call() const;
    // Whether the caller is this rank's thread (no lock needed).
    bool on_own_thread() const;
    // broadcast, or with `nonblocking` ibroadcast's (described as such in diagnostics).
    void broadcast_as(void* buf, std::size_t count, dtype type, int root, bool nonblocking);
    void run_collective(collective_call call);
    // Signals ranks marked woken (world::mark_woken) with the lock released, then retakes it:
    // woken ranks find the lock free instead of blocking on it again, one after another.
    void signal_unlocked(std::unique_lock<std::mutex>& held, const std::vector<int>& world_ranks);
    // This rank's deferred sends (context.hpp; of any of its communicators): moves each whose
    // receive is posted, and with `or_buffer` the others into pooled storage. Caller holds the
    // lock (let go during copies). Throws sim::send_buffer_modified if a moved buffer lost its
    // isend fingerprint.
    void move_deferred(std::unique_lock<std::mutex>& held, bool or_buffer);
    // The same, with `buffer` saying which unreceived ones go into pooled storage; returns the
    // description of a modified buffer (empty if none) instead of throwing it.
    std::string move_deferred_where(std::unique_lock<std::mutex>& held, const buffer_rule& buffer);
    // Whether one of them has its receive posted (caller holds the lock).
    bool deferred_receivable() const;
    // Blocks in a rendezvous (a collective, create_sub) until ready() holds, serving this
    // rank's deferred sends meanwhile: woken when a receive for one of them is posted, it
    // moves the data straight there and blocks again. A modified send buffer found meanwhile
    // is kept in `modified` (the first), to be thrown once this rank has left the rendezvous
    // (until then other members may use its buffers). Throws as world::wait_until.
    void wait_serving_deferred(std::unique_lock<std::mutex>& held, const std::function<bool()>& ready,
                               const std::function<std::string()>& describe, std::string& modified);

    std::shared_ptr<world> world_;
    std::shared_ptr<context_state> context_;
    int rank_;
    std::shared_ptr<const request_anchor> anchor_;
    // Used only by the owning rank's thread.
    std::uint64_t collectives_called_ = 0;
    std::map<std::uint64_t, std::uint64_t> creations_called_;  // by a hash of the sorted member set

  protected:
    // Runs the broadcast at the call (as do_broadcast: it meets the other members there) and
    // returns a complete request. (It also matches a blocking broadcast, which MPI would not:
    // telling them apart needs an operation of their own in collective.hpp.)
    request do_ibroadcast(void* buf, std::size_t count, dtype type, int root) override;
};

}  // namespace distdl::sim
