// The communicator contract, the checked front-end: argument errors are thrown as
// distdl::invalid_argument on every rank alike (before any communication, so nothing
// hangs), the communicator stays usable afterwards, and traffic is counted per rank and per
// label, sub-communicators included. Written once for every transport.
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

distdl::traffic_totals totals_of(const distdl::traffic_log& log, const std::string& label) {
    const auto it = log.by_label().find(label);
    return it == log.by_label().end() ? distdl::traffic_totals{} : it->second;
}

std::pair<std::uint64_t, std::uint64_t> delta(const distdl::traffic_totals& after, const distdl::traffic_totals& before) {
    return {after.messages - before.messages, after.bytes - before.bytes};
}

}  // namespace

DISTDL_CHECK(argument_errors_everywhere, world_size >= 1) {
    using distdl::invalid_argument;
    const int n = world->size(), r = world->rank();
    double x[4] = {1, 2, 3, 4};
    double y[4] = {};

    // Ranks out of range.
    DCHECK_THROWS(world->isend(x, 1, n, 0), invalid_argument, "out of range");
    DCHECK_THROWS(world->isend(x, 1, -1, 0), invalid_argument, "out of range");
    DCHECK_THROWS(world->irecv(y, 1, n, 0), invalid_argument, "out of range");
    DCHECK_THROWS(world->irecv(y, 1, -2, 0), invalid_argument, "out of range");
    DCHECK_THROWS(world->broadcast(x, 4, n), invalid_argument, "out of range");
    DCHECK_THROWS(world->reduce_sum(x, y, 4, distdl::dtype::float64, -1), invalid_argument, "out of range");
    DCHECK_THROWS(world->reduce_sum(x, y, 4, distdl::dtype::float64, n + 3), invalid_argument, "out of range");

    // Tags outside [0, max_tag].
    DCHECK_THROWS(world->isend(x, 1, r, -1), invalid_argument, "tag");
    DCHECK_THROWS(world->irecv(y, 1, r, distdl::max_tag + 1), invalid_argument, "tag");

    // Null buffers with elements.
    DCHECK_THROWS(world->isend(static_cast<const double*>(nullptr), 2, r, 0), invalid_argument, "null");
    DCHECK_THROWS(world->irecv(static_cast<double*>(nullptr), 2, r, 0), invalid_argument, "null");
    DCHECK_THROWS(world->broadcast(static_cast<double*>(nullptr), 1, 0), invalid_argument, "null");
    DCHECK_THROWS(world->all_reduce_sum(x, nullptr, 4, distdl::dtype::float64), invalid_argument, "null");
    DCHECK_THROWS(world->all_gather(x, nullptr, 1, distdl::dtype::float64), invalid_argument, "null");

    // Sums of raw bytes.
    DCHECK_THROWS(world->all_reduce_sum(x, y, 4, distdl::dtype::byte), invalid_argument, "cannot sum");
    DCHECK_THROWS(world->reduce_sum(x, y, 4, distdl::dtype::byte, 0), invalid_argument, "cannot sum");

    // all_to_all_v needs one count and displacement per rank.
    const std::vector<std::size_t> right(static_cast<std::size_t>(n), 0), wrong(static_cast<std::size_t>(n) + 1, 0);
    DCHECK_THROWS(world->all_to_all_v(x, wrong, right, y, right, right, distdl::dtype::float64), invalid_argument,
                  "all_to_all_v");
    DCHECK_THROWS(world->all_to_all_v(x, right, right, y, right, wrong, distdl::dtype::float64), invalid_argument,
                  "all_to_all_v");

    // Bad sub-communicator lists.
    DCHECK_THROWS(world->create_sub({}), invalid_argument, "at least one");
    DCHECK_THROWS(world->create_sub({r, r}), invalid_argument, "repeat");
    DCHECK_THROWS(world->create_sub({r, n}), invalid_argument, "out of range");
    if (n > 1) DCHECK_THROWS(world->create_sub({(r + 1) % n}), invalid_argument, "not a member");

    // Sizes whose bytes do not fit in 64 bits (2^61 + 1 doubles), and a dtype none of dtype's:
    // refused, never wrapped into a short transfer or a division by zero.
    constexpr std::size_t huge = (std::size_t{1} << 61) + 1;
    const auto bad_type = static_cast<distdl::dtype>(42);
    DCHECK_THROWS(world->isend(x, huge, distdl::dtype::float64, r, 0), invalid_argument,
                  "communicator: send of float64 elements: 2305843009213693953 * 8 does not fit in a 64-bit size");
    DCHECK_THROWS(world->irecv(y, huge, distdl::dtype::float64, r, 0), invalid_argument, "receive of float64");
    DCHECK_THROWS(world->broadcast(x, huge, distdl::dtype::float64, 0), invalid_argument, "broadcast of float64");
    DCHECK_THROWS(world->all_reduce_sum(x, y, huge, distdl::dtype::float64), invalid_argument, "all-reduce of");
    DCHECK_THROWS(world->broadcast(x, 1, bad_type, 0), invalid_argument,
                  "communicator: broadcast of dtype 42, which is none of float32, float64, int32, int64, uint64, byte");
    DCHECK_THROWS(world->isend_box(x, distdl::array_box{{4}, {0}, {4}}, bad_type, r, 0), invalid_argument,
                  "send box of dtype 42");
    const std::vector<std::size_t> far(static_cast<std::size_t>(n), ~std::size_t{0}), one(static_cast<std::size_t>(n), 1);
    DCHECK_THROWS(world->all_to_all_v(x, one, far, y, right, right, distdl::dtype::float64), invalid_argument,
                  "all_to_all_v send displacement + count: 18446744073709551615 + 1 does not fit");
    const std::size_t box_extent = std::size_t{1} << 61;
    DCHECK_THROWS(world->isend_box(x, distdl::array_box{{box_extent}, {0}, {box_extent}}, distdl::dtype::float64, r, 0),
                  invalid_argument, "send box array bytes");

    // An empty request.
    std::vector<distdl::request> holes;
    holes.emplace_back();
    DCHECK_THROWS(world->wait_all(holes), invalid_argument, "empty request");

    // Still usable, and nothing was sent by the failed calls.
    DCHECK_EQ(world->all_reduce_sum(std::int32_t{1}), n);
    world->barrier();
}

