#include "core/communicator.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

#include "core/checked_arithmetic.hpp"

namespace distdl {

void traffic_log::record(std::uint64_t messages, std::uint64_t bytes) {
    total_.messages += messages;
    total_.bytes += bytes;
    if (current_ == nullptr) current_ = &by_label_[label_];
    auto& mine = *current_;
    mine.messages += messages;
    mine.bytes += bytes;
}

void traffic_log::clear() {
    total_ = {};
    by_label_.clear();
    current_ = nullptr;
}

traffic_scope::traffic_scope(traffic_log& log, std::string label) : log_(log), previous_(log.label()) {
    log_.set_label(std::move(label));
}

traffic_scope::~traffic_scope() { log_.set_label(previous_); }

communicator::communicator() : traffic_(std::make_shared<traffic_log>()) {}

void communicator::require_rank(int r, const char* what) const {
    DISTDL_REQUIRE(r >= 0 && r < size(), "communicator: " << what << " rank " << r << " out of range for size " << size());
}

namespace {

void require_buffer(const void* buf, std::size_t count, const char* what) {
    DISTDL_REQUIRE(buf != nullptr || count == 0, "communicator: " << what << " buffer is null for " << count << " elements");
}

void require_tag(int tag) {
    DISTDL_REQUIRE(tag >= 0 && tag <= max_tag, "communicator: tag " << tag << " outside [0, " << max_tag << "]");
}

// A type that is one of dtype's (not a cast integer, which has no size) for the call `what`.
void require_dtype(dtype type, const char* what) {
    DISTDL_REQUIRE(size_of(type) > 0, "communicator: " << what << " of dtype " << static_cast<int>(type)
                                                       << ", which is none of float32, float64, int32, int64, uint64, "
                                                          "byte");
}

// The bytes of `count` elements of `type` for the call `what`: refused when the type is none of
// dtype's or the bytes do not fit in 64 bits (a wrapped size would move too little data,
// silently). Every call passes here: the message is composed only on failure.
std::uint64_t bytes_of(std::size_t count, dtype type, const char* what) {
    require_dtype(type, what);
    std::size_t bytes;
    if (__builtin_mul_overflow(count, size_of(type), &bytes))
        throw_size_overflow(std::string("communicator: ") + what + " of " + to_string(type) + " elements", count, "*",
                            size_of(type));
    return bytes;
}

}  // namespace

std::shared_ptr<communicator> communicator::create_sub(const std::vector<int>& ranks) {
    DISTDL_REQUIRE(!ranks.empty(), "communicator: a sub-communicator needs at least one rank");
    for (int r : ranks) require_rank(r, "sub-communicator member");
    // Repeats through a mask of the ranks, not a sorted copy: thousands of simulated workers
    // each joining a communicator of thousands spent a second sorting.
    std::vector<char> listed(static_cast<std::size_t>(size()), 0);
    for (int r : ranks) {
        DISTDL_REQUIRE(!listed[static_cast<std::size_t>(r)],
                       "communicator: sub-communicator ranks " << format_list(ranks) << " repeat a rank");
        listed[static_cast<std::size_t>(r)] = 1;
    }
    DISTDL_REQUIRE(std::find(ranks.begin(), ranks.end(), rank()) != ranks.end(),
                   "communicator: rank " << rank() << " is not a member of " << format_list(ranks));
    auto sub = do_create_sub(ranks);
    sub->adopt_traffic_of(*this);
    return sub;
}

request communicator::isend(const void* buf, std::size_t count, dtype type, int dest, int tag) {
    require_rank(dest, "send destination");
    require_tag(tag);
    require_buffer(buf, count, "send");
    traffic_->record(1, bytes_of(count, type, "send"));
    return do_isend(buf, count, type, dest, tag);
}

request communicator::irecv(void* buf, std::size_t count, dtype type, int source, int tag) {
    require_rank(source, "receive source");
    require_tag(tag);
    require_buffer(buf, count, "receive");
    bytes_of(count, type, "receive");
    return do_irecv(buf, count, type, source, tag);
}

// The default strided transfer: a contiguous request of the transport on a buffer of its own,
// packed at isend, unpacked once wait_all has completed the receive.
class packed_transfer final : public request_state {
  public:
    packed_transfer(void* unpack_into, const strided_layout& layout) : unpack_into_(unpack_into), layout_(layout) {
        buffer_.resize(layout.bytes());
    }
    packed_transfer* as_packed() override { return this; }
    unsigned char* buffer() { return buffer_.data(); }
    request& inner() { return inner_; }
    void unpack() const {
        if (unpack_into_ != nullptr) copy_layout(unpack_into_, layout_, buffer_.data(), contiguous_layout(buffer_.size()));
    }

