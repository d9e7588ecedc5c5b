#include "simulator/sim_communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <sstream>
#include <typeinfo>

#include "simulator/errors.hpp"
#include "simulator/send_fingerprint.hpp"
#include "simulator/summary.hpp"

namespace distdl::sim {

namespace {

// Drained channels are kept while a context has at most this many.
constexpr std::size_t kept_channels = 1024;

// Every request of the simulator: knows its world, and reports itself at the end of the world
// if it is destroyed without having been waited on.
class sim_request : public request_state {
  public:
    sim_request(std::shared_ptr<const request_anchor> anchor, int rank)
        : anchor_(std::move(anchor)), owner_(anchor_->owner.get()), context_(anchor_->context.get()), rank_(rank) {}
    sim_request(const sim_request&) = delete;
    sim_request& operator=(const sim_request&) = delete;

    const world* owner() const { return owner_; }
    int world_rank() const { return context_->members[static_cast<std::size_t>(rank_)]; }
    // Caller holds the world lock.
    void mark_waited() {
        if (!waited_) owner_->request_waited();
        waited_ = true;
    }
    // "a receive from rank 1 with tag 5 on context 0 (world ranks [0-3])"
    virtual std::string describe() const = 0;
    // Read by the owning rank only (which alone marks it).
    bool waited() const { return waited_; }

  protected:
    std::shared_ptr<const request_anchor> anchor_;  // keeps the world and the messages alive
    world* owner_;
    context_state* context_;
    int rank_;

    // Called by the destructor of each final class (describe() is gone in the base's).
    void report_if_unwaited() noexcept {
        if (waited_) return;
        std::string what = "a request";
        try {
            what = describe();
        } catch (...) {
        }
        owner_->request_dropped(world_rank(), what);
    }

  private:
    bool waited_ = false;
};

std::string modified_send(const context_state& context, int source, int dest, int tag, std::size_t count, dtype type) {
    return "sim: " + who(context, source) + " modified the buffer of its isend (a send of " + std::to_string(count) +
           " x " + to_string(type) + " to " + who(context, dest) + " with tag " + std::to_string(tag) + " on " +
           name(context) + ") before the send completed in wait_all; under MPI the receiver could get the old " +
           "data, the new data or a mixture";
}

// Moves one deferred message (context.hpp) out of its send buffer; called by the sending rank
// only, with the lock held (let go during the copy): straight into its receive buffer if that
// has been posted, else, if `buffer(d, message)`, into pooled storage. Returns false if it
// stays deferred. A buffer that lost its isend fingerprint sets `modified` (its description). The
// receiver, if it may continue now, is added to `wake`.
bool move_deferred_message(world& w, std::unique_lock<std::mutex>& held, const deferred_send& d,
                           const buffer_rule& buffer, std::string& modified, std::vector<int>& wake) {
    context_state& context = *d.context;
    auto ch = context.channels.find(d.channel);
    if (ch == context.channels.end()) return true;
    auto found = ch->second.pending.find(d.number);
    if (found == ch->second.pending.end() || found->second.deferred == nullptr) return true;
    message& m = found->second;
    const std::size_t bytes = m.count * size_of(m.type);
    void* to = nullptr;
    strided_layout to_layout = contiguous_layout(bytes);
    if (auto posted = ch->second.posted.find(d.number); posted != ch->second.posted.end()) {
        if (posted->second.type == m.type && posted->second.count == m.count) {
            to = posted->second.buf;
            to_layout = posted->second.layout;
            m.delivered = true;
            ++w.moves_of_deferred().straight;
        }  // else the receive reports the mismatch; no data moves
        context.erase_posted(ch->second, posted);
    } else if (!buffer(d, m)) {
        return false;
    } else {
        m.data = w.pool().take(bytes);
        to = m.data.bytes.get();
        ++w.moves_of_deferred().buffered;
    }
    const void* from = m.deferred;
    m.deferred = nullptr;
    if (to != nullptr) {
        m.in_flight = true;  // the receive is not ready, and waits before its buffer goes away
        held.unlock();
        const std::uint64_t copied = copy_with_fingerprint(to, to_layout, from, m.deferred_layout);
        w.relock(held);
        m.in_flight = false;  // map nodes are stable, and an in-flight message keeps its channel
        const auto& [dest, source, tag] = d.channel;
        if (copied != m.deferred_fingerprint && modified.empty())
            modified = modified_send(context, source, dest, tag, m.count, m.type);
    }
    const int dest_world = context.members[static_cast<std::size_t>(std::get<0>(d.channel))];
    if (w.mark_woken(dest_world)) wake.push_back(dest_world);
    return true;
}

// Sends are buffered: the data is on its way once they exist. `copied` is the fingerprint of
// the buffer taken while isend copied it; the wait checks that the buffer still has it. A
// deferred send's buffer is checked when its data moves (in a blocking call of its rank, at the
// latest in its wait), and again at the wait if it moved in an earlier call: the buffer must
// keep its data until the send's wait, however early the data left it.
class send_request final : public sim_request {
  public:
    send_request(std::shared_ptr<const request_anchor> anchor, int rank, int dest, int tag,
                 std::uint64_t number, const void* buf, const strided_layout& layout, std::size_t count, dtype type,
                 std::uint64_t copied, bool deferred)
        : sim_request(std::move(anchor), rank), dest_(dest), tag_(tag), number_(number), buf_(buf),
          layout_(layout), count_(count), type_(type), fingerprint_(copied), deferred_(deferred) {}
    ~send_request() override {
        // Dropped without a wait: a deferred message still in the buffer is buffered now, so
        // that its receiver gets it (the dropped request is reported at the end of the world).
        if (deferred_ && !waited()) {
            try {
                auto held = owner_->lock();
                owner_->throw_if_aborted();
                auto& list = owner_->deferred(world_rank());
                std::string modified;
                std::vector<int> wake;
                for (auto it = list.begin(); it != list.end(); ++it) {
                    if (!is(*it)) continue;
                    const deferred_send d = *it;
                    list.erase(it);
                    const buffer_rule always = [](const deferred_send&, const message&) { return true; };
                    move_deferred_message(*owner_, held, d, always, modified, wake);
                    break;
                }
                held.unlock();
                for (int w : wake) owner_->signal(w);
            } catch (...) {
                // The world ended or was aborted: nobody waits for the message any more.
            }
        }
        report_if_unwaited();
    }