// Counts on every rank: a send is one message of its bytes; a broadcast root sends size - 1;
// a non-root of a reduce sends one; an all-reduce one (none alone); an all-gather size - 1;
// an all-to-all-v one per other rank it sends elements to. Receives count nothing.
// Sub-communicators add to the same log, under the label in force.
DISTDL_CHECK(traffic_counting, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto un = static_cast<std::uint64_t>(n);
    auto& log = world->traffic();
    const std::string outer = log.label();
    const auto total_before = log.total();
    const auto p2p_before = totals_of(log, "mpi_backend.p2p");
    const auto coll_before = totals_of(log, "mpi_backend.collectives");
    const auto sub_before = totals_of(log, "mpi_backend.sub");
    {
        distdl::traffic_scope scope(log, "mpi_backend.p2p");
        DCHECK_EQ(log.label(), std::string("mpi_backend.p2p"));
        std::vector<double> out(5, 1.0), in(5);
        std::vector<distdl::request> requests;
        requests.push_back(world->irecv(in.data(), 5, (r + n - 1) % n, 1));
        requests.push_back(world->isend(out.data(), 5, (r + 1) % n, 1));
        requests.push_back(world->irecv(static_cast<float*>(nullptr), 0, r, 2));
        requests.push_back(world->isend(static_cast<const float*>(nullptr), 0, r, 2));
        world->wait_all(requests);
    }
    DCHECK_EQ(log.label(), outer);
    DCHECK_EQ(delta(totals_of(log, "mpi_backend.p2p"), p2p_before), std::make_pair(std::uint64_t{2}, std::uint64_t{40}));

    std::uint64_t messages = 0, bytes = 0;
    {
        distdl::traffic_scope scope(log, "mpi_backend.collectives");
        std::int64_t values[3] = {1, 2, 3}, sums[3] = {};
        world->broadcast(values, 3, 0);
        if (r == 0) messages += un - 1, bytes += 24 * (un - 1);
        world->reduce_sum(values, r == n - 1 ? sums : nullptr, 3, distdl::dtype::int64, n - 1);
        if (r != n - 1) messages += 1, bytes += 24;
        world->all_reduce_sum(values, sums, 3, distdl::dtype::int64);
        if (n > 1) messages += 1, bytes += 24;
        std::vector<std::int64_t> all(3 * static_cast<std::size_t>(n));
        world->all_gather(values, all.data(), 3, distdl::dtype::int64);
        messages += un - 1, bytes += 24 * (un - 1);
        // One int32 to every rank (self included: not counted).
        std::vector<std::int32_t> send(static_cast<std::size_t>(n), r), recv(static_cast<std::size_t>(n));
        std::vector<std::size_t> ones(static_cast<std::size_t>(n), 1), displs(static_cast<std::size_t>(n));
        for (std::size_t i = 0; i < displs.size(); ++i) displs[i] = i;
        world->all_to_all_v(send.data(), ones, displs, recv.data(), ones, displs, distdl::dtype::int32);
        messages += un - 1, bytes += 4 * (un - 1);
        world->barrier();
    }
    DCHECK_EQ(delta(totals_of(log, "mpi_backend.collectives"), coll_before), std::make_pair(messages, bytes));

    {
        distdl::traffic_scope scope(log, "mpi_backend.sub");
        auto sub = world->create_sub({r});
        DCHECK(&sub->traffic() == &log);
        double v = 1.0, w = 0.0;
        std::vector<distdl::request> requests;
        requests.push_back(sub->irecv(&w, 1, 0, 3));
        requests.push_back(sub->isend(&v, 1, 0, 3));
        sub->wait_all(requests);
        DCHECK_EQ(w, 1.0);
    }
    DCHECK_EQ(delta(totals_of(log, "mpi_backend.sub"), sub_before), std::make_pair(std::uint64_t{1}, std::uint64_t{8}));

    DCHECK_EQ(delta(log.total(), total_before), std::make_pair(2 + messages + 1, 40 + bytes + 8));
}

// Each rank communicates from its own thread (MPI_THREAD_FUNNELED, which the Open MPI transport
// asks for): a thread the rank starts is refused, naming the rule, before it reaches the
// transport, and the rank's own calls go on as before.
DISTDL_CHECK(a_rank_communicates_from_its_own_thread_only, world_size >= 1) {
    std::string refused;
    std::thread helper([&] {
        try {
            world->barrier();
        } catch (const distdl::communication_error& e) {
            refused = e.what();
        }
    });
    helper.join();
    DCHECK(refused.find("each rank communicates from its own thread only") != std::string::npos);
    int value = world->rank() == 0 ? 5 : 0;
    world->broadcast(&value, 1, 0);
    DCHECK_EQ(value, 5);
}
