#pragma once
// Errors the simulator reports. All are communication errors, so code written against the
// communicator interface can catch them without knowing which transport it runs on.
#include <exception>
#include <string>

#include "core/error.hpp"

namespace distdl::sim {

class error : public communication_error {
  public:
    using communication_error::communication_error;
};

// Thrown on ranks that were blocked, or that try to communicate, after the world was aborted
// (because a rank failed or a deadlock was found).
class aborted : public error {
  public:
    using error::error;
};

// The members of a communicator called different collectives (or the same one with a
// different dtype, count, root, all-to-all counts or sub-communicator list). The message names
// every rank that had arrived and what it called.
class collective_mismatch : public error {
  public:
    using error::error;
};

// A rank's communicator or request used from another thread than that rank's (a thread the
// body started, or another rank's): each rank communicates from its own thread only, as under
// MPI_THREAD_FUNNELED, which the Open MPI transport asks for.
class wrong_thread : public error {
  public:
    using error::error;
};

// A receive met a message of another size or dtype than it expected.
class message_mismatch : public error {
  public:
    using error::error;
};

// A rank changed the buffer of an isend before the send completed (wait_all): under MPI the
// receiver may get the old data, the new data or a mixture. Found by a fingerprint of the user's
// buffer taken at isend and compared at the wait (simulator/send_fingerprint.hpp).
class send_buffer_modified : public error {
  public:
    using error::error;
};

// A rank posted a receive into bytes that another of its pending receives still writes
// (simulator/receive_spans.hpp): under MPI the two messages would land there in either order.
class overlapping_receives : public error {
  public:
    using error::error;
};

// The world ended with messages sent and never received, or requests never waited on (each
// named with ranks, tags and counts). Reported only if the world did not fail otherwise.
class unfinished_communication : public error {
  public:
    using error::error;
};

// A communicator (or request) of a world used after sim::run returned.
class world_ended : public error {
  public:
    using error::error;
};

// sim::run's time limit passed (run_options::time_limit); the message says what each rank was
// doing: blocked in the communicator (and on what), finished, or neither.
class time_limit_exceeded : public error {
  public:
    using error::error;
};

// No rank could make progress; the message says what each blocked rank waited for.
class deadlock : public error {
  public:
    using error::error;
};

// What sim::run throws when a rank's body failed with an error the simulator did not detect
// itself: what() is "rank R: <original what()>".
class rank_failure : public error {
  public:
    rank_failure(int rank, std::exception_ptr original);
    int rank() const { return rank_; }
    std::exception_ptr original() const { return original_; }

  private:
    int rank_;
    std::exception_ptr original_;
};

// The what() of the exception held by `e` (or a note that it is not a std::exception).
std::string describe_exception(const std::exception_ptr& e);

}  // namespace distdl::sim