    bool deferred() const { return deferred_; }
    // Whether `d` is this send's message.
    bool is(const deferred_send& d) const {
        return d.number == number_ && d.context.get() == context_ && d.channel == std::make_tuple(dest_, rank_, tag_);
    }

    // Throws sim::send_buffer_modified if the buffer of a send copied at isend, or of a deferred
    // send whose data has moved already, changed since (a deferred send still in its buffer is
    // checked as its data moves). Reads only this rank's buffer, the request and this rank's
    // list of deferred sends, which only this rank's thread changes: the caller need not hold
    // the lock.
    void verify_copied_buffer() const {
        if (!deferred_) return verify();
        const auto& still = owner_->deferred(world_rank());
        if (std::none_of(still.begin(), still.end(), [this](const deferred_send& d) { return is(d); })) verify();
    }

    std::string describe() const override {
        return "a send of " + std::to_string(count_) + " x " + to_string(type_) + " to " + who(*context_, dest_) +
               " with tag " + std::to_string(tag_) + " on " + name(*context_);
    }

  private:
    void verify() const {
        if (fingerprint(buf_, layout_) == fingerprint_) return;
        throw send_buffer_modified(modified_send(*context_, rank_, dest_, tag_, count_, type_));
    }

    int dest_, tag_;
    std::uint64_t number_;
    const void* buf_;
    strided_layout layout_;
    std::size_t count_;
    dtype type_;
    std::uint64_t fingerprint_;
    bool deferred_;
};

// Where a receive into one contiguous run writes (receive_spans.hpp lists those), else null.
const void* single_run(const void* buf, const strided_layout& layout) {
    return layout.contiguous() ? static_cast<const unsigned char*>(buf) + layout.offset : nullptr;
}

class recv_request final : public sim_request {
  public:
    recv_request(std::shared_ptr<const request_anchor> anchor, channel& ch, int dest,
                 int source, int tag, std::uint64_t number, void* buf, const strided_layout& layout, std::size_t count,
                 dtype type)
        : sim_request(std::move(anchor), dest), source_(source), tag_(tag), number_(number),
          buf_(buf), layout_(layout), count_(count), type_(type),
          channel_(&ch) {}
    ~recv_request() override {
        // A completed receive has taken its message: no sender refers to its buffer any more.
        if (waited()) return;
        // A sender may be copying into this receive's buffer right now: let it finish before
        // the buffer can go away, and let no later sender start.
        try {
            auto held = owner_->lock();
            unlist();
            auto it = context_->channels.find({rank_, source_, tag_});
            if (it != context_->channels.end()) {
                it->second.posted.erase(number_);
                const auto copying = [&] {
                    auto m = it->second.pending.find(number_);
                    return m != it->second.pending.end() && m->second.in_flight;
                };
                owner_->wait_for_peers(held, world_rank(), [&] { return !copying(); });
            }
        } catch (...) {
            // Nothing more can be done in a destructor.
        }
        report_if_unwaited();
    }

    posted_receive target() const { return {buf_, layout_, count_, type_}; }

    // Lists this receive's run among the rank's pending ones / takes it off once the buffer is
    // free (completed or dropped). Caller holds the lock.
    void list() {
        owner_->receiving(world_rank()).add(single_run(buf_, layout_), layout_.run, this);
        listed_ = true;
    }
    void unlist() {
        if (listed_) owner_->receiving(world_rank()).remove(single_run(buf_, layout_), this);
        listed_ = false;
    }

    // The matched message once it has fully arrived, else null. Caller holds the lock.
    const message* arrived() const {
        auto m = channel_->pending.find(number_);
        if (m == channel_->pending.end() || m->second.in_flight || m->second.deferred != nullptr) return nullptr;
        return &m->second;
    }
    bool ready() const { return arrived() != nullptr; }

