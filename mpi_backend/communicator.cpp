#include "mpi_backend/communicator.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <utility>

#include "core/detail/argument_agreement.hpp"

namespace distdl::mpi {

namespace {

using detail::check;

bool mpi_active() noexcept {
    int initialised = 0, finalised = 0;
    if (MPI_Initialized(&initialised) != MPI_SUCCESS || initialised == 0) return false;
    if (MPI_Finalized(&finalised) != MPI_SUCCESS || finalised != 0) return false;
    return true;
}

// Frees an MPI group on scope exit.
class group_guard {
  public:
    group_guard() = default;
    ~group_guard() {
        if (group != MPI_GROUP_NULL && mpi_active()) MPI_Group_free(&group);
    }
    group_guard(const group_guard&) = delete;
    group_guard& operator=(const group_guard&) = delete;

    MPI_Group group = MPI_GROUP_NULL;
};

std::vector<int> to_ints(const std::vector<std::size_t>& values, const char* what) {
    std::vector<int> out(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = to_int(values[i], what);
    return out;
}

}  // namespace

// One pending MPI_Isend / MPI_Irecv (or, with `collective` set, MPI_Ibcast). The caller owns
// the buffer; wait_all completes it.
class mpi_request final : public request_state {
  public:
    mpi_request(bool is_receive, std::size_t count, dtype type) : is_receive_(is_receive), count_(count), type_(type) {}
    // A request destroyed while still pending (its wait_all never ran, e.g. because an
    // exception unwound the caller): a receive is cancelled and completed, so MPI never
    // writes into the buffer afterwards; a send is detached with MPI_Request_free (MPI
    // completes it in the background); a collective, which MPI can neither cancel nor free,
    // is waited for (every member has started it). Never throws; skipped after MPI_Finalize.
    ~mpi_request() override {
        if (handle == MPI_REQUEST_NULL || !mpi_active()) return;
        if (collective) {
            MPI_Wait(&handle, MPI_STATUS_IGNORE);
        } else if (is_receive_) {
            MPI_Cancel(&handle);
            MPI_Wait(&handle, MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&handle);
        }
    }
    mpi_request(const mpi_request&) = delete;
    mpi_request& operator=(const mpi_request&) = delete;

    // Requests are made and dropped on every message: their memory is recycled through a
    // per-thread free list instead of a malloc and free each.
    static void* operator new(std::size_t size) {
        auto& spare = free_list();
        if (size == sizeof(mpi_request) && !spare.empty()) {
            void* p = spare.back();
            spare.pop_back();
            return p;
        }
        return ::operator new(size);
    }
    static void operator delete(void* p, std::size_t size) noexcept {
        auto& spare = free_list();
        if (size == sizeof(mpi_request) && spare.size() < spare.capacity()) {
            spare.push_back(p);
            return;
        }
        ::operator delete(p);
    }

    bool is_receive() const { return is_receive_; }
    std::size_t count() const { return count_; }
    dtype type() const { return type_; }

    MPI_Request handle = MPI_REQUEST_NULL;
    bool collective = false;  // a nonblocking collective (is_receive false: no count check)

  private:
    // Up to 256 spare blocks per thread (reserved up front, so push_back never allocates).
    static std::vector<void*>& free_list() {
        thread_local struct spare_blocks {
            std::vector<void*> blocks;
            spare_blocks() { blocks.reserve(256); }
            ~spare_blocks() {
                for (void* p : blocks) ::operator delete(p);
            }
        } spare;
        return spare.blocks;
    }

