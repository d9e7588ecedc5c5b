#include "mpi_backend/error.hpp"

#include <mpi.h>

#include <utility>

namespace distdl::mpi {

namespace {

int class_of(int code) {
    int cls = code;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS) cls = code;
    return cls;
}

std::string text_of(int code) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0)
        return "unknown MPI error code " + std::to_string(code);
    return std::string(text, static_cast<std::size_t>(length));
}

std::string describe(const std::string& call, int cls, const std::string& text) {
    return call + " failed: " + text + " (error class " + std::to_string(cls) + ")";
}

}  // namespace

mpi_error::mpi_error(std::string call, int code) : mpi_error(std::move(call), code, class_of(code), text_of(code)) {}

mpi_error::mpi_error(std::string call, int code, int error_class, std::string mpi_message)
    : communication_error(describe(call, error_class, mpi_message)),
      call_(std::move(call)),
      code_(code),
      error_class_(error_class),
      mpi_message_(std::move(mpi_message)) {}

namespace detail {

void check(int code, const char* call) {
    if (code != MPI_SUCCESS) throw mpi_error(call, code);
}

}  // namespace detail

}  // namespace distdl::mpi
