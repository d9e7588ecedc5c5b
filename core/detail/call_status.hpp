#pragma once
// Private helper of the point-to-point primitives (Repartition, HaloExchange): agreement on
// the outcome of one call's argument checks, so that an argument error found on one worker
// ends as the same typed error on every worker of the primitive (also when the program catches
// it and carries on), and nobody waits for a message that will never come.
//
// Cost: one all-reduce of two words per call ("<label>.status" in the traffic log). Only when
// some worker reports a problem: an all-reduce of a bit mask (one bit per member) to find the
// lowest-ranked member with a problem, and a broadcast of its text from it.
#include <cstdint>
#include <functional>
#include <string>

#include "core/communicator.hpp"

namespace distdl::detail {

// Collective over every member of `comm`. `problem` is this worker's error message (empty:
// none); `changed` says that its shapes differ from the ones its plan was built for. Throws
// invalid_argument on every member, with the lowest-ranked member's problem, when any member
// has one; otherwise returns whether any member reported a change.
// `message`, when given, makes the error text from the problems of the lowest- and the
// highest-ranked members with one and their number (by default: the lowest one's problem and
// how many more there are).
using problem_formatter = std::function<std::string(const std::string& first, const std::string& last, std::uint64_t count)>;
bool agree_on_call(communicator& comm, const std::string& problem, bool changed, const problem_formatter& message = {});

}  // namespace distdl::detail
