#pragma once
// Shared by the simulator's unit tests.
#include <memory>
#include <utility>
#include <vector>

#include "simulator/run.hpp"

namespace sim_test {

using distdl::communicator;
using distdl::request;
using comm_ptr = std::shared_ptr<communicator>;

// Completes one request.
inline void wait_one(const comm_ptr& c, request r) {
    std::vector<request> reqs;
    reqs.push_back(std::move(r));
    c->wait_all(reqs);
}

}  // namespace sim_test