    // Takes the matched message off its channel. Caller holds the lock; ready() holds.
    message take() {
        channel& ch = *channel_;
        message m = context_->take_message(ch, number_);
        // A drained channel is the same as a fresh one: dropped once the context has many, so
        // that the map stays small (a steady loop over a few channels finds them kept).
        if (ch.pending.empty() && ch.next_send == ch.next_recv && context_->channels.size() > kept_channels)
            context_->drop_channel(context_->channels.find({rank_, source_, tag_}));
        if (m.type != type_ || m.count != count_) {
            std::ostringstream out;
            out << "sim: message mismatch on " << name(*context_) << ": " << who(*context_, rank_) << " receives "
                << count_ << " x " << to_string(type_) << " from " << who(*context_, source_) << " with tag " << tag_
                << ", but " << who(*context_, source_) << " sent " << m.count << " x " << to_string(m.type);
            owner_->pool().give(std::move(m.data));
            throw message_mismatch(out.str());
        }
        return m;
    }

    // Copies a buffered message into the receive box (no lock needed: both are this rank's).
    void copy_in(const message& m) const {
        const std::size_t bytes = count_ * size_of(type_);
        if (!m.delivered && bytes > 0) copy_layout(buf_, layout_, m.data.bytes.get(), contiguous_layout(bytes));
    }

    std::string describe() const override {
        return "a message from " + who(*context_, source_) + " with tag " + std::to_string(tag_) + " on " +
               name(*context_);
    }

  private:
    int source_, tag_;
    std::uint64_t number_;
    void* buf_;
    strided_layout layout_;
    std::size_t count_;
    dtype type_;
    // Its channel, which is not dropped before this receive has taken its message.
    channel* channel_;
    bool listed_ = false;  // among the rank's receive_spans
};

// An ibroadcast, whose data moved at its call: until its wait the root's buffer is still MPI's
// to read, so the root's wait checks that it kept its data (a fingerprint taken at the call,
// as an isend's; the others' buffers are not fingerprinted: two more passes over every
// member's copy of a large broadcast). A request never waited on is reported at the end of the
// world, as any.
class broadcast_request final : public sim_request {
  public:
    broadcast_request(std::shared_ptr<const request_anchor> anchor, int rank, int root, const void* buf,
                      std::size_t count, dtype type)
        : sim_request(std::move(anchor), rank), root_(root), buf_(buf), count_(count), type_(type),
          fingerprint_(rank == root ? fingerprint(buf, count * size_of(type)) : 0) {}
    ~broadcast_request() override { report_if_unwaited(); }

    // Reads only this rank's buffer and the request: the caller need not hold the lock.
    void verify() const {
        if (rank_ != root_ || fingerprint(buf_, count_ * size_of(type_)) == fingerprint_) return;
        throw send_buffer_modified("sim: " + who(*context_, rank_) + " modified the buffer of its " + describe() +
                                   " before the broadcast completed in wait_all; under MPI the others could get the "
                                   "old data, the new data or a mixture");
    }

    std::string describe() const override {
        return "ibroadcast of " + std::to_string(count_) + " x " + to_string(type_) + " from " + who(*context_, root_) +
               " on " + name(*context_);
    }

  private:
    int root_;
    const void* buf_;
    std::size_t count_;
    dtype type_;
    std::uint64_t fingerprint_;
};

// A send at most this large copies its data while holding the world lock: letting the lock
// go and taking it again would cost more than the copy (and another rank a wait on the lock).
constexpr std::size_t copy_unlocked_bytes = 16 * 1024;

// A send at least this large whose receive is not posted yet is deferred (context.hpp): its
// data moves once, from the send buffer into the receive buffer, instead of twice through
// pooled storage.
constexpr std::size_t deferred_bytes = 64 * 1024;

// A buffered message at least this large is copied out as soon as it arrives, without
// waiting for the other receives of the same wait_all.
constexpr std::size_t early_copy_out_bytes = 64 * 1024;

// Whether the box a deferred message is sent from overlaps `span`.
bool overlaps(const message& m, const written_span& span) {
    const strided_layout& box = m.deferred_layout;
    if (span.size == 0 || box.run == 0) return false;
    std::size_t reach = box.run;  // from the box's first byte to past its last
    for (std::size_t k = 0; k < box.dims; ++k) {
        if (box.count[k] == 0) return false;
        reach += (box.count[k] - 1) * box.stride[k];
    }
    const auto first = reinterpret_cast<std::uintptr_t>(m.deferred) + box.offset;
    const auto written = reinterpret_cast<std::uintptr_t>(span.first);
    return first < written + span.size && written < first + reach;
}

// The per-rank key of a member set (sorted): a 64-bit hash, so that a rank does not keep a
// copy of every member list it created (O(n) per rank, O(n^2) per world).
std::uint64_t member_set_key(const std::vector<int>& sorted) {
    std::uint64_t h = 0xcbf29ce484222325ULL ^ sorted.size();
    for (int r : sorted) {
        h = (h ^ static_cast<std::uint64_t>(static_cast<std::uint32_t>(r))) * 0x100000001b3ULL;
        h ^= h >> 31;
    }
    return h;
}

}  // namespace

sim_communicator::sim_communicator(std::shared_ptr<world> owner, std::shared_ptr<context_state> context, int rank)
    : world_(std::move(owner)), context_(std::move(context)), rank_(rank),
      anchor_(std::make_shared<const request_anchor>(request_anchor{world_, context_})) {}

std::unique_lock<std::mutex> sim_communicator::lock_for_call() const {
    auto held = world_->lock();
    world_->throw_if_aborted();
    if (on_own_thread()) return held;
    const rank_thread& caller = this_rank_thread();
    throw wrong_thread("sim: the communicator of rank " + std::to_string(world_rank()) + " (" + name(*context_) +
                       ") used from " +
                       (caller.owner == world_.get() ? "the thread of rank " + std::to_string(caller.rank)
                                                     : std::string("a thread that is no rank of its world")) +
                       "; each rank communicates from its own thread only (as under MPI_THREAD_FUNNELED, which the "
                       "Open MPI transport asks for)");
}

bool sim_communicator::on_own_thread() const {
    const rank_thread& caller = this_rank_thread();
    return caller.owner == world_.get() && caller.rank == world_rank();
}

void sim_communicator::signal_unlocked(std::unique_lock<std::mutex>& held, const std::vector<int>& world_ranks) {
    if (world_ranks.empty()) return;
    held.unlock();
    for (int w : world_ranks) world_->signal(w);
    world_->relock(held);
}

request sim_communicator::do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) {
    return post_send(buf, contiguous_layout(count * size_of(type)), count, type, dest, tag);
}

