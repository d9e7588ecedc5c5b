#pragma once
// The MPI transport's error: an MPI call returned something other than MPI_SUCCESS (every
// communicator of this module has MPI_ERRORS_RETURN set, so failures arrive here instead of
// killing the job). Does not need <mpi.h>.
#include <string>

#include "core/error.hpp"

namespace distdl::mpi {

class mpi_error : public communication_error {
  public:
    // `call` names the MPI function ("MPI_Isend"); `code` is what it returned. The message is
    // "<call> failed: <MPI_Error_string(code)> (error class <n>)".
    mpi_error(std::string call, int code);

    const std::string& call() const noexcept { return call_; }
    int code() const noexcept { return code_; }
    int error_class() const noexcept { return error_class_; }
    // The text MPI_Error_string gave for the code.
    const std::string& mpi_message() const noexcept { return mpi_message_; }

  private:
    mpi_error(std::string call, int code, int error_class, std::string mpi_message);

    std::string call_;
    int code_;
    int error_class_;
    std::string mpi_message_;
};

namespace detail {
// Throws mpi_error(call, code) unless code is MPI_SUCCESS.
void check(int code, const char* call);
}  // namespace detail

}  // namespace distdl::mpi
