#pragma once
// The one interface both transports (simulator/, mpi_backend/) implement. The public,
// non-virtual functions check their arguments once for every transport (ranks, tags, null
// buffers, a dtype none of dtype's, sizes whose bytes do not fit in 64 bits) and count traffic;
// the protected do_* functions are what a transport provides. A rank's communicators and
// requests are used from one thread, the rank's own (Open MPI is initialized with
// MPI_THREAD_FUNNELED; a call from another thread is refused, by the simulator with
// sim::wrong_thread, on Open MPI, at that thread level, with communication_error).
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/array_box.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"

namespace distdl {

// Messages and bytes this rank sent, in total and per label (the primitive that was running).
struct traffic_totals {
    std::uint64_t messages = 0;
    std::uint64_t bytes = 0;
};

class traffic_log {
  public:
    traffic_log() = default;
    // A copy looks its label up afresh (the cached entry belongs to the original's map).
    traffic_log(const traffic_log& other)
        : label_(other.label_), total_(other.total_), by_label_(other.by_label_) {}
    traffic_log& operator=(const traffic_log& other) {
        label_ = other.label_;
        total_ = other.total_;
        by_label_ = other.by_label_;
        current_ = nullptr;
        return *this;
    }
    void record(std::uint64_t messages, std::uint64_t bytes);
    const traffic_totals& total() const { return total_; }
    const std::map<std::string, traffic_totals>& by_label() const { return by_label_; }
    const std::string& label() const { return label_; }
    void set_label(std::string label) {
        label_ = std::move(label);
        current_ = nullptr;
    }
    void clear();

  private:
    std::string label_ = "unlabelled";
    traffic_totals total_;
    std::map<std::string, traffic_totals> by_label_;
    traffic_totals* current_ = nullptr;  // by_label_[label_] once looked up (map nodes stay put)
};

// Names the traffic recorded while it lives (restores the previous label on exit).
class traffic_scope {
  public:
    traffic_scope(traffic_log& log, std::string label);
    ~traffic_scope();
    traffic_scope(const traffic_scope&) = delete;
    traffic_scope& operator=(const traffic_scope&) = delete;

  private:
    traffic_log& log_;
    std::string previous_;
};

class packed_transfer;

// A pending nonblocking operation (send, receive, broadcast); completed by communicator::wait_all.
class request_state {
  public:
    virtual ~request_state() = default;
    // The default strided transfer (core/communicator.cpp) this request is, if it is one:
    // wait_all hands the transport the contiguous request inside it.
    virtual packed_transfer* as_packed() { return nullptr; }

  protected:
    request_state() = default;
};
using request = std::unique_ptr<request_state>;

// Largest tag every transport accepts (MPI guarantees at least 32767).
constexpr int max_tag = 32767;

class communicator {
  public:
    virtual ~communicator() = default;
    communicator(const communicator&) = delete;
    communicator& operator=(const communicator&) = delete;

    int rank() const { return do_rank(); }
    int size() const { return do_size(); }

    // Sub-communicator of the listed ranks (in this communicator's numbering, in the new
    // order). Collective over the listed ranks only; only they may call it, and every
    // member must pass the same list (the same ranks in another order are refused on every
    // member; other ranks wait, as for a member that does not call).
    std::shared_ptr<communicator> create_sub(const std::vector<int>& ranks);

