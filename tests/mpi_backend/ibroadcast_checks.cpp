// The communicator contract, nonblocking broadcast (ibroadcast): from every root, bit-exact for
// any bit pattern (NaN payloads, -0.0), waited alone or in one wait_all with point-to-point
// requests, large and empty, the root's buffer readable while it is in flight, traffic counted
// like broadcast, and argument errors refused before anything moves. Written once for every
// transport. (A request dropped unwaited completes on Open MPI, transport_mpi_test.cpp, and is
// reported by the simulator, strictness_test.cpp.)
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

// Doubles whose bits differ from every rank's and every root's: a signalling-looking NaN
// payload, -0.0, a subnormal and ordinary values.
std::vector<double> pattern(int root, std::size_t count) {
    std::vector<double> v(count);
    for (std::size_t i = 0; i < count; ++i) {
        switch (i % 4) {
            case 0: {
                const std::uint64_t bits = 0x7ff4000000000000ULL + static_cast<std::uint64_t>(root) * 977 + i;
                std::memcpy(&v[i], &bits, sizeof bits);
                break;
            }
            case 1: v[i] = -0.0; break;
            case 2: v[i] = std::numeric_limits<double>::denorm_min() * static_cast<double>(i + 1); break;
            default: v[i] = 0.1 * root + static_cast<double>(i);
        }
    }
    return v;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

DISTDL_CHECK(ibroadcast_from_every_root_bit_exact, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    for (int root = 0; root < n; ++root) {
        const std::vector<double> want = pattern(root, 9);
        std::vector<double> buf = r == root ? want : std::vector<double>(9, -1.0);
        std::vector<distdl::request> requests;
        requests.push_back(world->ibroadcast(buf.data(), buf.size(), root));
        world->wait_all(requests);
        DCHECK(requests.empty());
        if (!same_bits(buf, want)) DCHECK_FAIL_("ibroadcast from root " << root << " is not bit-exact on rank " << r);
    }
    // Empty, and a byte buffer from the last rank.
    std::vector<distdl::request> requests;
    requests.push_back(world->ibroadcast(static_cast<double*>(nullptr), 0, n - 1));
    world->wait_all(requests);
    unsigned char bytes[3] = {0, 0, 0};
    if (r == n - 1) bytes[0] = 7, bytes[1] = 0, bytes[2] = 255;
    requests.push_back(world->ibroadcast(static_cast<void*>(bytes), 3, distdl::dtype::byte, n - 1));
    world->wait_all(requests);
    DCHECK_EQ(static_cast<int>(bytes[0]), 7);
    DCHECK_EQ(static_cast<int>(bytes[2]), 255);
}

// A large broadcast while the root reads its buffer (the overlap Broadcast uses), and a
// broadcast completed by the same wait_all as a ring of point-to-point messages posted before
// it (every member posts its ibroadcast before waiting for anything).
DISTDL_CHECK(ibroadcast_in_flight_and_with_point_to_point, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const std::size_t count = 150000;  // 1.2 MB: past every eager limit
    std::vector<double> big(count, 0.0), copy(count, 0.0);
    if (r == 0)
        for (std::size_t i = 0; i < count; ++i) big[i] = 0.5 * static_cast<double>(i) - 3.0;
    std::vector<distdl::request> requests;
    requests.push_back(world->ibroadcast(big.data(), count, 0));
    if (r == 0) std::memcpy(copy.data(), big.data(), count * sizeof(double));  // reading is allowed
    world->wait_all(requests);
    for (std::size_t i = 0; i < count; ++i) {
        const double want = 0.5 * static_cast<double>(i) - 3.0;
        if (big[i] != want) DCHECK_FAIL_("large ibroadcast: element " << i << " is " << big[i] << ", expected " << want);
        if (r == 0 && copy[i] != want) DCHECK_FAIL_("root's copy during the ibroadcast: element " << i);
    }

    const int next = (r + 1) % n, previous = (r + n - 1) % n;
    const std::int64_t out = 100 + r;
    std::int64_t in = -1;
    std::vector<std::int64_t> shared(4, -1);
    if (r == n - 1) shared = {1, -2, 3, -4};
    requests.push_back(world->irecv(&in, 1, previous, 5));
    requests.push_back(world->isend(&out, 1, next, 5));
    requests.push_back(world->ibroadcast(shared.data(), shared.size(), n - 1));
    world->wait_all(requests);
    DCHECK(requests.empty());
    DCHECK_EQ(in, 100 + previous);
    DCHECK_EQ(shared, (std::vector<std::int64_t>{1, -2, 3, -4}));
}

// Traffic as for broadcast: the root records size() - 1 messages of the whole buffer; the
// others record nothing.
DISTDL_CHECK(ibroadcast_traffic_counted_like_broadcast, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    auto& log = world->traffic();
    std::vector<float> buf(5, r == 1 % n ? 1.5f : 0.0f);
    const distdl::traffic_totals before = log.total();
    std::vector<distdl::request> requests;
    {
        distdl::traffic_scope scope(log, "ibroadcast_check");
        requests.push_back(world->ibroadcast(buf.data(), buf.size(), 1 % n));
    }
    world->wait_all(requests);
    const std::uint64_t messages = log.total().messages - before.messages;
    const std::uint64_t bytes = log.total().bytes - before.bytes;
    const bool root = r == 1 % n;
    DCHECK_EQ(messages, root ? static_cast<std::uint64_t>(n - 1) : 0u);
    DCHECK_EQ(bytes, root ? static_cast<std::uint64_t>(n - 1) * 5 * sizeof(float) : 0u);
    for (float v : buf) DCHECK_EQ(v, 1.5f);
}

// Bad arguments are refused on the calling rank before anything is started (every rank makes
// the same mistake here, so nobody is left waiting); the communicator stays usable.
DISTDL_CHECK(ibroadcast_argument_errors, world_size >= 1) {
    using distdl::invalid_argument;
    const int n = world->size();
    double x[2] = {1, 2};
    DCHECK_THROWS(world->ibroadcast(x, 2, n), invalid_argument, "out of range");
    DCHECK_THROWS(world->ibroadcast(x, 2, -1), invalid_argument, "out of range");
    DCHECK_THROWS(world->ibroadcast(static_cast<double*>(nullptr), 1, 0), invalid_argument, "null");
    std::vector<distdl::request> requests;
    requests.push_back(world->ibroadcast(x, 2, 0));
    world->wait_all(requests);
    DCHECK_EQ(x[1], 2.0);
}

// A request destroyed without wait_all (as when an exception unwinds past it) completes the
// broadcast: afterwards the buffer holds the data and the next collective matches.
