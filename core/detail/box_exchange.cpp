#include "core/detail/box_exchange.hpp"

#include <exception>
#include <utility>

#include "core/error.hpp"

namespace distdl::detail {

namespace {

// Checks one list of the plan against its array and lays out its pack buffer.
template <class Slot>
std::size_t lay_out(const std::vector<box_transfer>& list, const shape_t& shape, const char* what,
                    std::vector<Slot>& slots) {
    std::size_t offset = 0;
    int previous = -1;
    for (const auto& t : list) {
        DISTDL_REQUIRE_AS(t.peer > previous, ::distdl::error,
                          "internal error: box exchange plan lists its " << what << " out of peer order (peer "
                                                                         << t.peer << " after " << previous << ")");
        previous = t.peer;
        require_box_inside(shape, t.start, t.extent, what);
        const std::size_t count = volume(t.extent);
        slots.push_back({offset, count, box_is_contiguous(shape, t.start, t.extent), box_offset(shape, t.start)});
        offset += count;
    }
    return offset;
}

}  // namespace

template <class T>
box_exchange<T>::box_exchange(box_exchange_plan plan, int forward_tag, int reverse_tag)
    : plan_(std::move(plan)), forward_tag_(forward_tag), reverse_tag_(reverse_tag) {
    send_volume_ = lay_out(plan_.sends, plan_.source_shape, "send", send_slots_);
    receive_volume_ = lay_out(plan_.receives, plan_.dest_shape, "receive", receive_slots_);
    if (plan_.has_self) {
        require_box_inside(plan_.source_shape, plan_.self.source_start, plan_.self.extent, "self source");
        require_box_inside(plan_.dest_shape, plan_.self.dest_start, plan_.self.extent, "self destination");
    }
}

template <class T>
void box_exchange<T>::forward(communicator& comm, const T* src, T* dst, const std::function<void()>& in_flight) {
    run(comm, plan_.sends, send_slots_, send_buffer_, plan_.source_shape, src, plan_.receives, receive_slots_,
        receive_buffer_, plan_.dest_shape, dst, box_op::assign, forward_tag_, true, in_flight);
}

template <class T>
void box_exchange<T>::reverse(communicator& comm, const T* dst_like, T* src_like, box_op op,
                              const std::function<void()>& in_flight) {
    run(comm, plan_.receives, receive_slots_, receive_buffer_, plan_.dest_shape, dst_like, plan_.sends, send_slots_,
        send_buffer_, plan_.source_shape, src_like, op, reverse_tag_, false, in_flight);
}

template <class T>
void box_exchange<T>::run(communicator& comm, const std::vector<box_transfer>& outgoing,
                          const std::vector<slot>& out_slots, std::vector<T>& out_buffer, const shape_t& out_shape,
                          const T* out_data, const std::vector<box_transfer>& incoming,
                          const std::vector<slot>& in_slots, std::vector<T>& in_buffer, const shape_t& in_shape,
                          T* in_data, box_op op, int tag, bool forward,
                          const std::function<void()>& in_flight) {
    const auto packed = [](std::vector<T>& buffer, const std::vector<slot>& slots) {
        if (buffer.empty() && !slots.empty()) buffer.resize(slots.back().buffer_offset + slots.back().count);
        return buffer.data();
    };
    requests_.clear();
    // Contiguous boxes are received in place unless they are added (then into the buffer).
    for (std::size_t i = 0; i < incoming.size(); ++i) {
        const slot& s = in_slots[i];
        if (s.count == 0) continue;
        T* where = s.contiguous && op == box_op::assign ? in_data + s.flat : packed(in_buffer, in_slots) + s.buffer_offset;
        requests_.push_back(comm.irecv(where, s.count, incoming[i].peer, tag));
    }
    for (std::size_t i = 0; i < outgoing.size(); ++i) {
        const slot& s = out_slots[i];
        if (s.count == 0) continue;
        const T* from = out_data + s.flat;
        if (!s.contiguous) {
            T* buffer = packed(out_buffer, out_slots) + s.buffer_offset;
            pack_box(out_data, out_shape, outgoing[i].start, outgoing[i].extent, buffer);
            from = buffer;
        }
        requests_.push_back(comm.isend(from, s.count, outgoing[i].peer, tag));
    }
    // The self box, while the messages are in flight (it is the first term of every sum).
    if (plan_.has_self) {
        const self_transfer& t = plan_.self;
        if (forward)
            copy_box(out_data, out_shape, t.source_start, in_data, in_shape, t.dest_start, t.extent, box_op::assign);
        else
            copy_box(out_data, out_shape, t.dest_start, in_data, in_shape, t.source_start, t.extent, box_op::assign);
    }
    if (in_flight) {
        try {
            in_flight();
        } catch (...) {
            // Every worker posted all its messages: complete them before anything is reused.
            if (!requests_.empty()) comm.wait_all(requests_);
            throw;
        }
    }
    if (!requests_.empty()) comm.wait_all(requests_);
    for (std::size_t i = 0; i < incoming.size(); ++i) {
        const slot& s = in_slots[i];
        if (s.count == 0 || (s.contiguous && op == box_op::assign)) continue;
        unpack_box(in_buffer.data() + s.buffer_offset, in_data, in_shape, incoming[i].start, incoming[i].extent, op);
    }
}

template class box_exchange<float>;
template class box_exchange<double>;

}  // namespace distdl::detail