    bool is_receive_;
    std::size_t count_;
    dtype type_;
};

// ---- comm_handle ----------------------------------------------------------------------------

comm_handle& comm_handle::operator=(comm_handle&& other) noexcept {
    if (this != &other) {
        reset();
        comm_ = other.release();
    }
    return *this;
}

MPI_Comm comm_handle::release() noexcept {
    MPI_Comm comm = comm_;
    comm_ = MPI_COMM_NULL;
    return comm;
}

void comm_handle::reset() noexcept {
    MPI_Comm comm = release();
    if (comm == MPI_COMM_NULL || comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF) return;
    if (mpi_active()) MPI_Comm_free(&comm);
}

// ---- helpers --------------------------------------------------------------------------------

MPI_Datatype datatype_of(dtype type) {
    switch (type) {
        case dtype::float32: return MPI_FLOAT;
        case dtype::float64: return MPI_DOUBLE;
        case dtype::int32: return MPI_INT32_T;
        case dtype::int64: return MPI_INT64_T;
        case dtype::uint64: return MPI_UINT64_T;
        case dtype::byte: return MPI_BYTE;
    }
    throw invalid_argument("distdl::mpi: no MPI datatype for dtype value " +
                           std::to_string(static_cast<int>(type)));
}

int to_int(std::size_t value, const char* what) {
    DISTDL_REQUIRE(value <= static_cast<std::size_t>(INT_MAX),
                   "MPI communicator: " << what << " " << value << " exceeds the largest MPI count " << INT_MAX);
    return static_cast<int>(value);
}

// ---- mpi_communicator -----------------------------------------------------------------------

std::shared_ptr<mpi_communicator> mpi_communicator::duplicate(MPI_Comm comm) {
    DISTDL_REQUIRE(comm != MPI_COMM_NULL, "MPI communicator: cannot duplicate MPI_COMM_NULL");
    MPI_Comm dup = MPI_COMM_NULL;
    check(MPI_Comm_dup(comm, &dup), "MPI_Comm_dup");
    comm_handle owned(dup);
    return std::make_shared<mpi_communicator>(std::move(owned));
}

mpi_communicator::mpi_communicator(comm_handle comm) : comm_(std::move(comm)) {
    DISTDL_REQUIRE(static_cast<bool>(comm_), "MPI communicator: cannot wrap MPI_COMM_NULL");
    check(MPI_Comm_set_errhandler(comm_.get(), MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    check(MPI_Comm_rank(comm_.get(), &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_.get(), &size_), "MPI_Comm_size");
    int provided = MPI_THREAD_SINGLE;
    check(MPI_Query_thread(&provided), "MPI_Query_thread");
    main_thread_only_ = provided < MPI_THREAD_SERIALIZED;
}

mpi_communicator::mpi_communicator(mpi_communicator&& other) noexcept
    : distdl::communicator(), comm_(std::move(other.comm_)), rank_(other.rank_), size_(other.size_),
      main_thread_only_(other.main_thread_only_) {
    adopt_traffic_of(other);
    other.rank_ = -1;
    other.size_ = 0;
}

mpi_communicator& mpi_communicator::operator=(mpi_communicator&& other) noexcept {
    if (this != &other) {
        comm_ = std::move(other.comm_);
        rank_ = std::exchange(other.rank_, -1);
        size_ = std::exchange(other.size_, 0);
        main_thread_only_ = other.main_thread_only_;
        adopt_traffic_of(other);
    }
    return *this;
}

MPI_Comm mpi_communicator::open_comm() const {
    if (!comm_) throw communication_error("MPI communicator: used after it was moved from");
    return comm_.get();
}

MPI_Comm mpi_communicator::comm_for_call() const {
    const MPI_Comm comm = open_comm();
    int on_main_thread = 1;
    if (main_thread_only_) check(MPI_Is_thread_main(&on_main_thread), "MPI_Is_thread_main");
    if (on_main_thread == 0)
        throw communication_error("MPI communicator: rank " + std::to_string(rank_) +
                                  " used from another thread than the one that initialized MPI, which alone may call "
                                  "MPI at the thread level provided (MPI_THREAD_FUNNELED or below); each rank "
                                  "communicates from its own thread only");
    return comm;
}

int mpi_communicator::do_rank() const {
    open_comm();
    return rank_;
}

int mpi_communicator::do_size() const {
    open_comm();
    return size_;
}

std::shared_ptr<distdl::communicator> mpi_communicator::do_create_sub(const std::vector<int>& ranks) {
    // Open MPI 4.1's MPI_Comm_create_group waits forever when the members list the same ranks
    // in different orders. So the members first make the communicator of the sorted list, on
    // which they compare their lists (an all-reduce of two words) and then take their places in
    // the listed order. Members listing different ranks still wait, as for any collective that a
    // member does not call: nothing tells such a member from a late one. Cost, at construction
    // only (4 ranks, 2 cores): 39 us per sorted list and 69 us per other one, against 34 us for
    // one MPI_Comm_create_group.
    std::vector<int> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    comm_handle over_sorted = create_group(sorted);
    require_same_list(over_sorted.get(), ranks, sorted);
    if (sorted == ranks) return std::make_shared<mpi_communicator>(std::move(over_sorted));
    const int place = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank_) - ranks.begin());
    MPI_Comm ordered = MPI_COMM_NULL;
    check(MPI_Comm_split(over_sorted.get(), 0, place, &ordered), "MPI_Comm_split");
    return std::make_shared<mpi_communicator>(comm_handle(ordered));
}

comm_handle mpi_communicator::create_group(const std::vector<int>& ranks) {
    MPI_Comm comm = comm_for_call();
    group_guard parent, members;
    check(MPI_Comm_group(comm, &parent.group), "MPI_Comm_group");
    check(MPI_Group_incl(parent.group, to_int(ranks.size(), "sub-communicator size"), ranks.data(), &members.group),
          "MPI_Group_incl");
    MPI_Comm sub = MPI_COMM_NULL;
    check(MPI_Comm_create_group(comm, members.group, create_sub_tag, &sub), "MPI_Comm_create_group");
    if (sub == MPI_COMM_NULL)
        throw communication_error("MPI communicator: MPI_Comm_create_group gave no communicator to rank " +
                                  std::to_string(rank_) + " of " + format_list(ranks));
    return comm_handle(sub);
}

void mpi_communicator::require_same_list(MPI_Comm over_sorted, const std::vector<int>& ranks,
                                         const std::vector<int>& sorted) const {
    std::uint64_t digest = 1469598103934665603ull;  // an FNV-style hash of the list, in its order
    for (int r : ranks) digest = (digest ^ static_cast<std::uint32_t>(r)) * 1099511628211ull;
    std::uint64_t least[2] = {digest, ~digest};  // the minimum of ~digest is ~(the maximum)
    check(MPI_Allreduce(MPI_IN_PLACE, least, 2, MPI_UINT64_T, MPI_MIN, over_sorted), "MPI_Allreduce");
    if (least[0] == ~least[1]) return;
    // Every member found the same disagreement: all of them gather the lists for the message.
    const int n = to_int(ranks.size(), "sub-communicator size");
    std::vector<int> lists(ranks.size() * ranks.size());
    check(MPI_Allgather(ranks.data(), n, MPI_INT, lists.data(), n, MPI_INT, over_sorted), "MPI_Allgather");
    std::vector<std::pair<std::vector<int>, std::vector<int>>> callers;  // a list, the ranks that gave it
    for (std::size_t m = 0; m < sorted.size(); ++m) {
        std::vector<int> list(lists.begin() + std::ptrdiff_t(m * ranks.size()),
                              lists.begin() + std::ptrdiff_t((m + 1) * ranks.size()));
        auto it = std::find_if(callers.begin(), callers.end(), [&](const auto& c) { return c.first == list; });
        if (it == callers.end()) callers.push_back({std::move(list), {sorted[m]}});
        else it->second.push_back(sorted[m]);
    }
    std::string which;
    for (const auto& [list, callers_of_list] : callers)
        which += (which.empty() ? "" : "; ") +
                 (callers_of_list.size() == 1 ? "rank " + std::to_string(callers_of_list.front())
                                              : "ranks " + ::distdl::detail::format_rank_set(callers_of_list)) +
                 " called create_sub(" + format_list(list) + ")";
    throw communication_error("MPI communicator: members of a sub-communicator passed different rank lists: " + which);
}

request mpi_communicator::do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "send count");
    auto req = std::make_unique<mpi_request>(false, count, type);
    check(MPI_Isend(buf, n, datatype_of(type), dest, tag, comm, &req->handle), "MPI_Isend");
    return req;
}

