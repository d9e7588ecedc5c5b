// The communicator contract, collectives: broadcast from every root, reduce_sum to every
// root, all_reduce_sum, all_gather, all_to_all_v with irregular counts, barrier. Sums use
// integer-valued data so that the result does not depend on the reduction order (the
// simulator folds in rank order, MPI may not). Written once for every transport.
#include <cstdint>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

// Sum over ranks s of (s + 1) * (i + 1): exact in every dtype used below.
std::int64_t expected_sum(int n, std::size_t i) {
    return static_cast<std::int64_t>(n) * (n + 1) / 2 * static_cast<std::int64_t>(i + 1);
}

template <class T>
std::vector<T> contribution(int r, std::size_t count) {
    std::vector<T> v(count);
    for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<T>((r + 1) * static_cast<std::int64_t>(i + 1));
    return v;
}

template <class T>
void check_reduce_to_every_root(const std::shared_ptr<distdl::communicator>& world, std::size_t count) {
    const int n = world->size(), r = world->rank();
    const auto mine = contribution<T>(r, count);
    for (int root = 0; root < n; ++root) {
        std::vector<T> out(count, T(-7));
        // Non-roots pass a null receive buffer: it is not written there.
        world->reduce_sum(mine.data(), r == root ? out.data() : nullptr, count, distdl::dtype_of<T>(), root);
        if (r == root)
            for (std::size_t i = 0; i < count; ++i) DCHECK_EQ(out[i], static_cast<T>(expected_sum(n, i)));
    }
    // Non-roots may also pass a buffer, which stays untouched.
    std::vector<T> out(count, T(-7));
    world->reduce_sum(mine.data(), out.data(), count, distdl::dtype_of<T>(), 0);
    for (std::size_t i = 0; i < count; ++i) DCHECK_EQ(out[i], r == 0 ? static_cast<T>(expected_sum(n, i)) : T(-7));
}

template <class T>
void check_all_reduce(const std::shared_ptr<distdl::communicator>& world, std::size_t count) {
    const int n = world->size(), r = world->rank();
    const auto mine = contribution<T>(r, count);
    std::vector<T> out(count, T(-7));
    world->all_reduce_sum(mine.data(), out.data(), count, distdl::dtype_of<T>());
    for (std::size_t i = 0; i < count; ++i) DCHECK_EQ(out[i], static_cast<T>(expected_sum(n, i)));
}

}  // namespace

DISTDL_CHECK(broadcast_from_every_root, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    for (int root = 0; root < n; ++root) {
        std::vector<double> values(6, -1.0);
        std::vector<std::int64_t> ids(2, -1);
        if (r == root) {
            for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.25 * root + static_cast<double>(i);
            ids = {root, -root};
        }
        world->broadcast(values.data(), values.size(), root);
        world->broadcast(ids.data(), ids.size(), root);
        for (std::size_t i = 0; i < values.size(); ++i) DCHECK_EQ(values[i], 0.25 * root + static_cast<double>(i));
        DCHECK_EQ(ids, (std::vector<std::int64_t>{root, -root}));
    }
    // Empty and large broadcasts.
    world->broadcast(static_cast<double*>(nullptr), 0, n - 1);
    std::vector<float> big(100000, r == 0 ? 2.5f : 0.0f);
    world->broadcast(big.data(), big.size(), 0);
    for (float v : big) DCHECK_EQ(v, 2.5f);
    unsigned char bytes[4] = {0, 0, 0, 0};
    if (r == n - 1) bytes[0] = 1, bytes[1] = 2, bytes[2] = 3, bytes[3] = 255;
    world->broadcast(static_cast<void*>(bytes), 4, distdl::dtype::byte, n - 1);
    DCHECK_EQ(static_cast<int>(bytes[3]), 255);
    DCHECK_EQ(static_cast<int>(bytes[0]) + bytes[1] + bytes[2], 6);
}

