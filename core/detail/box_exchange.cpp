#include "core/detail/box_exchange.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#include "core/detail/call_status.hpp"
#include "core/error.hpp"

namespace distdl::detail {

namespace {

// Checks one list of the plan against its array and lays out its pack buffer.
template <class Slot>
std::size_t lay_out(const std::vector<box_transfer>& list, const shape_t& shape, std::size_t element_size,
                    const char* what, std::vector<Slot>& slots) {
    std::size_t offset = 0;
    int previous = -1;
    for (const auto& t : list) {
        DISTDL_REQUIRE_AS(t.peer > previous, ::distdl::error,
                          "internal error: box exchange plan lists its " << what << " out of peer order (peer "
                                                                         << t.peer << " after " << previous << ")");
        previous = t.peer;
        require_box_inside(shape, t.start, t.extent, what);
        const std::size_t count = volume(t.extent);
        Slot s{offset, count, false, {}};
        s.strided = make_layout(array_box{shape, t.start, t.extent}, element_size, s.layout, what);
        slots.push_back(s);
        offset += count;
    }
    return offset;
}

}  // namespace

template <class T>
box_exchange<T>::box_exchange(box_exchange_plan plan, int forward_tag, int reverse_tag, std::size_t meeting_limit)
    : plan_(std::move(plan)), forward_tag_(forward_tag), reverse_tag_(reverse_tag), meeting_limit_(meeting_limit) {
    send_volume_ = lay_out(plan_.sends, plan_.source_shape, sizeof(T), "send", send_slots_);
    receive_volume_ = lay_out(plan_.receives, plan_.dest_shape, sizeof(T), "receive", receive_slots_);
    if (plan_.has_self) {
        require_box_inside(plan_.source_shape, plan_.self.source_start, plan_.self.extent, "self source");
        require_box_inside(plan_.dest_shape, plan_.self.dest_start, plan_.self.extent, "self destination");
    }
}

template <class T>
void box_exchange<T>::forward(communicator& comm, const T* src, T* dst, const std::function<void()>& before_sends) {
    run(comm, plan_.sends, send_slots_, send_buffer_, plan_.source_shape, src, plan_.receives, receive_slots_,
        receive_buffer_, plan_.dest_shape, dst, box_op::assign, forward_tag_, true, before_sends, nullptr);
}

template <class T>
void box_exchange<T>::reverse(communicator& comm, const T* dst_like, T* src_like, box_op op,
                              const std::function<void()>& before_sends) {
    run(comm, plan_.receives, receive_slots_, receive_buffer_, plan_.dest_shape, dst_like, plan_.sends, send_slots_,
        send_buffer_, plan_.source_shape, src_like, op, reverse_tag_, false, before_sends, nullptr);
}

template <class T>
bool box_exchange<T>::forward(communicator& comm, const T* src, T* dst, const std::string& problem, bool changed,
                              bool self_placed) {
    return agreed_run(comm, true, src, dst, box_op::assign, problem, changed, self_placed);
}

template <class T>
bool box_exchange<T>::reverse(communicator& comm, const T* dst_like, T* src_like, box_op op,
                              const std::string& problem, bool changed, bool self_placed) {
    return agreed_run(comm, false, dst_like, src_like, op, problem, changed, self_placed);
}

namespace {

// Status word bits.
constexpr unsigned status_problem = 1;
constexpr unsigned status_changed = 2;
// Status-only messages use their direction's tag plus this.
constexpr int status_tag_offset = 1 << 14;

}  // namespace

template <class T>
bool box_exchange<T>::agreed_run(communicator& comm, bool forward, const T* from, T* to, box_op op,
                                 const std::string& problem, bool changed, bool self_placed) {
    const auto go = [&](const std::function<void()>& before_sends, const unsigned* status) {
        if (forward)
            return run(comm, plan_.sends, send_slots_, send_buffer_, plan_.source_shape, from, plan_.receives,
                       receive_slots_, receive_buffer_, plan_.dest_shape, to, op, forward_tag_, true, before_sends,
                       status, self_placed);
        return run(comm, plan_.receives, receive_slots_, receive_buffer_, plan_.dest_shape, from, plan_.sends,
                   send_slots_, send_buffer_, plan_.source_shape, to, op, reverse_tag_, false, before_sends, status,
                   self_placed);
    };
    if (!meets(comm) && comm.collectives_are_one_step()) {
        // The simulator: one all-reduce once every receive is posted, before any send, so that
        // no large message finds its receive unposted (the simulator would then defer it, and
        // read its send buffer once more: at isend for its fingerprint, then as it moves).
        bool any_changed = false;
        go([&] { any_changed = agree_on_call(comm, problem, changed); }, nullptr);
        return any_changed;
    }
    // The status goes with the data: in the meeting, in messages to every peer, or (larger
    // communicators on MPI) to rank 0 and back as the OR (run() sees a status on a communicator
    // above the limit).
    const unsigned mine = (problem.empty() ? 0u : status_problem) | (changed ? status_changed : 0u);
    const unsigned all = go({}, &mine);
    // Every worker saw every status word: all of them take this branch together.
    if (all & status_problem) agree_on_call(comm, problem, changed);  // throws the agreed error
    return (all & status_changed) != 0;
}

template <class T>
unsigned box_exchange<T>::run(communicator& comm, const std::vector<box_transfer>& outgoing,
                              const std::vector<slot>& out_slots, std::vector<T>& out_buffer,
                              const shape_t& out_shape, const T* out_data, const std::vector<box_transfer>& incoming,
                              const std::vector<slot>& in_slots, std::vector<T>& in_buffer, const shape_t& in_shape,
                              T* in_data, box_op op, int tag, bool forward,
                              const std::function<void()>& before_sends, const unsigned* status, bool self_placed) {
    if (meets(comm))
        return run_meeting(comm, outgoing, out_shape, out_data, incoming, in_shape, in_data, op, forward,
                           before_sends, status, self_placed);
    // Buffer layout: transfer i at its slot's offset plus i (room for an appended status).
    const auto packed = [](std::vector<T>& buffer, const std::vector<slot>& slots) {
        if (buffer.empty() && !slots.empty()) buffer.resize(slots.back().buffer_offset + slots.back().count + slots.size());
        return buffer.data();
    };
    const bool via_root = status != nullptr && comm.size() > status_in_messages_limit;
    const auto appended = [status, via_root](const slot& s) {
        return status != nullptr && !via_root && s.count * sizeof(T) <= status_appended_limit;
    };
    const int me = comm.rank();
    const std::size_t n = static_cast<std::size_t>(comm.size());
    const int status_tag = tag + status_tag_offset;
    const int result_tag = tag + status_tag_offset + status_tag_offset / 2;  // below 32767 (MPI_TAG_UB minimum)
    // has_message_ bits: a data message from / to that peer carries the status.
    constexpr char incoming_status = 1, outgoing_status = 2;
    if (status != nullptr) {
        status_out_ = static_cast<T>(*status);
        status_in_.assign(n, T(0));
        has_message_.assign(n, 0);
    }
    requests_.clear();
    // Boxes are received in place (contiguous, or as a strided message where the transport
    // moves boxes) unless they are added or carry the status (then into the buffer).
    const bool boxes = comm.moves_boxes();
    const auto strided = [&](const slot& s) {
        return boxes && !s.contiguous() && s.strided && s.layout.run >= strided_min_run_bytes && !appended(s);
    };
    const auto in_place = [&](const slot& s) {
        return op == box_op::assign && !appended(s) && (s.contiguous() || strided(s));
    };
    for (std::size_t i = 0; i < incoming.size(); ++i) {
        const slot& s = in_slots[i];
        if (s.count == 0) continue;
        const int peer = incoming[i].peer;
        const bool app = appended(s);
        if (in_place(s) && !s.contiguous()) {
            requests_.push_back(comm.irecv_box(static_cast<void*>(in_data), s.layout, dtype_of<T>(), peer, tag));
            continue;
        }
        T* where = in_place(s) ? in_data + s.flat() : packed(in_buffer, in_slots) + s.buffer_offset + i;
        requests_.push_back(comm.irecv(where, s.count + (app ? 1 : 0), peer, tag));
        if (app) has_message_[static_cast<std::size_t>(peer)] |= incoming_status;
    }
    // Status words that travel on their own ("<label>.status" in the traffic log).
    std::optional<traffic_scope> status_scope;
    // (The label is only built when such a message exists: no allocation otherwise.)
    const auto alone = [&](char bit) {
        for (std::size_t q = 0; q < n; ++q)
            if (static_cast<int>(q) != me && !(has_message_[q] & bit)) return true;
        return false;
    };
    if (via_root) {
        // Rank 0 receives every status word; every other rank sends its word and receives the OR.
        status_scope.emplace(comm.traffic(), comm.traffic().label() + ".status");
        if (me == 0) {
            for (std::size_t q = 1; q < n; ++q)
                requests_.push_back(comm.irecv(&status_in_[q], 1, static_cast<int>(q), status_tag));
        } else {
            requests_.push_back(comm.irecv(&status_result_, 1, 0, result_tag));
            requests_.push_back(comm.isend(&status_out_, 1, 0, status_tag));
        }
        status_scope.reset();
    } else if (status != nullptr && alone(incoming_status)) {
        status_scope.emplace(comm.traffic(), comm.traffic().label() + ".status");
        for (std::size_t q = 0; q < n; ++q)
            if (static_cast<int>(q) != me && !(has_message_[q] & incoming_status))
                requests_.push_back(comm.irecv(&status_in_[q], 1, static_cast<int>(q), status_tag));
        status_scope.reset();
    }
    // Every worker posts its receives before it runs before_sends; when that is a collective,
    // every receive is posted before any message is sent.
    std::exception_ptr failed;
    if (before_sends) {
        try {
            before_sends();
        } catch (...) {
            failed = std::current_exception();  // rethrown once every message completed
        }
    }
    for (std::size_t i = 0; i < outgoing.size(); ++i) {
        const slot& s = out_slots[i];
        if (s.count == 0) continue;
        const int peer = outgoing[i].peer;
        const bool app = appended(s);
        if (strided(s)) {
            requests_.push_back(comm.isend_box(static_cast<const void*>(out_data), s.layout, dtype_of<T>(), peer, tag));
            continue;
        }
        const T* from = out_data + s.flat();
        if (!s.contiguous() || app) {
            T* buffer = packed(out_buffer, out_slots) + s.buffer_offset + i;
            pack_box(out_data, out_shape, outgoing[i].start, outgoing[i].extent, buffer);
            if (app) buffer[s.count] = status_out_;
            from = buffer;
        }
        requests_.push_back(comm.isend(from, s.count + (app ? 1 : 0), peer, tag));
        if (app) has_message_[static_cast<std::size_t>(peer)] |= outgoing_status;
    }
    if (status != nullptr && !via_root && alone(outgoing_status)) {
        status_scope.emplace(comm.traffic(), comm.traffic().label() + ".status");
        for (std::size_t q = 0; q < n; ++q)
            if (static_cast<int>(q) != me && !(has_message_[q] & outgoing_status))
                requests_.push_back(comm.isend(&status_out_, 1, static_cast<int>(q), status_tag));
        status_scope.reset();
    }
    // The self box, while the messages are in flight (it is the first term of every sum).
    if (!self_placed) copy_self(forward, out_data, out_shape, in_data, in_shape);
    if (!requests_.empty()) comm.wait_all(requests_);
    if (failed) std::rethrow_exception(failed);  // nothing is unpacked
    unsigned all = 0;
    if (via_root) {
        if (me == 0) {
            all = *status;
            for (std::size_t q = 1; q < n; ++q) all |= static_cast<unsigned>(status_in_[q]);
            status_result_ = static_cast<T>(all);
            traffic_scope scope(comm.traffic(), comm.traffic().label() + ".status");
            requests_.clear();
            for (std::size_t q = 1; q < n; ++q)
                requests_.push_back(comm.isend(&status_result_, 1, static_cast<int>(q), result_tag));
            comm.wait_all(requests_);
        } else {
            all = static_cast<unsigned>(status_result_);
        }
        if (all & status_problem) return all;  // nothing is unpacked: the call fails everywhere
    } else if (status != nullptr) {
        all = *status;
        for (std::size_t i = 0; i < incoming.size(); ++i) {
            const slot& s = in_slots[i];
            if (s.count != 0 && appended(s))
                status_in_[static_cast<std::size_t>(incoming[i].peer)] = in_buffer[s.buffer_offset + i + s.count];
        }
        for (std::size_t q = 0; q < n; ++q) all |= static_cast<unsigned>(status_in_[q]);
        if (all & status_problem) return all;  // nothing is unpacked: the call fails everywhere
    }
    for (std::size_t i = 0; i < incoming.size(); ++i) {
        const slot& s = in_slots[i];
        if (s.count == 0 || in_place(s)) continue;
        unpack_box(in_buffer.data() + s.buffer_offset + i, in_data, in_shape, incoming[i].start, incoming[i].extent, op);
    }
    return all;
}

template <class T>
void box_exchange<T>::copy_self(bool forward, const T* out_data, const shape_t& out_shape, T* in_data,
                                const shape_t& in_shape) const {
    if (!plan_.has_self) return;
    const self_transfer& t = plan_.self;
    if (forward)
        copy_box(out_data, out_shape, t.source_start, in_data, in_shape, t.dest_start, t.extent, box_op::assign);
    else
        copy_box(out_data, out_shape, t.dest_start, in_data, in_shape, t.source_start, t.extent, box_op::assign);
}

template <class T>
bool box_exchange<T>::meets(communicator& comm) {
    if (meeting_ < 0) {
        if (!comm.collectives_are_one_step() || comm.size() > meeting_max_workers) {
            meeting_ = 0;
        } else {
            const bool large = std::max(send_volume_, receive_volume_) * sizeof(T) > meeting_limit_;
            traffic_scope scope(comm.traffic(), comm.traffic().label() + ".plan");
            meeting_ = comm.all_reduce_sum(std::uint64_t{large}) == 0 ? 1 : 0;
        }
    }
    return meeting_ == 1;
}

template <class T>
unsigned box_exchange<T>::run_meeting(communicator& comm, const std::vector<box_transfer>& outgoing,
                                      const shape_t& out_shape, const T* out_data,
                                      const std::vector<box_transfer>& incoming, const shape_t& in_shape, T* in_data,
                                      box_op op, bool forward, const std::function<void()>& before_sends,
                                      const unsigned* status, bool self_placed) {
    const auto n = static_cast<std::size_t>(comm.size());
    const auto me = static_cast<std::size_t>(comm.rank());
    // Per peer: its box, then (with a status) one status word; every other worker gets a word.
    const std::size_t word = status != nullptr ? 1 : 0;
    const auto lay_out_peers = [&](const std::vector<box_transfer>& list, std::vector<std::size_t>& counts,
                                   std::vector<std::size_t>& displs, std::vector<T>& buffer) {
        counts.assign(n, 0);
        displs.assign(n, 0);
        for (const auto& t : list) counts[static_cast<std::size_t>(t.peer)] = volume(t.extent);
        std::size_t at = 0;
        for (std::size_t q = 0; q < n; ++q) {
            if (q != me) counts[q] += word;
            displs[q] = at;
            at += counts[q];
        }
        if (buffer.size() < at) buffer.resize(at);
        return buffer.data();
    };
    T* send = lay_out_peers(outgoing, meet_send_counts_, meet_send_displs_, meet_send_);
    T* recv = lay_out_peers(incoming, meet_recv_counts_, meet_recv_displs_, meet_recv_);
    for (const auto& t : outgoing)
        pack_box(out_data, out_shape, t.start, t.extent, send + meet_send_displs_[static_cast<std::size_t>(t.peer)]);
    if (status != nullptr)
        for (std::size_t q = 0; q < n; ++q)
            if (q != me) send[meet_send_displs_[q] + meet_send_counts_[q] - 1] = static_cast<T>(*status);
    {
        // A worker that sends no data here sends only status words ("<label>.status" traffic).
        std::optional<traffic_scope> status_only;
        if (status != nullptr && (forward ? send_volume_ : receive_volume_) == 0)
            status_only.emplace(comm.traffic(), comm.traffic().label() + ".status");
        comm.all_to_all_v(send, meet_send_counts_, meet_send_displs_, recv, meet_recv_counts_, meet_recv_displs_,
                          dtype_of<T>());
    }
    // The self box first (the first term of every sum), then the peers' boxes in increasing
    // peer order, as run() does: the same bits on every transport.
    if (!self_placed) copy_self(forward, out_data, out_shape, in_data, in_shape);
    // After the meeting (which no worker may miss); if it throws, nothing is unpacked.
    if (before_sends) before_sends();
    unsigned all = 0;
    if (status != nullptr) {
        all = *status;
        for (std::size_t q = 0; q < n; ++q)
            if (q != me) all |= static_cast<unsigned>(recv[meet_recv_displs_[q] + meet_recv_counts_[q] - 1]);
        if (all & status_problem) return all;  // nothing is unpacked: the call fails everywhere
    }
    for (const auto& t : incoming)
        unpack_box(recv + meet_recv_displs_[static_cast<std::size_t>(t.peer)], in_data, in_shape, t.start, t.extent,
                   op);
    return all;
}

template class box_exchange<float>;
template class box_exchange<double>;

}  // namespace distdl::detail