request sim_communicator::do_isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag) {
    return post_send(array, layout, layout.bytes() / size_of(type), type, dest, tag);
}

request sim_communicator::post_send(const void* buf, const strided_layout& layout, std::size_t count, dtype type,
                                    int dest, int tag) {
    const std::size_t bytes = count * size_of(type);
    auto held = lock_for_call();
    const int dest_world = context_->members[static_cast<std::size_t>(dest)];
    channel& ch = context_->channel_at({dest, rank_, tag});
    const std::uint64_t number = ch.next_send++;
    // The copy that makes the send buffered: straight into the receive buffer when the receive
    // is already posted and matches, else into pooled storage. It runs outside the lock, with
    // the message marked in flight (its receive is not ready, its channel not dropped).
    void* to = nullptr;
    strided_layout to_layout = contiguous_layout(bytes);
    message m;
    m.type = type;
    m.count = count;
    m.in_flight = true;
    bool receive_posted = false;
    if (auto posted = ch.posted.find(number); posted != ch.posted.end()) {
        receive_posted = true;
        if (posted->second.type == type && posted->second.count == count) {
            to = posted->second.buf;
            to_layout = posted->second.layout;
            m.delivered = true;
        }
        context_->erase_posted(ch, posted);
    }
    if (!receive_posted && bytes >= deferred_bytes) {
        // Only its fingerprint is taken now (in flight meanwhile: not ready, nor movable).
        m.deferred = buf;
        m.deferred_layout = layout;
        m.sender_world = world_rank();
        message& queued = context_->add_message(ch, number, std::move(m));
        world_->deferred(world_rank()).push_back({context_, {dest, rank_, tag}, number});
        world_->request_created();
        held.unlock();
        const std::uint64_t taken = fingerprint(buf, layout);
        world_->relock(held);
        queued.deferred_fingerprint = taken;
        queued.in_flight = false;
        const bool wake = world_->mark_woken(dest_world);  // a dropped receive may wait for in_flight
        held.unlock();
        if (wake) world_->signal(dest_world);
        return std::make_unique<send_request>(anchor_, rank_, dest, tag, number, buf, layout, count, type, taken,
                                              true);
    }
    if (!m.delivered && bytes > 0) {
        m.data = world_->pool().take(bytes);
        to = m.data.bytes.get();
    }
    message& queued = context_->add_message(ch, number, std::move(m));
    world_->request_created();
    std::uint64_t copied = fingerprint(buf, 0);
    if (bytes > copy_unlocked_bytes) {
        held.unlock();
        copied = copy_with_fingerprint(to, to_layout, buf, layout);
        world_->relock(held);
    } else if (bytes > 0) {
        copied = copy_with_fingerprint(to, to_layout, buf, layout);
    }
    queued.in_flight = false;  // map nodes are stable, and an in-flight message keeps its channel
    const bool wake = world_->mark_woken(dest_world);
    held.unlock();
    if (wake) world_->signal(dest_world);
    return std::make_unique<send_request>(anchor_, rank_, dest, tag, number, buf, layout, count, type, copied,
                                          false);
}

request sim_communicator::do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) {
    return post_receive(buf, contiguous_layout(count * size_of(type)), count, type, source, tag);
}

request sim_communicator::do_irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag) {
    return post_receive(array, layout, layout.bytes() / size_of(type), type, source, tag);
}

