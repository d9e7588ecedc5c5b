#pragma once
// Error hierarchy: every failure the library reports is a distdl::error; each module adds
// one subclass so callers can tell argument mistakes from transport failures.
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace distdl {

class error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A caller passed something the API does not accept (bad shape, rank out of range, ...).
class invalid_argument : public error {
  public:
    using error::error;
};

// Partitions that cannot work together (rule violations, different worlds, ...).
class partition_error : public invalid_argument {
  public:
    using invalid_argument::invalid_argument;
};

// A transport failed (MPI error code, aborted simulator world, ...).
class communication_error : public error {
  public:
    using error::error;
};

// "[3,3,2]": shapes and rank lists in messages.
template <class Seq>
std::string format_list(const Seq& seq) {
    std::ostringstream out;
    out << '[';
    bool first = true;
    for (const auto& v : seq) {
        out << (first ? "" : ",") << v;
        first = false;
    }
    out << ']';
    return out.str();
}

// A worker's piece in messages that every worker of a module reports: format_list, and for a
// zero-dimensional piece what it usually is, so that the other workers' errors point at the
// cause: in a chain the mark a worker whose module failed passes on (layers/sequential.hpp),
// outside one a default tensor<T>() given for "no data".
template <class Seq>
std::string format_piece_shape(const Seq& shape) {
    if (!std::empty(shape)) return format_list(shape);
    return "[] (a zero-dimensional tensor: in a sequential, the mark of an earlier failure on that worker, whose "
           "error says why; elsewhere a default tensor<T>(), where zero_volume<T>() passes no data)";
}

}  // namespace distdl

// Always-on argument check: throws distdl::invalid_argument (or the given subclass) with the
// message, which should say what was expected and what was given.
#define DISTDL_REQUIRE_AS(cond, type, msg)                  \
    do {                                                    \
        if (!(cond)) {                                      \
            std::ostringstream distdl_require_msg_;         \
            distdl_require_msg_ << msg;                     \
            throw type(distdl_require_msg_.str());          \
        }                                                   \
    } while (false)

#define DISTDL_REQUIRE(cond, msg) DISTDL_REQUIRE_AS(cond, ::distdl::invalid_argument, msg)
