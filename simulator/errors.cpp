#include "simulator/errors.hpp"

#include <stdexcept>

namespace distdl::sim {

std::string describe_exception(const std::exception_ptr& e) {
    if (!e) return "no exception";
    try {
        std::rethrow_exception(e);
    } catch (const std::exception& caught) {
        return caught.what();
    } catch (...) {
        return "an exception not derived from std::exception";
    }
}

rank_failure::rank_failure(int rank, std::exception_ptr original)
    : error("rank " + std::to_string(rank) + ": " + describe_exception(original)),
      rank_(rank),
      original_(std::move(original)) {}

}  // namespace distdl::sim