request sim_communicator::post_receive(void* buf, const strided_layout& layout, std::size_t count, dtype type,
                                       int source, int tag) {
    auto held = lock_for_call();
    // Refused before it takes a number: the rank's later receives still match as posted.
    receive_spans& receiving = world_->receiving(world_rank());
    const void* run = single_run(buf, layout);
    if (const void* other = run ? receiving.overlapping(run, layout.run) : nullptr) {
        std::ostringstream out;
        out << "sim: " << who(*context_, rank_) << " posts a receive of " << count << " x " << to_string(type)
            << " from " << who(*context_, source) << " with tag " << tag << " on " << name(*context_)
            << " into bytes that its pending receive of "
            << static_cast<const recv_request*>(other)->describe()
            << " still writes; under MPI the two messages would land there in either order, or mixed: complete "
               "the first receive (wait_all) before posting another into its buffer";
        throw overlapping_receives(out.str());
    }
    if (run) receiving.make_room();  // list() below must not throw: the request's destructor needs the lock
    channel& ch = context_->channel_at({rank_, source, tag});
    const std::uint64_t number = ch.next_recv++;
    auto posted =
        std::make_unique<recv_request>(anchor_, ch, rank_, source, tag, number, buf, layout, count, type);
    if (run) posted->list();
    // Posted for a message not sent yet, or for a deferred one: its sender then moves the data
    // straight here (woken if it waits).
    int sender_to_wake = -1;
    if (number < ch.next_send) {
        auto m = ch.pending.find(number);
        if (m != ch.pending.end() && m->second.deferred != nullptr) sender_to_wake = m->second.sender_world;
    }
    if (number >= ch.next_send || sender_to_wake >= 0) context_->add_posted(ch, number, posted->target());
    world_->request_created();
    if (sender_to_wake >= 0 && world_->mark_woken(sender_to_wake)) {
        held.unlock();
        world_->signal(sender_to_wake);
    }
    return posted;
}

void sim_communicator::do_wait_all(std::vector<request>& requests) {
    std::vector<send_request*> sends;
    std::vector<recv_request*> pending;
    std::vector<broadcast_request*> broadcasts;
    sends.reserve(requests.size());
    pending.reserve(requests.size());
    for (auto& r : requests) {
        // (Type comparisons, not dynamic_cast: the request classes are final, and this runs
        // for every message.)
        request_state* given = r.get();
        const std::type_info& type = given == nullptr ? typeid(void) : typeid(*given);
        const bool is_send = type == typeid(send_request), is_broadcast = type == typeid(broadcast_request);
        DISTDL_REQUIRE((is_send || is_broadcast || type == typeid(recv_request)) &&
                           static_cast<sim_request*>(given)->owner() == world_.get(),
                       "sim: wait_all was given a request of another transport or another simulated world");
        const int made_by = static_cast<sim_request*>(given)->world_rank();
        if (made_by != world_rank())
            throw wrong_thread("sim: rank " + std::to_string(world_rank()) + " waits on a request of rank " +
                               std::to_string(made_by) + "; a request is waited on by the rank that made it");
        if (is_send) sends.push_back(static_cast<send_request*>(given));
        else if (is_broadcast) broadcasts.push_back(static_cast<broadcast_request*>(given));
        else pending.push_back(static_cast<recv_request*>(given));
    }
    // Outside the lock: reading a large buffer again takes about as long as copying it did, and
    // meanwhile every rank's communication would wait for the lock. (It reads this rank's
    // deferred sends, which only this rank's thread may change: from another thread,
    // lock_for_call refuses the call first.)
    if (on_own_thread()) {
        for (const auto* send : sends) send->verify_copied_buffer();
        for (const auto* broadcast : broadcasts) broadcast->verify();
    }
    auto held = lock_for_call();
    for (auto* send : sends) send->mark_waited();
    for (auto* broadcast : broadcasts) broadcast->mark_waited();
    // Deferred sends move now if their receives are posted, the others as their receives get
    // posted while this rank waits; those of this wait's sends still unreceived once its
    // receives are done go into pooled storage: a wait never blocks on a send (after it the
    // send buffers are the caller's again). Blocking until those receives are posted, as MPI
    // may for large messages, would save that copy but change which programs complete;
    // box_exchange, the engine of the primitives, never leaves one there (every peer posts its
    // receives before the messages this wait receives from it). Deferred sends of requests
    // not waited on here stay deferred.
    move_deferred(held, false);
    // Woken once every receive is ready, or earlier for a large buffered message (copying it
    // out overlaps with the others' arrival): a small exchange costs one wake-up, not one per
    // message. pending[0, known) have arrived, and stay so until this rank takes them, so each
    // check looks only at what came since: a wait on thousands of receives stays linear, not
    // quadratic (a large buffered message is noticed early only once those before it arrived).
    std::size_t known = 0;
    const std::function<bool()> ready_enough = [&] {
        if (deferred_receivable()) return true;
        while (known < pending.size()) {
            const message* m = pending[known]->arrived();
            if (m == nullptr) return false;
            ++known;
            if (!m->delivered && m->count * size_of(m->type) >= early_copy_out_bytes) return true;
        }
        return true;
    };
    const std::function<std::string()> describe = [&] {
        constexpr std::size_t shown = 8;  // a wait on thousands of receives stays one readable line
        std::string out = "waits in wait_all for ";
        for (std::size_t i = 0; i < pending.size() && i < shown; ++i)
            out += (i ? " and " : "") + pending[i]->describe();
        if (pending.size() > shown) out += " and " + std::to_string(pending.size() - shown) + " more receives";
        return out;
    };
    std::vector<std::pair<recv_request*, message>> arrived;
    while (!pending.empty()) {
        world_->wait_until(held, world_rank(), ready_enough, describe);
        move_deferred(held, false);
        arrived.clear();
        std::size_t buffered_bytes = 0, kept = 0;
        for (recv_request* r : pending) {  // in one pass: erasing one at a time is quadratic
            if (!r->ready()) {
                pending[kept++] = r;
                continue;
            }
            r->mark_waited();
            r->unlist();
            arrived.emplace_back(r, r->take());
            const message& m = arrived.back().second;
            if (!m.delivered) buffered_bytes += m.count * size_of(m.type);
        }
        pending.resize(kept);
        known = 0;
        // Buffered data is copied out without the lock (the receive buffers are this rank's),
        // unless it is so little that letting the lock go would cost more.
        const bool unlocked = buffered_bytes > copy_unlocked_bytes;
        if (unlocked) held.unlock();
        for (const auto& [r, m] : arrived) r->copy_in(m);
        if (unlocked) world_->relock(held);
        for (auto& entry : arrived) world_->pool().give(std::move(entry.second.data));
    }
    bool deferred_here = false;
    for (const send_request* send : sends) deferred_here = deferred_here || send->deferred();
    if (!deferred_here || world_->deferred(world_rank()).empty()) return;
    const std::string modified = move_deferred_where(held, [&](const deferred_send& d, const message&) {
        return std::any_of(sends.begin(), sends.end(), [&](const send_request* send) { return send->is(d); });
    });
    if (!modified.empty()) throw send_buffer_modified(modified);
}