request mpi_communicator::do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "receive count");
    auto req = std::make_unique<mpi_request>(true, count, type);
    check(MPI_Irecv(buf, n, datatype_of(type), source, tag, comm, &req->handle), "MPI_Irecv");
    return req;
}

void mpi_communicator::do_wait_all(std::vector<request>& requests) {
    comm_for_call();
    // All requests at once, their handles gathered in buffers this communicator keeps (no
    // allocation per call once they have grown).
    const std::size_t n = requests.size();
    pending_.resize(n);
    handles_.resize(n);
    statuses_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        pending_[i] = dynamic_cast<mpi_request*>(requests[i].get());
        DISTDL_REQUIRE(pending_[i] != nullptr, "MPI communicator: wait_all given a request of another transport (entry "
                                                   << i << ")");
        handles_[i] = pending_[i]->handle;
    }
    // MPI_Testall until all are complete rather than MPI_Waitall: Open MPI 4.1 with
    // MPI_THREAD_FUNNELED (or higher) never returns from MPI_Waitall when one of the requests
    // fails (e.g. a truncated receive); MPI_Testall reports it. A failed request counts as
    // complete, so every request has completed when the loop ends: MPI writes no buffer
    // after this returns.
    const int count = to_int(n, "request count");
    int done = 0, rc = MPI_SUCCESS;
    while (done == 0 && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS)) {
        rc = MPI_Testall(count, handles_.data(), &done, statuses_.data());
        if (rc == MPI_ERR_IN_STATUS) break;
    }
    // Completed (or failed) requests are MPI_REQUEST_NULL now: nothing is left for the
    // requests' destructors to cancel.
    for (std::size_t i = 0; i < n; ++i) pending_[i]->handle = handles_[i];
    if (rc == MPI_ERR_IN_STATUS) {
        for (std::size_t i = 0; i < n; ++i)
            if (statuses_[i].MPI_ERROR != MPI_SUCCESS && statuses_[i].MPI_ERROR != MPI_ERR_PENDING)
                check(statuses_[i].MPI_ERROR, "MPI_Testall");
    }
    check(rc, "MPI_Testall");
    // A receive must get exactly the count it posted (MPI reports a longer message as
    // MPI_ERR_TRUNCATE, but accepts a shorter one silently and leaves the tail unwritten).
    for (std::size_t i = 0; i < n; ++i) {
        const mpi_request& r = *pending_[i];
        if (!r.is_receive()) continue;
        int received = 0;
        check(MPI_Get_count(&statuses_[i], datatype_of(r.type()), &received), "MPI_Get_count");
        if (received == MPI_UNDEFINED || static_cast<std::size_t>(received) != r.count())
            throw communication_error("MPI communicator: receive from rank " + std::to_string(statuses_[i].MPI_SOURCE) +
                                      " with tag " + std::to_string(statuses_[i].MPI_TAG) + " expected " +
                                      std::to_string(r.count()) + " " + to_string(r.type()) + " elements, got " +
                                      std::to_string(received));
    }
}

