#pragma once
// The data-movement engine of the point-to-point primitives (Repartition, HaloExchange; the
// convolution and pooling layers): a const plan of boxes built once, and its run.
//
// How to use it.
//   1. When the local shapes are known, build a box_exchange_plan: the shape of this worker's
//      source array and of its destination array; `sends`: for each peer, the box of the
//      source array that peer needs (start in the source array); `receives`: for each peer,
//      the box of the destination array that comes from it (start in the destination array);
//      and optionally `self`: the box this worker moves from its own source to its own
//      destination. Peers are ranks of the communicator the plan will run on; at most one send
//      and one receive per peer, each list in increasing peer order (the constructor checks
//      every box against its array and the order: a bad plan throws, never touches memory).
//      Every worker's plan must mirror its peers' plans (what q sends to p has the extent of
//      what p receives from q), as it does when all of them derive it from the same layout.
//   2. Wrap it in a box_exchange<T> (which keeps the pack buffers and requests for reuse),
//      once per module.
//   3. Each call: forward(comm, src, dst) moves the planned boxes of src into dst (assigning;
//      elements of dst outside every planned box are left untouched: the caller fills them).
//      reverse(comm, dst_like, src_like, op) is the adjoint: same plan, directions swapped;
//      the self box is assigned first, then each received box is assigned or added (op) in
//      increasing peer order, so additions happen in the same order on every transport and
//      every run (bit-reproducible). In forward, the receive boxes and the self box must not
//      overlap in dst (nor, in an assigning reverse, in src_like).
//   4. Agreeing on the call's argument checks (core/detail/call_status.hpp): the overloads
//      taking `problem` (this worker's error message, empty: none) and `changed` (its shapes
//      differ from the plan's) return whether any worker of `comm` reported a change, and
//      throw the same invalid_argument on every worker when any reported a problem (after the
//      messages completed, without unpacking). On a communicator of at most
//      `status_in_messages_limit` workers the status travels with the data, in no extra
//      round: every worker sends every other one its status word, appended to the data
//      message to that peer when it is small, as a one-element message of its own otherwise
//      (or when there is no data message to that peer); every worker then knows every
//      status. On larger communicators every worker sends its word to rank 0, posted with its
//      data, and rank 0, once it has them all (and its own messages), sends every worker the
//      OR: 2(P - 1) one-word messages and one extra hop, where an all-reduce costs log P
//      dependent rounds (and messages to every peer cost P(P - 1)). On a transport whose
//      collectives meet in one step (communicator::collectives_are_one_step: the simulator),
//      an exchange that does not meet (below) runs one status all-reduce instead, once every
//      worker has posted its receives and before any sends: it costs less there than 2(P - 1)
//      messages, and no large message then finds its receive unposted (which the simulator
//      defers, reading the send buffer once more: a large Repartition on 16 workers took
//      ~15% longer so). A worker whose argument is wrong must still pass a source of the
//      planned shape (scratch) so that its peers get their messages.
//      `before_sends`, in the overloads without a status, runs once this worker's receives are
//      posted, before its sends; if it throws, the exchange still completes (sends, self box,
//      wait) and the exception is rethrown after the wait, without unpacking. (In a meeting,
//      below, it runs after the meeting.)
//
// Every member of `comm` runs each call (the status agreement needs all of them; the plain
// overloads are called by all of them too).
//
// On a transport whose collectives meet in one step (communicator::collectives_are_one_step:
// the simulator), an exchange among at most meeting_max_workers workers in which no worker
// moves more than meeting_max_bytes runs as one all_to_all_v instead of point-to-point messages: packed boxes, and with a status one word to
// every peer, so every worker learns every status in that same meeting. One meeting costs less
// there than a lock round per message and a wake-up per peer. Which way an exchange goes is
// agreed once, by an all-reduce in its first call.
//
// Boxes that are one contiguous run of their array travel straight from and into the tensors
// (no packing). The others, on a transport that moves boxes (communicator::moves_boxes: the
// simulator), travel as strided messages (isend_box / irecv_box) straight from the source
// tensor into the destination tensor, in one pass over the data; elsewhere, and for boxes that
// carry an appended status, are added on receipt or have runs shorter than
// strided_min_run_bytes, they are packed into buffers kept by the
// exchange and unpacked after the wait. Receives are posted
// first, then sends, then the self box is copied while messages are in flight, then the
// exchange waits and unpacks. The argument checks of a call (shapes) belong to the caller (see
// core/detail/call_status.hpp for agreeing on them).
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/detail/box_copy.hpp"
#include "core/tensor.hpp"

namespace distdl::detail {

// An exchange runs as one meeting (see above) when no worker sends or receives more than this
// in one direction.
constexpr std::size_t meeting_max_bytes = 16 * 1024;
// ... and when the communicator has at most this many workers: a meeting's counts are O(P) per
// worker, O(P^2) in all (with 4096 workers, 512 MiB of counts per call), where a neighbour
// exchange's messages are O(neighbours).
constexpr int meeting_max_workers = 64;

// One box moved between this worker and `peer`; `start` is in this worker's local array
// (the source array for a send, the destination array for a receive).
struct box_transfer {
    int peer;
    shape_t start;
    shape_t extent;
};

// The box this worker moves to itself.
struct self_transfer {
    shape_t source_start;
    shape_t dest_start;
    shape_t extent;
};

struct box_exchange_plan {
    shape_t source_shape;
    shape_t dest_shape;
    std::vector<box_transfer> sends;
    std::vector<box_transfer> receives;
    bool has_self = false;
    self_transfer self;
};

template <class T>
class box_exchange {
  public:
    // `forward_tag` and `reverse_tag` label the messages of the two directions. `meeting_limit`
    // replaces meeting_max_bytes (every worker must pass the same; tests pass 0 to keep the
    // messages where the transport would meet).
    box_exchange(box_exchange_plan plan, int forward_tag, int reverse_tag,
                 std::size_t meeting_limit = meeting_max_bytes);