bool sim_communicator::deferred_receivable() const {
    for (const auto& d : world_->deferred(world_rank())) {
        auto ch = d.context->channels.find(d.channel);
        if (ch != d.context->channels.end() && ch->second.posted.count(d.number) != 0) return true;
    }
    return false;
}

void sim_communicator::move_deferred(std::unique_lock<std::mutex>& held, bool or_buffer) {
    if (world_->deferred(world_rank()).empty()) return;
    const std::string modified =
        move_deferred_where(held, [or_buffer](const deferred_send&, const message&) { return or_buffer; });
    if (!modified.empty()) throw send_buffer_modified(modified);
}

std::string sim_communicator::move_deferred_where(std::unique_lock<std::mutex>& held,
                                                  const buffer_rule& buffer) {
    auto& list = world_->deferred(world_rank());
    std::string modified;
    if (list.empty()) return modified;
    std::vector<int> wake;
    for (std::size_t i = 0; i < list.size();) {
        const deferred_send d = list[i];  // only this rank's thread changes the list
        if (move_deferred_message(*world_, held, d, buffer, modified, wake))
            list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        else
            ++i;
    }
    signal_unlocked(held, wake);
    return modified;
}

void sim_communicator::wait_serving_deferred(std::unique_lock<std::mutex>& held, const std::function<bool()>& ready,
                                             const std::function<std::string()>& describe, std::string& modified) {
    if (world_->deferred(world_rank()).empty()) {
        // None to serve, and none can come while this rank waits here (only it adds them).
        if (!ready()) world_->wait_until(held, world_rank(), ready, describe);
        return;
    }
    const std::function<bool()> ready_or_serving = [&] { return ready() || deferred_receivable(); };
    const buffer_rule keep_deferred = [](const deferred_send&, const message&) { return false; };
    while (!ready()) {
        world_->wait_until(held, world_rank(), ready_or_serving, describe);
        const std::string found = move_deferred_where(held, keep_deferred);
        if (modified.empty()) modified = found;
    }
}

deferred_moves sim_communicator::deferred_moves_so_far() const {
    auto held = world_->lock();
    return world_->moves_of_deferred();
}