void mpi_communicator::do_broadcast(void* buf, std::size_t count, dtype type, int root) {
    MPI_Comm comm = comm_for_call();
    check(MPI_Bcast(buf, to_int(count, "broadcast count"), datatype_of(type), root, comm), "MPI_Bcast");
}

request mpi_communicator::do_ibroadcast(void* buf, std::size_t count, dtype type, int root) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "broadcast count");
    auto req = std::make_unique<mpi_request>(false, count, type);
    req->collective = true;
    check(MPI_Ibcast(buf, n, datatype_of(type), root, comm, &req->handle), "MPI_Ibcast");
    return req;
}

const void* mpi_communicator::separate_send(const void* send, std::size_t send_bytes, const void* recv,
                                            std::size_t recv_bytes) {
    const auto s = reinterpret_cast<std::uintptr_t>(send), r = reinterpret_cast<std::uintptr_t>(recv);
    if (send_bytes == 0 || recv_bytes == 0 || s + send_bytes <= r || r + recv_bytes <= s) return send;
    const auto* from = static_cast<const unsigned char*>(send);
    staged_send_.assign(from, from + send_bytes);
    return staged_send_.data();
}

void mpi_communicator::do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "reduce count");
    // Every rank passes the same count, so every rank skips together. (MPI would also reject
    // the null == null "aliasing" of two empty buffers on the root.)
    if (n == 0) return;
    const std::size_t bytes = count * size_of(type);
    const void* in = rank_ != root ? send : send == recv ? MPI_IN_PLACE : separate_send(send, bytes, recv, bytes);
    check(MPI_Reduce(in, recv, n, datatype_of(type), MPI_SUM, root, comm), "MPI_Reduce");
}

