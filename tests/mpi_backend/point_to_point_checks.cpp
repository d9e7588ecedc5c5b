// The communicator contract, point to point: isend/irecv with tags, wait_all, zero-length
// messages, non-overtaking order per (source, tag), every dtype. Written once for every
// transport (simulator and MPI).
#include <cstdint>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

int right_of(int r, int n) { return (r + 1) % n; }
int left_of(int r, int n) { return (r + n - 1) % n; }

}  // namespace

// Every rank sends a different message to each neighbour of the ring, told apart by tag
// only where both neighbours are the same rank (2 ranks) or itself (1 rank). The receives
// are posted in the opposite order to the sends.
DISTDL_CHECK(ring_exchange_with_tags, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const int right = right_of(r, n), left = left_of(r, n);
    constexpr int to_right_tag = 11, to_left_tag = 12;
    std::vector<double> to_right(5), to_left(3);
    for (std::size_t i = 0; i < to_right.size(); ++i) to_right[i] = 1000.0 * r + static_cast<double>(i);
    for (std::size_t i = 0; i < to_left.size(); ++i) to_left[i] = -1000.0 * r - static_cast<double>(i);
    std::vector<double> from_left(5, -1.0), from_right(3, -1.0);

    std::vector<distdl::request> requests;
    requests.push_back(world->irecv(from_right.data(), from_right.size(), right, to_left_tag));
    requests.push_back(world->irecv(from_left.data(), from_left.size(), left, to_right_tag));
    requests.push_back(world->isend(to_right.data(), to_right.size(), right, to_right_tag));
    requests.push_back(world->isend(to_left.data(), to_left.size(), left, to_left_tag));
    world->wait_all(requests);
    DCHECK(requests.empty());

    for (std::size_t i = 0; i < from_left.size(); ++i) DCHECK_EQ(from_left[i], 1000.0 * left + static_cast<double>(i));
    for (std::size_t i = 0; i < from_right.size(); ++i) DCHECK_EQ(from_right[i], -1000.0 * right - static_cast<double>(i));
}

// Tags select among messages from one source regardless of posting order.
DISTDL_CHECK(tags_select_messages, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const int right = right_of(r, n), left = left_of(r, n);
    std::vector<std::int64_t> sent(4);
    for (int t = 0; t < 4; ++t) sent[t] = 10 * r + t;
    std::vector<std::int64_t> got(4, -1);
    std::vector<distdl::request> requests;
    // Sends in tag order 0..3 (tags 0 and the largest accepted tag included).
    const int tags[4] = {0, 5, 77, distdl::max_tag};
    for (int t = 0; t < 4; ++t) requests.push_back(world->isend(&sent[t], 1, right, tags[t]));
    // Receives in reverse tag order.
    for (int t = 3; t >= 0; --t) requests.push_back(world->irecv(&got[t], 1, left, tags[t]));
    world->wait_all(requests);
    for (int t = 0; t < 4; ++t) DCHECK_EQ(got[t], std::int64_t{10} * left + t);
}

// Zero-length messages to every rank (self included), null buffers allowed, interleaved
// with non-empty messages on the same tag: they are matched in order like any other.
DISTDL_CHECK(zero_length_messages, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    constexpr int tag = 3;
    std::vector<double> payload = {static_cast<double>(r), 0.5};
    std::vector<std::vector<double>> got(static_cast<std::size_t>(n), std::vector<double>(2, -1.0));
    std::vector<distdl::request> requests;
    for (int s = 0; s < n; ++s) {
        requests.push_back(world->irecv(static_cast<double*>(nullptr), 0, s, tag));
        requests.push_back(world->irecv(got[static_cast<std::size_t>(s)].data(), 2, s, tag));
        requests.push_back(world->irecv(static_cast<double*>(nullptr), 0, s, tag));
    }
    for (int d = 0; d < n; ++d) {
        requests.push_back(world->isend(static_cast<const double*>(nullptr), 0, d, tag));
        requests.push_back(world->isend(payload.data(), 2, d, tag));
        requests.push_back(world->isend(payload.data(), 0, d, tag));
    }
    world->wait_all(requests);
    for (int s = 0; s < n; ++s) DCHECK_EQ(got[static_cast<std::size_t>(s)], (std::vector<double>{static_cast<double>(s), 0.5}));

    // A wait on nothing returns at once.
    std::vector<distdl::request> none;
    world->wait_all(none);
}