void sim_communicator::run_collective(collective_call call) {
    const int n = size();
    auto held = lock_for_call();  // first: a call it refuses (wrong_thread) leaves no trace
    const std::uint64_t number = collectives_called_++;
    // This rank's deferred sends stay deferred in the collective, which serves them as their
    // receives get posted (wait_serving_deferred): only those already receivable move now, and
    // those whose buffer this rank's collective writes go into pooled storage first (serving
    // one must never read a buffer that the collective may be writing meanwhile; the send's
    // wait checks that buffer again, as for any deferred send that moved before it).
    if (!world_->deferred(world_rank()).empty()) {
        const written_span written = written_bytes(call, rank_, static_cast<std::size_t>(n));
        const std::string modified_before =
            move_deferred_where(held, [&](const deferred_send&, const message& m) { return overlaps(m, written); });
        if (!modified_before.empty()) throw send_buffer_modified(modified_before);
        world_->throw_if_aborted();  // (the moves let the lock go: no arrival after an abort)
    }
    auto& slot = context_->collectives[number];
    if (slot.calls.empty()) slot.calls.resize(static_cast<std::size_t>(n));
    slot.calls[static_cast<std::size_t>(rank_)] = std::move(call);
    ++slot.arrived;

    const auto calls_so_far = [&] {
        std::vector<std::pair<int, std::string>> called;
        std::vector<int> missing;
        for (int r = 0; r < n; ++r) {
            const auto& c = slot.calls[static_cast<std::size_t>(r)];
            if (c) called.emplace_back(r, "called " + describe(*c));
            else missing.push_back(r);
        }
        std::string out = "; " + summarize_ranks(called);
        if (context_->id != 0) out += " (ranks of " + name(*context_) + ")";
        if (!missing.empty()) out += "; not yet called: ranks " + format_ranks(missing);
        return out;
    };
    const auto mismatch = [&](const std::string& what) {
        return "sim: collective mismatch on " + name(*context_) + " at collective call #" + std::to_string(number) +
               ": " + what + calls_so_far();
    };

    if (slot.first < 0) slot.first = rank_;
    if (slot.failure.empty()) {
        // Agreement is an equivalence: agreeing with the first arrival means agreeing with all.
        const auto& mine = *slot.calls[static_cast<std::size_t>(rank_)];
        if (!same_signature(*slot.calls[static_cast<std::size_t>(slot.first)], mine))
            slot.failure = mismatch("the ranks called different operations or arguments");
        if (slot.failure.empty() && slot.arrived == n) {
            const auto problems = count_mismatches(slot.calls);
            if (!problems.empty()) {
                std::string what = "all_to_all_v counts disagree (";
                for (std::size_t i = 0; i < problems.size() && i < 8; ++i) what += (i ? "; " : "") + problems[i];
                if (problems.size() > 8) what += "; and " + std::to_string(problems.size() - 8) + " more";
                slot.failure = mismatch(what + ")");
            } else {
                slot.in_shares = shares_in_parallel(slot.calls);
                // Serial path: every other member is blocked here, its buffers stable.
                if (!slot.in_shares) execute(slot.calls);
                slot.done = true;
            }
        }
        if (slot.done || !slot.failure.empty()) {
            std::vector<int> wake;
            for (int r = 0; r < n; ++r)
                if (r != rank_ && slot.calls[static_cast<std::size_t>(r)] &&
                    world_->mark_woken(context_->members[static_cast<std::size_t>(r)]))
                    wake.push_back(context_->members[static_cast<std::size_t>(r)]);
            signal_unlocked(held, wake);  // the slot stays: this member has not departed
        }
    }

    const std::function<bool()> ready = [&] { return slot.done || !slot.failure.empty(); };
    const std::function<std::string()> describe_wait = [&] {
        std::vector<int> arrived, missing;
        for (int r = 0; r < n; ++r) (slot.calls[static_cast<std::size_t>(r)] ? arrived : missing).push_back(r);
        return "waits in " + describe(*slot.calls[static_cast<std::size_t>(rank_)]) + " (collective call #" +
               std::to_string(number) + ") on " + name(*context_) + ", arrived: ranks " + format_ranks(arrived) +
               ", missing: ranks " + format_ranks(missing);
    };
    // The last arrival is done already (it may have let go of the lock to signal the others:
    // an abort since then must not stop it from doing its share, which the others wait for).
    std::string modified;  // a deferred send's buffer, found changed while serving it
    wait_serving_deferred(held, ready, describe_wait, modified);

    if (slot.failure.empty() && slot.in_shares) {
        // Each member moves its own share outside the lock, in parallel with the others, then
        // waits until every share is done: until then others may still read its buffers. The
        // calls are not changed while shares are under way (only counters are), and this wait
        // is neither a deadlock nor cut short by an abort: every member is past the rendezvous.
        const auto& calls = slot.calls;
        std::exception_ptr share_failure;
        held.unlock();
        try {
            execute_share(calls, static_cast<std::size_t>(rank_));
        } catch (...) {
            share_failure = std::current_exception();
        }
        world_->relock(held);
        if (++slot.shares_done == n) {
            std::vector<int> wake;
            for (int r = 0; r < n; ++r)
                if (r != rank_ && world_->mark_woken(context_->members[static_cast<std::size_t>(r)]))
                    wake.push_back(context_->members[static_cast<std::size_t>(r)]);
            signal_unlocked(held, wake);
        }
        world_->wait_for_peers(held, world_rank(), [&] { return slot.shares_done == n; });
        if (share_failure) {
            if (++slot.departed == n) context_->collectives.erase(number);
            std::rethrow_exception(share_failure);
        }
    }

    const std::string failure = slot.failure;
    if (++slot.departed == n) context_->collectives.erase(number);
    if (!failure.empty()) throw collective_mismatch(failure);
    if (!modified.empty()) throw send_buffer_modified(modified);
    // Receives posted meanwhile get their data now, not at this rank's next blocking call.
    move_deferred(held, false);
}

void sim_communicator::do_broadcast(void* buf, std::size_t count, dtype type, int root) {
    broadcast_as(buf, count, type, root, false);
}

void sim_communicator::broadcast_as(void* buf, std::size_t count, dtype type, int root, bool nonblocking) {
    collective_call c;
    c.op = collective_op::broadcast;
    c.type = type;
    c.count = count;
    c.root = root;
    c.send = buf;
    c.recv = buf;
    c.nonblocking = nonblocking;
    run_collective(std::move(c));
}

void sim_communicator::do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) {
    collective_call c;
    c.op = collective_op::reduce_sum;
    c.type = type;
    c.count = count;
    c.root = root;
    c.send = send;
    c.recv = rank_ == root ? recv : nullptr;
    run_collective(std::move(c));
}

void sim_communicator::do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) {
    collective_call c;
    c.op = collective_op::all_reduce_sum;
    c.type = type;
    c.count = count;
    c.send = send;
    c.recv = recv;
    run_collective(std::move(c));
}

void sim_communicator::do_all_gather(const void* send, void* recv, std::size_t count, dtype type) {
    collective_call c;
    c.op = collective_op::all_gather;
    c.type = type;
    c.count = count;
    c.send = send;
    c.recv = recv;
    run_collective(std::move(c));
}