DISTDL_CHECK(reduce_sum_to_every_root, world_size >= 1) {
    check_reduce_to_every_root<double>(world, 7);
    check_reduce_to_every_root<float>(world, 3);
    check_reduce_to_every_root<std::int32_t>(world, 4);
    check_reduce_to_every_root<std::int64_t>(world, 2);
    check_reduce_to_every_root<std::uint64_t>(world, 5);
    check_reduce_to_every_root<double>(world, 0);
    check_reduce_to_every_root<double>(world, 50000);
}

DISTDL_CHECK(all_reduce_sum_exact, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    check_all_reduce<double>(world, 9);
    check_all_reduce<float>(world, 2);
    check_all_reduce<std::int32_t>(world, 3);
    check_all_reduce<std::int64_t>(world, 1);
    check_all_reduce<std::uint64_t>(world, 4);
    check_all_reduce<double>(world, 0);
    check_all_reduce<double>(world, 40000);
    // The typed convenience.
    DCHECK_EQ(world->all_reduce_sum(static_cast<std::int64_t>(r)), std::int64_t{n} * (n - 1) / 2);
    DCHECK_EQ(world->all_reduce_sum(1.0), static_cast<double>(n));
}

DISTDL_CHECK(all_gather_blocks_in_rank_order, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto un = static_cast<std::size_t>(n);
    const std::vector<std::int32_t> mine = {r, r * r, -r};
    std::vector<std::int32_t> all(3 * un, -1);
    world->all_gather(mine.data(), all.data(), 3, distdl::dtype::int32);
    for (int s = 0; s < n; ++s) {
        const auto at = 3 * static_cast<std::size_t>(s);
        DCHECK_EQ(all[at], s);
        DCHECK_EQ(all[at + 1], s * s);
        DCHECK_EQ(all[at + 2], -s);
    }
    // Zero elements each.
    world->all_gather(static_cast<const void*>(nullptr), nullptr, 0, distdl::dtype::float64);
    // The typed convenience.
    const auto ranks = world->all_gather(static_cast<std::uint64_t>(r) * 7u);
    DCHECK_EQ(ranks.size(), un);
    for (int s = 0; s < n; ++s) DCHECK_EQ(ranks[static_cast<std::size_t>(s)], static_cast<std::uint64_t>(s) * 7u);
    const auto doubles = world->all_gather(0.5 * r);
    for (int s = 0; s < n; ++s) DCHECK_EQ(doubles[static_cast<std::size_t>(s)], 0.5 * s);
}

// Rank s sends (s + 2d) % 4 elements to rank d (some zero), with a one-element gap between
// blocks and the blocks laid out in reverse rank order on both sides; element k of the
// block from s to d is 1000 s + 10 d + k.
DISTDL_CHECK(all_to_all_v_irregular_counts, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto un = static_cast<std::size_t>(n);
    auto count = [](int s, int d) { return static_cast<std::size_t>((s + 2 * d) % 4); };

    std::vector<std::size_t> send_counts(un), send_displs(un), recv_counts(un), recv_displs(un);
    std::size_t send_extent = 0, recv_extent = 0;
    for (int d = n - 1; d >= 0; --d) {
        const auto ud = static_cast<std::size_t>(d);
        send_counts[ud] = count(r, d);
        send_displs[ud] = send_extent + 1;
        send_extent = send_displs[ud] + send_counts[ud];
        recv_counts[ud] = count(d, r);
        recv_displs[ud] = recv_extent + 1;
        recv_extent = recv_displs[ud] + recv_counts[ud];
    }
    std::vector<double> send(send_extent, -5.0), recv(recv_extent + 1, -9.0);
    for (int d = 0; d < n; ++d) {
        const auto ud = static_cast<std::size_t>(d);
        for (std::size_t k = 0; k < send_counts[ud]; ++k)
            send[send_displs[ud] + k] = 1000.0 * r + 10.0 * d + static_cast<double>(k);
    }
    world->all_to_all_v(send.data(), send_counts, send_displs, recv.data(), recv_counts, recv_displs,
                        distdl::dtype::float64);
    std::vector<bool> written(recv.size(), false);
    for (int s = 0; s < n; ++s) {
        const auto us = static_cast<std::size_t>(s);
        for (std::size_t k = 0; k < recv_counts[us]; ++k) {
            DCHECK_EQ(recv[recv_displs[us] + k], 1000.0 * s + 10.0 * r + static_cast<double>(k));
            written[recv_displs[us] + k] = true;
        }
    }
    // The gaps are untouched.
    for (std::size_t i = 0; i < recv.size(); ++i)
        if (!written[i]) DCHECK_EQ(recv[i], -9.0);

    // Everything empty, null buffers.
    const std::vector<std::size_t> zeros(un, 0);
    world->all_to_all_v(nullptr, zeros, zeros, nullptr, zeros, zeros, distdl::dtype::int64);

    // Only rank 0 receives (one element from every rank, in rank order).
    std::vector<std::size_t> to_zero(un, 0), from_all(un, 0), from_displs(un, 0);
    to_zero[0] = 1;
    if (r == 0)
        for (std::size_t s = 0; s < un; ++s) from_all[s] = 1, from_displs[s] = s;
    std::int64_t mine = 3 * r;
    std::vector<std::int64_t> gathered(un, -1);
    world->all_to_all_v(&mine, to_zero, zeros, gathered.data(), from_all, from_displs, distdl::dtype::int64);
    if (r == 0)
        for (int s = 0; s < n; ++s) DCHECK_EQ(gathered[static_cast<std::size_t>(s)], std::int64_t{3} * s);
}