    const box_exchange_plan& plan() const { return plan_; }

    // src has plan().source_shape, dst plan().dest_shape.
    void forward(communicator& comm, const T* src, T* dst, const std::function<void()>& before_sends = {});
    // The adjoint: dst_like has plan().dest_shape, src_like plan().source_shape.
    void reverse(communicator& comm, const T* dst_like, T* src_like, box_op op,
                 const std::function<void()>& before_sends = {});
    // The same, agreeing on the call's status (step 4): returns whether any worker changed.
    // self_placed: the self box is not copied (forward: the caller reads it from src itself;
    // reverse: the caller has already moved it).
    bool forward(communicator& comm, const T* src, T* dst, const std::string& problem, bool changed,
                 bool self_placed = false);
    bool reverse(communicator& comm, const T* dst_like, T* src_like, box_op op, const std::string& problem,
                 bool changed, bool self_placed = false);

  private:
    // A transfer with its place in the pack buffer of its list; `strided`: whether its box has
    // a strided layout (communicator::isend_box; at most strided_layout::max_dims outer
    // dimensions), from which follow whether it is one contiguous run of its local array and
    // the offset of its first element there.
    struct slot {
        std::size_t buffer_offset;
        std::size_t count;
        bool strided;
        strided_layout layout;
        bool contiguous() const { return strided && layout.contiguous(); }
        std::size_t flat() const { return layout.offset / sizeof(T); }
    };

    // One direction of the plan. `status`, when given, is this worker's status word, sent
    // along with the data (step 4); then the OR of every worker's word is returned.
    unsigned run(communicator& comm, const std::vector<box_transfer>& outgoing, const std::vector<slot>& out_slots,
                 std::vector<T>& out_buffer, const shape_t& out_shape, const T* out_data,
                 const std::vector<box_transfer>& incoming, const std::vector<slot>& in_slots,
                 std::vector<T>& in_buffer, const shape_t& in_shape, T* in_data, box_op op, int tag, bool forward,
                 const std::function<void()>& before_sends, const unsigned* status, bool self_placed = false);
    bool agreed_run(communicator& comm, bool forward, const T* from, T* to, box_op op, const std::string& problem,
                    bool changed, bool self_placed = false);
    // Assigns the self box of one direction (forward: plan source -> dest), if the plan has one.
    void copy_self(bool forward, const T* out_data, const shape_t& out_shape, T* in_data, const shape_t& in_shape) const;
    // Whether this exchange runs as one meeting (decided at its first call, collectively).
    bool meets(communicator& comm);
    // One direction as one all_to_all_v (same arguments and result as run).
    unsigned run_meeting(communicator& comm, const std::vector<box_transfer>& outgoing, const shape_t& out_shape,
                         const T* out_data, const std::vector<box_transfer>& incoming, const shape_t& in_shape,
                         T* in_data, box_op op, bool forward, const std::function<void()>& before_sends,
                         const unsigned* status, bool self_placed);

    box_exchange_plan plan_;
    int forward_tag_, reverse_tag_;
    std::vector<slot> send_slots_, receive_slots_;
    std::size_t send_volume_ = 0, receive_volume_ = 0;
    std::vector<T> send_buffer_, receive_buffer_;
    std::vector<request> requests_;
    // Status words (step 4): this worker's, and one received from each peer.
    T status_out_{}, status_result_{};
    std::vector<T> status_in_;
    std::vector<char> has_message_;  // per peer: a data message carries the status
    // The meeting (run_meeting): -1 undecided, 0 messages, 1 meeting; its counts,
    // displacements and packed buffers, kept across calls.
    std::size_t meeting_limit_;
    int meeting_ = -1;
    std::vector<std::size_t> meet_send_counts_, meet_send_displs_, meet_recv_counts_, meet_recv_displs_;
    std::vector<T> meet_send_, meet_recv_;
};

// Communicators up to this size carry the call status to every peer (step 4); larger ones
// through rank 0. Measured on Open MPI, 16 ranks on 2 cores (halo [4,4] 32x64, f64, forward +
// adjoint, raw-MPI baseline 120-140 us): status to every peer 257-317 us (480 messages per
// iteration), status all-reduce 268 us (200), through rank 0 196-206 us (228). Earlier, on the
// simulator: to every peer 1.76 ms, all-reduce 0.74 ms (halo).
constexpr int status_in_messages_limit = 8;
// Boxes whose contiguous runs are shorter than this are packed even where the transport moves
// boxes: a run at a time costs more than the packing pass (simulator, halo columns of 8 bytes).
constexpr std::size_t strided_min_run_bytes = 256;
// Data messages up to this many bytes carry the status as a last element.
constexpr std::size_t status_appended_limit = 16 * 1024;

}  // namespace distdl::detail