void sim_communicator::do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                                       const std::vector<std::size_t>& send_displs, void* recv,
                                       const std::vector<std::size_t>& recv_counts,
                                       const std::vector<std::size_t>& recv_displs, dtype type) {
    collective_call c;
    c.op = collective_op::all_to_all_v;
    c.type = type;
    c.send = send;
    c.recv = recv;
    c.send_counts = send_counts;
    c.send_displs = send_displs;
    c.recv_counts = recv_counts;
    c.recv_displs = recv_displs;
    run_collective(std::move(c));
}

void sim_communicator::do_barrier() {
    collective_call c;
    c.op = collective_op::barrier;
    run_collective(std::move(c));
}

std::shared_ptr<communicator> sim_communicator::do_create_sub(const std::vector<int>& ranks) {
    // Only the listed members take part, so the parent's collective numbering cannot be used:
    // the n-th creation over the same member set meets in the same slot (as in MPI, creations
    // over one group must be called in the same order by its members).
    std::vector<int> members_sorted = ranks;
    if (!std::is_sorted(members_sorted.begin(), members_sorted.end())) {  // teams usually come sorted
        // Through a mask of the ranks (create_sub checked them: distinct, in range), linear.
        std::vector<char> listed(static_cast<std::size_t>(size()), 0);
        for (int r : ranks) listed[static_cast<std::size_t>(r)] = 1;
        members_sorted.clear();
        for (std::size_t r = 0; r < listed.size(); ++r)
            if (listed[r]) members_sorted.push_back(static_cast<int>(r));
    }
    auto held = lock_for_call();  // first: a call it refuses (wrong_thread) leaves no trace
    const std::uint64_t serial = creations_called_[member_set_key(members_sorted)]++;
    auto key = std::make_pair(std::move(members_sorted), serial);

    move_deferred(held, false);  // the others are served while this rank waits here
    world_->throw_if_aborted();
    auto& slot = context_->creations[key];
    if (slot.arrived.empty()) slot.list = ranks;
    slot.arrived.push_back(rank_);
    if (ranks != slot.list) slot.differing[rank_] = ranks;

    const auto lists_so_far = [&] {
        std::vector<std::pair<int, std::string>> called;
        for (int r : slot.arrived) {
            auto it = slot.differing.find(r);
            called.emplace_back(r, "called create_sub(" + format_list(it == slot.differing.end() ? slot.list : it->second) + ')');
        }
        return "; " + summarize_ranks(called);
    };
    if (slot.failure.empty()) {
        if (!slot.differing.empty())
            slot.failure = "sim: collective mismatch on " + name(*context_) +
                           ": members of a sub-communicator passed different rank lists" + lists_so_far();
        if (slot.failure.empty() && slot.arrived.size() == ranks.size()) {
            std::vector<int> world_ranks;
            world_ranks.reserve(ranks.size());
            for (int r : ranks) world_ranks.push_back(context_->members[static_cast<std::size_t>(r)]);
            slot.created = std::make_shared<context_state>(world_->next_context_id(), std::move(world_ranks));
            world_->register_context(slot.created);
        }
        if (slot.created || !slot.failure.empty()) {
            std::vector<int> wake;
            for (int r : slot.arrived)
                if (r != rank_ && world_->mark_woken(context_->members[static_cast<std::size_t>(r)]))
                    wake.push_back(context_->members[static_cast<std::size_t>(r)]);
            signal_unlocked(held, wake);  // the slot stays: this member has not departed
        }
    }

    const std::function<bool()> ready = [&] { return slot.created != nullptr || !slot.failure.empty(); };
    const std::function<std::string()> describe_wait = [&] {
        std::vector<int> missing;
        std::vector<char> here(static_cast<std::size_t>(size()), 0);
        for (int r : slot.arrived) here[static_cast<std::size_t>(r)] = 1;
        for (int r : ranks)
            if (!here[static_cast<std::size_t>(r)]) missing.push_back(r);
        std::vector<int> arrived = slot.arrived;
        std::sort(arrived.begin(), arrived.end());
        return "waits in create_sub(" + format_ranks(ranks) + ") on " + name(*context_) + ", arrived: ranks " +
               format_ranks(arrived) + ", missing: ranks " + format_ranks(missing);
    };
    std::string modified;  // a deferred send's buffer, found changed while serving it
    wait_serving_deferred(held, ready, describe_wait, modified);  // the last arrival is done

    const auto created = slot.created;
    const std::string failure = slot.failure;
    if (++slot.departed == ranks.size()) context_->creations.erase(key);
    if (!failure.empty()) throw collective_mismatch(failure);
    if (!modified.empty()) throw send_buffer_modified(modified);
    move_deferred(held, false);
    held.unlock();
    const int position = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
    return std::make_shared<sim_communicator>(world_, created, position);
}

// The data move at the call, as in the blocking broadcast: under MPI the members may overlap
// the broadcast with their own work, here they meet at the call, which is stricter (a member
// that waits between the call and its wait_all for a message another member sends only after
// its own call is a deadlock here, reported as such).
request sim_communicator::do_ibroadcast(void* buf, std::size_t count, dtype type, int root) {
    broadcast_as(buf, count, type, root, true);
    auto made = std::make_unique<broadcast_request>(anchor_, rank_, root, buf, count, type);
    auto held = world_->lock();
    world_->request_created();
    return made;
}

}  // namespace distdl::sim