  private:
    void* unpack_into_;  // null for a send
    strided_layout layout_;
    std::vector<unsigned char> buffer_;
    request inner_;  // declared last: destroyed (and so completed or reported) before the buffer
};

namespace {

strided_layout checked_layout(const array_box& box, dtype type, const char* what) {
    strided_layout layout;
    DISTDL_REQUIRE(make_layout(box, size_of(type), layout, what),
                   "communicator: " << what << " at " << format_list(box.start) << " of extent "
                                    << format_list(box.extent) << " in an array of shape " << format_list(box.shape)
                                    << " needs more than " << strided_layout::max_dims
                                    << " strided dimensions");
    return layout;
}

}  // namespace

request communicator::isend_box(const void* array, const array_box& box, dtype type, int dest, int tag) {
    return isend_box(array, checked_layout(box, type, "send box"), type, dest, tag);
}

request communicator::irecv_box(void* array, const array_box& box, dtype type, int source, int tag) {
    return irecv_box(array, checked_layout(box, type, "receive box"), type, source, tag);
}

request communicator::isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag) {
    require_rank(dest, "send destination");
    require_tag(tag);
    require_dtype(type, "send box");
    const std::size_t bytes = layout.bytes();
    require_buffer(array, bytes, "send");
    traffic_->record(1, bytes);
    return do_isend_box(array, layout, type, dest, tag);
}

request communicator::irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag) {
    require_rank(source, "receive source");
    require_tag(tag);
    require_dtype(type, "receive box");
    require_buffer(array, layout.bytes(), "receive");
    return do_irecv_box(array, layout, type, source, tag);
}

request communicator::do_isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag) {
    auto packed = std::make_unique<packed_transfer>(nullptr, layout);
    copy_layout(packed->buffer(), contiguous_layout(layout.bytes()), array, layout);
    packed->inner() = do_isend(packed->buffer(), layout.bytes() / size_of(type), type, dest, tag);
    return packed;
}

request communicator::do_irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag) {
    auto packed = std::make_unique<packed_transfer>(array, layout);
    packed->inner() = do_irecv(packed->buffer(), layout.bytes() / size_of(type), type, source, tag);
    return packed;
}

void communicator::wait_all(std::vector<request>& requests) {
    bool any_packed = false;
    for (const auto& r : requests) {
        DISTDL_REQUIRE(r != nullptr, "communicator: wait_all given an empty request");
        any_packed = any_packed || r->as_packed() != nullptr;
    }
    if (!any_packed) {
        do_wait_all(requests);
        requests.clear();
        return;
    }
    // The transport waits on the contiguous requests inside the packed ones (put back if it
    // throws, so that each is destroyed before its buffer).
    std::vector<request> packed(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (packed_transfer* p = requests[i]->as_packed()) {
            packed[i] = std::move(requests[i]);
            requests[i] = std::move(p->inner());
        }
    }
    try {
        do_wait_all(requests);
    } catch (...) {
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (!packed[i]) continue;
            packed[i]->as_packed()->inner() = std::move(requests[i]);
            requests[i] = std::move(packed[i]);
        }
        throw;
    }
    for (const auto& p : packed)
        if (p) p->as_packed()->unpack();
    requests.clear();
}

