#pragma once
// The Open MPI transport of distdl::communicator. Includes <mpi.h>: code outside mpi_backend/
// uses environment.hpp (environment, world_communicator) and the abstract interface only;
// include this header to wrap an MPI communicator of your own or to reach the native handle.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/communicator.hpp"
#include "mpi_backend/error.hpp"

namespace distdl::mpi {

// Owns one MPI communicator: frees it on destruction (never throws; skipped after
// MPI_Finalize, and for the predefined MPI_COMM_NULL/WORLD/SELF). Move-only; a move leaves
// MPI_COMM_NULL behind.
class comm_handle {
  public:
    comm_handle() noexcept = default;
    // Takes ownership of `comm`.
    explicit comm_handle(MPI_Comm comm) noexcept : comm_(comm) {}
    ~comm_handle() { reset(); }
    comm_handle(const comm_handle&) = delete;
    comm_handle& operator=(const comm_handle&) = delete;
    comm_handle(comm_handle&& other) noexcept : comm_(other.release()) {}
    comm_handle& operator=(comm_handle&& other) noexcept;

    MPI_Comm get() const noexcept { return comm_; }
    explicit operator bool() const noexcept { return comm_ != MPI_COMM_NULL; }
    // Gives up ownership without freeing.
    MPI_Comm release() noexcept;
    // Frees the communicator now (if owned and MPI is still active).
    void reset() noexcept;

  private:
    MPI_Comm comm_ = MPI_COMM_NULL;
};

// MPI datatype of a distdl dtype (float32 -> MPI_FLOAT, float64 -> MPI_DOUBLE, int32 ->
// MPI_INT32_T, int64 -> MPI_INT64_T, uint64 -> MPI_UINT64_T, byte -> MPI_BYTE).
MPI_Datatype datatype_of(dtype type);

// A std::size_t count or displacement as the int MPI takes; distdl::invalid_argument if it
// does not fit. `what` names the quantity in the message.
int to_int(std::size_t value, const char* what);

class mpi_request;

// distdl::communicator over an owned MPI communicator with MPI_ERRORS_RETURN set; every MPI
// call is checked and a failure thrown as mpi_error. Collectives are the native MPI ones.
class mpi_communicator final : public distdl::communicator {
  public:
    // Tag given to MPI_Comm_create_group by create_sub. One fixed tag is enough because the
    // callers create overlapping sub-communicators in the same order on every member.
    static constexpr int create_sub_tag = 7411;

    // A communicator over MPI_Comm_dup(comm) (collective over `comm`).
    static std::shared_ptr<mpi_communicator> duplicate(MPI_Comm comm);

    // Adopts `comm` (not MPI_COMM_NULL) and sets MPI_ERRORS_RETURN on it.
    explicit mpi_communicator(comm_handle comm);
    ~mpi_communicator() override = default;
    // Move: the source keeps no MPI communicator, and any use of it throws
    // distdl::communication_error. Both share the traffic log.
    mpi_communicator(mpi_communicator&& other) noexcept;
    mpi_communicator& operator=(mpi_communicator&& other) noexcept;

    // The underlying communicator (still owned by this object); MPI_COMM_NULL after a move.
    MPI_Comm native() const noexcept { return comm_.get(); }

  protected:
    int do_rank() const override;
    int do_size() const override;
    std::shared_ptr<distdl::communicator> do_create_sub(const std::vector<int>& ranks) override;
    request do_isend(const void* buf, std::size_t count, dtype type, int dest, int tag) override;
    request do_irecv(void* buf, std::size_t count, dtype type, int source, int tag) override;
    void do_wait_all(std::vector<request>& requests) override;
    void do_broadcast(void* buf, std::size_t count, dtype type, int root) override;
    request do_ibroadcast(void* buf, std::size_t count, dtype type, int root) override;
    void do_reduce_sum(const void* send, void* recv, std::size_t count, dtype type, int root) override;
    void do_all_reduce_sum(const void* send, void* recv, std::size_t count, dtype type) override;
    void do_all_gather(const void* send, void* recv, std::size_t count, dtype type) override;
    void do_all_to_all_v(const void* send, const std::vector<std::size_t>& send_counts,
                         const std::vector<std::size_t>& send_displs, void* recv,
                         const std::vector<std::size_t>& recv_counts,
                         const std::vector<std::size_t>& recv_displs, dtype type) override;
    void do_barrier() override;

  private:
    // The handle, or communication_error if this object was moved from.
    MPI_Comm open_comm() const;
    // open_comm() for a call that communicates: also communication_error when MPI allows only
    // its main thread to call it (MPI_THREAD_FUNNELED or below) and this is another thread,
    // where MPI's behaviour would be undefined (the simulator: sim::wrong_thread).
    MPI_Comm comm_for_call() const;
    // The sub-communicator of `ranks` in that order (MPI_Comm_create_group).
    comm_handle create_group(const std::vector<int>& ranks);
    // Refuses, on every member, lists that differ between the members of `over_sorted`.
    void require_same_list(MPI_Comm over_sorted, const std::vector<int>& ranks, const std::vector<int>& sorted) const;

    comm_handle comm_;
    int rank_ = -1;
    int size_ = 0;
    bool main_thread_only_ = false;  // the thread level MPI provides is MPI_THREAD_FUNNELED or below
    // A collective's send data overlapping its receive buffer, copied apart (separate_send).
    std::vector<unsigned char> staged_send_;
    // The send buffer of a collective apart from its receive buffer: MPI forbids overlap beyond
    // its MPI_IN_PLACE cases, so an overlapping one is copied first (the simulator's semantics:
    // every rank sends its data as they were before any was received).
    const void* separate_send(const void* send, std::size_t send_bytes, const void* recv, std::size_t recv_bytes);
    // wait_all's working arrays, kept across calls.
    std::vector<mpi_request*> pending_;
    std::vector<MPI_Request> handles_;
    std::vector<MPI_Status> statuses_;
};

}  // namespace distdl::mpi
