// The send-buffer fingerprint: the copying variant copies exactly and agrees with the plain
// one for every length (pieces, blocks and tails), and a change of any single byte, or a swap
// of two words, changes it, also across the copy's piece boundaries.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "simulator/send_fingerprint.hpp"

namespace {

namespace sim = distdl::sim;

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(gen());
    return v;
}

TEST(sim_send_fingerprint, copying_gives_the_same_fingerprint_and_an_exact_copy_for_every_length) {
    // Around the hashes' blocks (24, 32 bytes) and the copy's 15 KiB pieces.
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 100; ++n) lengths.push_back(n);
    for (std::size_t n : {15359, 15360, 15361, 30719, 30720, 30744, 100000, 1000003}) lengths.push_back(n);
    for (std::size_t n : lengths) {
        const auto src = random_bytes(n, static_cast<unsigned>(n));
        std::vector<unsigned char> dst(n + 1, 0xAB);
        EXPECT_EQ(sim::copy_with_fingerprint(dst.data(), src.data(), n), sim::fingerprint(src.data(), n)) << n;
        if (n > 0) {
            EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0) << n;
        }
        EXPECT_EQ(dst[n], 0xAB) << "wrote past the end, length " << n;
    }
}

TEST(sim_send_fingerprint, any_single_byte_change_is_caught) {
    for (std::size_t n : {1, 7, 8, 23, 24, 25, 33, 47, 15361, 40000}) {
        auto buf = random_bytes(n, 11);
        const std::uint64_t original = sim::fingerprint(buf.data(), n);
        for (std::size_t at = 0; at < n; ++at) {
            for (unsigned char flip : {0x01, 0x80, 0xFF}) {
                buf[at] ^= flip;
                EXPECT_NE(sim::fingerprint(buf.data(), n), original) << "length " << n << ", byte " << at;
                buf[at] ^= flip;
            }
        }
        EXPECT_EQ(sim::fingerprint(buf.data(), n), original);
    }
}

TEST(sim_send_fingerprint, swapped_words_and_a_different_length_are_caught) {
    auto buf = random_bytes(4096, 3);
    const std::uint64_t original = sim::fingerprint(buf.data(), buf.size());
    for (std::size_t a = 0; a < 64; ++a) {
        for (std::size_t b = a + 1; b < 64; ++b) {
            auto swapped = buf;
            std::memcpy(swapped.data() + 8 * a, buf.data() + 8 * b, 8);
            std::memcpy(swapped.data() + 8 * b, buf.data() + 8 * a, 8);
            if (std::memcmp(swapped.data(), buf.data(), buf.size()) == 0) continue;
            EXPECT_NE(sim::fingerprint(swapped.data(), swapped.size()), original) << "words " << a << ", " << b;
        }
    }
    // All-zero buffers of different lengths differ.
    const std::vector<unsigned char> zeros(64, 0);
    EXPECT_NE(sim::fingerprint(zeros.data(), 48), sim::fingerprint(zeros.data(), 56));
}

}  // namespace