// Several messages with the same (source, tag) arrive in the order they were sent, whatever
// their sizes (a large one included, which MPI sends by rendezvous rather than eagerly).
DISTDL_CHECK(non_overtaking_same_source_and_tag, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const int right = right_of(r, n), left = left_of(r, n);
    constexpr int tag = 21;
    const std::vector<std::size_t> sizes = {3, 0, 70000, 1, 3, 2};
    std::vector<std::vector<double>> out(sizes.size()), in(sizes.size());
    for (std::size_t m = 0; m < sizes.size(); ++m) {
        out[m].resize(sizes[m]);
        for (std::size_t i = 0; i < sizes[m]; ++i) out[m][i] = 1e6 * r + 1e5 * static_cast<double>(m) + static_cast<double>(i % 1000);
        in[m].assign(sizes[m], -1.0);
    }
    std::vector<distdl::request> requests;
    for (std::size_t m = 0; m < sizes.size(); ++m) requests.push_back(world->irecv(in[m].data(), sizes[m], left, tag));
    for (std::size_t m = 0; m < sizes.size(); ++m) requests.push_back(world->isend(out[m].data(), sizes[m], right, tag));
    world->wait_all(requests);
    for (std::size_t m = 0; m < sizes.size(); ++m)
        for (std::size_t i = 0; i < sizes[m]; ++i)
            DCHECK_EQ(in[m][i], 1e6 * left + 1e5 * static_cast<double>(m) + static_cast<double>(i % 1000));

    // The same with separate waits: the second batch of sends only starts after the first
    // batch completed, and receives posted one at a time still see the order.
    for (std::size_t m = 0; m < 3; ++m) {
        std::vector<distdl::request> one;
        std::int32_t value = -1, mine = 100 * r + static_cast<std::int32_t>(m);
        one.push_back(world->isend(&mine, 1, right, tag));
        one.push_back(world->irecv(&value, 1, left, tag));
        world->wait_all(one);
        DCHECK_EQ(value, 100 * left + static_cast<std::int32_t>(m));
    }
}

// Every dtype travels bit-exactly.
DISTDL_CHECK(every_dtype_point_to_point, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const int right = right_of(r, n), left = left_of(r, n);
    const float f_out[2] = {0.1f * static_cast<float>(r), -3.5f};
    const double d_out[2] = {0.1 * r, 1e300};
    const std::int32_t i32_out[2] = {-r, INT32_MIN};
    const std::int64_t i64_out[2] = {-std::int64_t{r} * 3000000000LL, INT64_MAX};
    const std::uint64_t u64_out[2] = {static_cast<std::uint64_t>(r), UINT64_MAX};
    const unsigned char b_out[3] = {static_cast<unsigned char>(r), 0xff, 0};
    float f_in[2] = {};
    double d_in[2] = {};
    std::int32_t i32_in[2] = {};
    std::int64_t i64_in[2] = {};
    std::uint64_t u64_in[2] = {};
    unsigned char b_in[3] = {};
    std::vector<distdl::request> requests;
    requests.push_back(world->irecv(f_in, 2, left, 1));
    requests.push_back(world->irecv(d_in, 2, left, 2));
    requests.push_back(world->irecv(i32_in, 2, left, 3));
    requests.push_back(world->irecv(i64_in, 2, left, 4));
    requests.push_back(world->irecv(u64_in, 2, left, 5));
    requests.push_back(world->irecv(b_in, 3, left, 6));
    requests.push_back(world->isend(f_out, 2, right, 1));
    requests.push_back(world->isend(d_out, 2, right, 2));
    requests.push_back(world->isend(i32_out, 2, right, 3));
    requests.push_back(world->isend(i64_out, 2, right, 4));
    requests.push_back(world->isend(u64_out, 2, right, 5));
    requests.push_back(world->isend(static_cast<const void*>(b_out), 3, distdl::dtype::byte, right, 6));
    world->wait_all(requests);
    DCHECK_EQ(f_in[0], 0.1f * static_cast<float>(left));
    DCHECK_EQ(f_in[1], -3.5f);
    DCHECK_EQ(d_in[0], 0.1 * left);
    DCHECK_EQ(d_in[1], 1e300);
    DCHECK_EQ(i32_in[0], -left);
    DCHECK_EQ(i32_in[1], INT32_MIN);
    DCHECK_EQ(i64_in[0], -std::int64_t{left} * 3000000000LL);
    DCHECK_EQ(i64_in[1], INT64_MAX);
    DCHECK_EQ(u64_in[0], static_cast<std::uint64_t>(left));
    DCHECK_EQ(u64_in[1], UINT64_MAX);
    DCHECK_EQ(static_cast<int>(b_in[0]), left % 256);
    DCHECK_EQ(static_cast<int>(b_in[1]), 0xff);
    DCHECK_EQ(static_cast<int>(b_in[2]), 0);
}

// All-pairs exchange: every rank sends to every rank (itself included) at once.
DISTDL_CHECK(all_pairs_exchange, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto un = static_cast<std::size_t>(n);
    std::vector<std::int64_t> out(un), in(un, -1);
    for (int d = 0; d < n; ++d) out[static_cast<std::size_t>(d)] = 1000 * r + d;
    std::vector<distdl::request> requests;
    for (int s = 0; s < n; ++s) requests.push_back(world->irecv(&in[static_cast<std::size_t>(s)], 1, s, 9));
    for (int d = n - 1; d >= 0; --d) requests.push_back(world->isend(&out[static_cast<std::size_t>(d)], 1, d, 9));
    world->wait_all(requests);
    for (int s = 0; s < n; ++s) DCHECK_EQ(in[static_cast<std::size_t>(s)], std::int64_t{1000} * s + r);
}