    request isend(const void* buf, std::size_t count, dtype type, int dest, int tag);
    request irecv(void* buf, std::size_t count, dtype type, int source, int tag);
    // Strided point-to-point (core/array_box.hpp): sends the elements of a box of a row-major
    // array / receives into one. The message is the box's volume in row-major box order, so it
    // matches a send or receive of that many elements, contiguous or box, of the same type;
    // the array is the caller's until wait_all, as for isend/irecv. A box that needs more than
    // strided_layout::max_dims outer dimensions is refused (invalid_argument). Where
    // moves_boxes() the transport copies straight between the two arrays (the simulator: the
    // data moves once); elsewhere the request packs into (unpacks from, in wait_all) a buffer
    // of its own, allocated per call. The overloads taking a layout skip the checks of the box
    // (make_layout did them).
    request isend_box(const void* array, const array_box& box, dtype type, int dest, int tag);
    request irecv_box(void* array, const array_box& box, dtype type, int source, int tag);
    request isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag);
    request irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag);
    // Whether boxes move without a packed copy on this transport (a hint: code that keeps its
    // own pack buffers may prefer them where this is false).
    bool moves_boxes() const { return do_moves_boxes(); }
    void wait_all(std::vector<request>& requests);

    void broadcast(void* buf, std::size_t count, dtype type, int root);
    // The same broadcast, nonblocking: complete once wait_all has run on the request (alone or
    // with sends and receives); until then the root must not write buf and the others must not
    // touch it. Collective, ordered with the other collectives as they are; every member must
    // call ibroadcast (MPI never matches it with a blocking broadcast; the simulator cannot
    // tell them apart). The simulator runs it at the call (it returns once every member has
    // called it): between the call and the wait, no member may wait for another's message.
    request ibroadcast(void* buf, std::size_t count, dtype type, int root);
    // The collectives below take send and receive buffers that overlap (the same array, or
    // shifted): the result is that of the data as they were at the call, on every transport.
    // recv is only written on the root (and may be null on the other ranks).
    void reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root);
    void all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type);
    // recv holds size() * count elements, rank r's block at r * count.
    void all_gather(const void* send, void* recv, std::size_t count, dtype type);
    // Counts and displacements in elements, one entry per rank.
    void all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                      const std::vector<std::size_t>& send_displs, void* recv,
                      const std::vector<std::size_t>& recv_counts,
                      const std::vector<std::size_t>& recv_displs, dtype type);
    void barrier();

    // Whether a collective costs one meeting of the ranks here (the simulator) rather than about
    // log P dependent message rounds (MPI): code that could agree either by a collective or by
    // messages picks by it. A hint only; every operation is correct on every transport.
    bool collectives_are_one_step() const { return do_collectives_are_one_step(); }

    // Shared by a rank's communicator and every sub-communicator derived from it.
    traffic_log& traffic() { return *traffic_; }

    // Typed conveniences.
    template <class T>
    request isend(const T* buf, std::size_t count, int dest, int tag) {
        return isend(static_cast<const void*>(buf), count, dtype_of<T>(), dest, tag);
    }
    template <class T>
    request irecv(T* buf, std::size_t count, int source, int tag) {
        return irecv(static_cast<void*>(buf), count, dtype_of<T>(), source, tag);
    }
    template <class T>
    request isend_box(const T* array, const array_box& box, int dest, int tag) {
        return isend_box(static_cast<const void*>(array), box, dtype_of<T>(), dest, tag);
    }
    template <class T>
    request irecv_box(T* array, const array_box& box, int source, int tag) {
        return irecv_box(static_cast<void*>(array), box, dtype_of<T>(), source, tag);
    }
    template <class T>
    void broadcast(T* buf, std::size_t count, int root) {
        broadcast(static_cast<void*>(buf), count, dtype_of<T>(), root);
    }
    template <class T>
    request ibroadcast(T* buf, std::size_t count, int root) {
        return ibroadcast(static_cast<void*>(buf), count, dtype_of<T>(), root);
    }
    template <class T>
    std::vector<T> all_gather(const T& value) {
        std::vector<T> all(static_cast<std::size_t>(size()));
        all_gather(&value, all.data(), 1, dtype_of<T>());
        return all;
    }
    template <class T>
    T all_reduce_sum(T value) {
        T out{};
        all_reduce_sum(&value, &out, 1, dtype_of<T>());
        return out;
    }

  protected:
    communicator();
    // A sub-communicator shares its parent's traffic log.
    void adopt_traffic_of(const communicator& parent) { traffic_ = parent.traffic_; }

    virtual int do_rank() const = 0;
    virtual int do_size() const = 0;
    virtual std::shared_ptr<communicator> do_create_sub(const std::vector<int>& ranks) = 0;
    virtual request do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) = 0;
    virtual request do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) = 0;
    // Default: pack into / unpack from a buffer the request owns, through do_isend / do_irecv.
    // `layout.bytes()` is a whole number of elements of `type`.
    virtual request do_isend_box(const void* array, const strided_layout& layout, dtype type, int dest, int tag);
    virtual request do_irecv_box(void* array, const strided_layout& layout, dtype type, int source, int tag);
    virtual bool do_moves_boxes() const { return false; }
    virtual void do_wait_all(std::vector<request>& requests) = 0;
    virtual void do_broadcast(void* buf, std::size_t count, dtype type, int root) = 0;
    virtual request do_ibroadcast(void* buf, std::size_t count, dtype type, int root) = 0;
    virtual void do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) = 0;
    virtual void do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) = 0;
    virtual void do_all_gather(const void* send, void* recv, std::size_t count, dtype type) = 0;
    virtual void do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                                 const std::vector<std::size_t>& send_displs, void* recv,
                                 const std::vector<std::size_t>& recv_counts,
                                 const std::vector<std::size_t>& recv_displs, dtype type) = 0;
    virtual void do_barrier() = 0;
    virtual bool do_collectives_are_one_step() const { return false; }

  private:
    void require_rank(int r, const char* what) const;
    std::shared_ptr<traffic_log> traffic_;
};

}  // namespace distdl