void mpi_communicator::do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "all-reduce count");
    if (n == 0) return;  // as in do_reduce_sum
    const std::size_t bytes = count * size_of(type);
    const void* in = send == recv ? MPI_IN_PLACE : separate_send(send, bytes, recv, bytes);
    check(MPI_Allreduce(in, recv, n, datatype_of(type), MPI_SUM, comm), "MPI_Allreduce");
}

void mpi_communicator::do_all_gather(const void* send, void* recv, std::size_t count, dtype type) {
    MPI_Comm comm = comm_for_call();
    const int n = to_int(count, "all-gather count");
    // This rank's block already in place in recv: MPI_IN_PLACE (MPI forbids aliasing).
    const std::size_t bytes = count * size_of(type);
    const auto* own_block = static_cast<const unsigned char*>(recv) + static_cast<std::size_t>(rank_) * bytes;
    const void* in = n == 0 ? send
                     : send == own_block ? MPI_IN_PLACE
                                         : separate_send(send, bytes, recv, bytes * static_cast<std::size_t>(size_));
    check(MPI_Allgather(in, n, datatype_of(type), recv, n, datatype_of(type), comm), "MPI_Allgather");
}

void mpi_communicator::do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                                       const std::vector<std::size_t>& send_displs, void* recv,
                                       const std::vector<std::size_t>& recv_counts,
                                       const std::vector<std::size_t>& recv_displs, dtype type) {
    MPI_Comm comm = comm_for_call();
    const auto sc = to_ints(send_counts, "all_to_all_v send count");
    const auto sd = to_ints(send_displs, "all_to_all_v send displacement");
    const auto rc = to_ints(recv_counts, "all_to_all_v receive count");
    const auto rd = to_ints(recv_displs, "all_to_all_v receive displacement");
    const MPI_Datatype t = datatype_of(type);
    std::size_t send_extent = 0, recv_extent = 0;  // in elements
    for (std::size_t r = 0; r < send_counts.size(); ++r) {
        send_extent = std::max(send_extent, send_displs[r] + send_counts[r]);
        recv_extent = std::max(recv_extent, recv_displs[r] + recv_counts[r]);
    }
    const void* from = separate_send(send, send_extent * size_of(type), recv, recv_extent * size_of(type));
    check(MPI_Alltoallv(from, sc.data(), sd.data(), t, recv, rc.data(), rd.data(), t, comm), "MPI_Alltoallv");
}

void mpi_communicator::do_barrier() { check(MPI_Barrier(comm_for_call()), "MPI_Barrier"); }

}  // namespace distdl::mpi
