// The shares of large collectives (each member folds or copies its slice of whole cache
// lines) and the one-pass fold behind every simulator sum: special cases that the general
// tests do not reach. Sums are checked bit for bit against a rank-order fold computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "simulator/run.hpp"
#include "simulator/sum_kernels.hpp"
#include "tests/simulator/sim_test_util.hpp"

namespace {

using distdl::dtype;
using sim_test::comm_ptr;
using sim_test::contribution;
using sim_test::rank_order_sum;
namespace sim = distdl::sim;

template <class T>
bool same_bits(const T* a, const std::vector<T>& b) {
    return b.empty() || std::memcmp(a, b.data(), b.size() * sizeof(T)) == 0;  // memcmp wants non-null
}

TEST(sim_fold_sum, equals_the_term_by_term_fold_for_every_length_and_term_count) {
    for (std::size_t terms = 1; terms <= 5; ++terms) {
        for (std::size_t count = 0; count <= 35; ++count) {
            std::vector<std::vector<double>> t;
            std::vector<const void*> p;
            for (std::size_t r = 0; r < terms; ++r) t.push_back(contribution<double>(static_cast<int>(r), count));
            for (const auto& v : t) p.push_back(v.data());
            std::vector<double> expected = t[0];
            for (std::size_t r = 1; r < terms; ++r)
                for (std::size_t i = 0; i < count; ++i) expected[i] += t[r][i];
            std::vector<double> out(count, -7.0);
            sim::fold_sum(out.data(), p.data(), terms, count, dtype::float64);
            EXPECT_TRUE(same_bits(out.data(), expected)) << terms << " terms, " << count << " elements";
            // In place: the output is one of the terms (the first, then the last).
            for (std::size_t which : {std::size_t{0}, terms - 1}) {
                std::vector<double> own = t[which];
                std::vector<const void*> q = p;
                q[which] = own.data();
                sim::fold_sum(own.data(), q.data(), terms, count, dtype::float64);
                EXPECT_TRUE(same_bits(own.data(), expected)) << "in place as term " << which;
            }
        }
    }
}

TEST(sim_fold_sum, refuses_bytes) {
    unsigned char a[4] = {}, b[4] = {};
    const void* p[2] = {a, b};
    EXPECT_THROW(sim::fold_sum(a, p, 2, 4, dtype::byte), distdl::invalid_argument);
}

// Large enough for the parallel shares, not a multiple of a cache line or of a chunk, and
// placed one element off the allocation's alignment so that shares start mid-line.
constexpr std::size_t odd_large = 2048 * 9 + 3;

template <class T>
void check_sums(int n, std::size_t count, std::size_t offset) {
    const auto expected = rank_order_sum<T>(n, count);
    sim::run(n, [&](const comm_ptr& world) {
        const int me = world->rank();
        const auto mine = contribution<T>(me, count);
        std::vector<T> send(count + offset), all(count + offset, T(-1)), at_root(count + offset, T(-1));
        std::copy(mine.begin(), mine.end(), send.begin() + static_cast<std::ptrdiff_t>(offset));
        T* s = send.data() + offset;
        world->all_reduce_sum(s, all.data() + offset, count, distdl::dtype_of<T>());
        EXPECT_TRUE(same_bits(all.data() + offset, expected)) << "all_reduce_sum, n " << n << ", rank " << me;
        const int root = n / 2;
        world->reduce_sum(s, me == root ? at_root.data() + offset : nullptr, count, distdl::dtype_of<T>(), root);
        if (me == root) EXPECT_TRUE(same_bits(at_root.data() + offset, expected)) << "reduce_sum, n " << n;
        else EXPECT_EQ(at_root[offset], T(-1)) << "a non-root's buffer was written";
        // In place: all-reduce into the send buffer, and a reduce whose root sums into its own.
        std::vector<T> in_place = mine;
        world->all_reduce_sum(in_place.data(), in_place.data(), count, distdl::dtype_of<T>());
        EXPECT_TRUE(same_bits(in_place.data(), expected)) << "in-place all_reduce_sum, n " << n;
        in_place = mine;
        world->reduce_sum(in_place.data(), me == root ? in_place.data() : nullptr, count, distdl::dtype_of<T>(), root);
        if (me == root) EXPECT_TRUE(same_bits(in_place.data(), expected)) << "in-place reduce_sum, n " << n;
        else EXPECT_TRUE(same_bits(in_place.data(), mine)) << "a non-root's send buffer was written";
    });
}

TEST(sim_collective_shares, two_members_sum_exactly_a_plus_b) {
    check_sums<double>(2, odd_large, 0);
    check_sums<double>(2, odd_large, 1);
}

TEST(sim_collective_shares, uneven_shares_of_every_summable_type_are_exact) {
    for (int n : {3, 7}) {
        check_sums<double>(n, odd_large, 1);
        check_sums<float>(n, 2 * odd_large, 3);
    }
    check_sums<std::int32_t>(5, 2 * odd_large, 1);
    check_sums<std::int64_t>(5, odd_large, 1);
    check_sums<std::uint64_t>(5, odd_large, 0);
}

TEST(sim_collective_shares, a_single_member_copies_its_own_sum) {
    check_sums<double>(1, odd_large, 1);
}

TEST(sim_collective_shares, byte_broadcasts_and_many_members_split_in_whole_lines) {
    // Just above the parallel threshold in bytes, but as single bytes spread over many
    // members; and a broadcast from a middle root, one byte off alignment.
    const std::size_t count = 64 * 1024 + 5;
    std::vector<unsigned char> source(count + 1);
    for (std::size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
    for (int n : {2, 5, 9}) {
        const int root = n / 2;
        sim::run(n, [&](const comm_ptr& world) {
            std::vector<unsigned char> buf(count + 1, 0);
            if (world->rank() == root) buf = source;
            world->broadcast(buf.data() + 1, count, dtype::byte, root);
            EXPECT_EQ(std::memcmp(buf.data() + 1, source.data() + 1, count), 0) << "n " << n << ", rank " << world->rank();
            EXPECT_EQ(buf[0], world->rank() == root ? source[0] : 0) << "a byte before the buffer was written";
        });
    }
    // 40 members and a sum just above the threshold: each member has a few dozen lines.
    check_sums<double>(40, 64 * 1024 / 8 + 9, 1);
}

TEST(sim_collective_shares, zero_counts_complete_without_touching_buffers) {
    sim::run(3, [](const comm_ptr& world) {
        double send = 1.0, recv = -1.0;
        world->broadcast(&send, 0, dtype::float64, 2);
        world->reduce_sum(&send, &recv, 0, dtype::float64, 0);
        world->all_reduce_sum(&send, &recv, 0, dtype::float64);
        EXPECT_EQ(send, 1.0);
        EXPECT_EQ(recv, -1.0);
    });
}

}  // namespace