void communicator::broadcast(void* buf, std::size_t count, dtype type, int root) {
    require_rank(root, "broadcast root");
    require_buffer(buf, count, "broadcast");
    const std::uint64_t bytes = bytes_of(count, type, "broadcast");
    if (rank() == root) traffic_->record(size() - 1, bytes * (size() - 1));
    do_broadcast(buf, count, type, root);
}

request communicator::ibroadcast(void* buf, std::size_t count, dtype type, int root) {
    require_rank(root, "broadcast root");
    require_buffer(buf, count, "broadcast");
    const std::uint64_t bytes = bytes_of(count, type, "broadcast");
    if (rank() == root) traffic_->record(size() - 1, bytes * (size() - 1));
    return do_ibroadcast(buf, count, type, root);
}

void communicator::reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) {
    require_rank(root, "reduce root");
    DISTDL_REQUIRE(is_summable(type), "communicator: cannot sum " << to_string(type));
    require_buffer(send, count, "reduce send");
    const std::uint64_t bytes = bytes_of(count, type, "reduce");
    if (rank() == root) require_buffer(recv, count, "reduce receive");
    else traffic_->record(1, bytes);
    do_reduce_sum(send, recv, count, type, root);
}

void communicator::all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) {
    DISTDL_REQUIRE(is_summable(type), "communicator: cannot sum " << to_string(type));
    require_buffer(send, count, "all-reduce send");
    require_buffer(recv, count, "all-reduce receive");
    const std::uint64_t bytes = bytes_of(count, type, "all-reduce");
    if (size() > 1) traffic_->record(1, bytes);
    do_all_reduce_sum(send, recv, count, type);
}

void communicator::all_gather(const void* send, void* recv, std::size_t count, dtype type) {
    require_buffer(send, count, "all-gather send");
    const std::uint64_t bytes = bytes_of(count, type, "all-gather");
    bytes_of(checked_mul(count, static_cast<std::size_t>(size()), "communicator: all-gather receive elements"), type,
             "all-gather receive");
    require_buffer(recv, count * size(), "all-gather receive");
    traffic_->record(size() - 1, bytes * (size() - 1));
    do_all_gather(send, recv, count, type);
}

void communicator::all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                                const std::vector<std::size_t>& send_displs, void* recv,
                                const std::vector<std::size_t>& recv_counts,
                                const std::vector<std::size_t>& recv_displs, dtype type) {
    const auto n = static_cast<std::size_t>(size());
    DISTDL_REQUIRE(send_counts.size() == n && send_displs.size() == n && recv_counts.size() == n &&
                       recv_displs.size() == n,
                   "communicator: all_to_all_v needs " << n << " counts and displacements per side");
    std::size_t send_extent = 0, recv_extent = 0;
    for (std::size_t r = 0; r < n; ++r) {
        send_extent = std::max(send_extent, checked_add(send_displs[r], send_counts[r],
                                                        "communicator: all_to_all_v send displacement + count"));
        recv_extent = std::max(recv_extent, checked_add(recv_displs[r], recv_counts[r],
                                                        "communicator: all_to_all_v receive displacement + count"));
    }
    bytes_of(send_extent, type, "all_to_all_v send");
    bytes_of(recv_extent, type, "all_to_all_v receive");
    for (std::size_t r = 0; r < n; ++r)
        if (r != static_cast<std::size_t>(rank()) && send_counts[r] > 0)
            traffic_->record(1, send_counts[r] * size_of(type));
    require_buffer(send, send_extent, "all_to_all_v send");
    require_buffer(recv, recv_extent, "all_to_all_v receive");
    do_all_to_all_v(send, send_counts, send_displs, recv, recv_counts, recv_displs, type);
}

void communicator::barrier() { do_barrier(); }

}  // namespace distdl