// Send and receive buffers that overlap get the data as they were before the call, on every
// transport (MPI forbids the overlap; the Open MPI backend copies the source apart first).
DISTDL_CHECK(collectives_over_overlapping_buffers_move_the_data_as_it_was, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto un = static_cast<std::size_t>(n);
    // all_to_all_v in one array: element d goes to rank d, element s comes from rank s.
    std::vector<double> data(un);
    for (std::size_t d = 0; d < un; ++d) data[d] = 100.0 * r + static_cast<double>(d);
    std::vector<std::size_t> counts(un, 1), displs(un);
    for (std::size_t d = 0; d < un; ++d) displs[d] = d;
    world->all_to_all_v(data.data(), counts, displs, data.data(), counts, displs, distdl::dtype::float64);
    for (std::size_t s = 0; s < un; ++s) DCHECK_EQ(data[s], 100.0 * static_cast<double>(s) + r);
    // reduce and all-reduce whose receive starts one element into the send buffer.
    std::vector<double> shifted(4);
    const auto fill = [&] {
        for (std::size_t i = 0; i < shifted.size(); ++i) shifted[i] = static_cast<double>(i + 1) * (r + 1);
    };
    const double ranks_sum = n * (n + 1) / 2.0;
    fill();
    world->all_reduce_sum(shifted.data(), shifted.data() + 1, 3, distdl::dtype::float64);
    for (std::size_t i = 0; i < 3; ++i) DCHECK_EQ(shifted[i + 1], static_cast<double>(i + 1) * ranks_sum);
    fill();
    world->reduce_sum(shifted.data(), shifted.data() + 1, 3, distdl::dtype::float64, 0);
    if (r == 0)
        for (std::size_t i = 0; i < 3; ++i) DCHECK_EQ(shifted[i + 1], static_cast<double>(i + 1) * ranks_sum);
}

// A barrier orders what happens around it: rank 0 posts a receive for each rank only after
// the barrier, while the others send before it.
DISTDL_CHECK(barrier_completes, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    for (int i = 0; i < 3; ++i) world->barrier();
    std::vector<distdl::request> sends;
    std::int32_t mine = r;
    if (r != 0) sends.push_back(world->isend(&mine, 1, 0, 4));
    world->barrier();
    if (r == 0) {
        std::vector<std::int32_t> got(static_cast<std::size_t>(n), -1);
        std::vector<distdl::request> recvs;
        for (int s = 1; s < n; ++s) recvs.push_back(world->irecv(&got[static_cast<std::size_t>(s)], 1, s, 4));
        world->wait_all(recvs);
        for (int s = 1; s < n; ++s) DCHECK_EQ(got[static_cast<std::size_t>(s)], s);
    }
    world->wait_all(sends);
    world->barrier();
}
