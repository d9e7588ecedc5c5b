// The send-buffer fingerprint, for every code this CPU runs (the vector code of each hash and
// its portable code): the vector and portable codes of one hash agree; copying gives the plain
// fingerprint and an exact copy for every length, and for boxes whatever the destination's
// runs; a change of one word or one byte is always caught; and the structured changes a weak
// hash misses are caught: swaps at every distance and two sign flips (a sum of each lane's words
// misses both), two one-bit flips in consecutive words of a lane (a single multiply per step
// misses one pair of bits), zeroed, shifted and rotated runs, a constant everywhere, changes of
// the tail bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/array_box.hpp"
#include "simulator/send_fingerprint.hpp"

namespace {

namespace sim = distdl::sim;
using code = sim::detail::fingerprint_code;

const char* name(code c) {
    switch (c) {
        case code::madd52_vector: return "madd52_vector";
        case code::madd52_portable: return "madd52_portable";
        case code::mul32_vector: return "mul32_vector";
        case code::mul32_portable: return "mul32_portable";
    }
    return "?";
}

std::vector<code> supported_codes() {
    std::vector<code> out;
    for (code c : {code::madd52_vector, code::madd52_portable, code::mul32_vector, code::mul32_portable})
        if (sim::detail::fingerprint_code_supported(c)) out.push_back(c);
    return out;
}

// Fingerprints in this scope use `c`.
class using_code {
  public:
    explicit using_code(code c) { sim::detail::force_fingerprint_code(c); }
    ~using_code() { sim::detail::unforce_fingerprint_code(); }
    using_code(const using_code&) = delete;
    using_code& operator=(const using_code&) = delete;
};

std::vector<unsigned char> random_bytes(std::size_t n, unsigned seed) {
    std::mt19937 gen(seed);
    std::vector<unsigned char> v(n);
    for (auto& b : v) b = static_cast<unsigned char>(gen());
    return v;
}

// Random doubles in [1, 2) with random signs: no zeros, no two equal in practice.
std::vector<double> random_doubles(std::size_t n, unsigned seed) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> magnitude(1.0, 2.0);
    std::vector<double> v(n);
    for (auto& x : v) x = (gen() & 1 ? -1.0 : 1.0) * magnitude(gen);
    return v;
}

std::uint64_t fingerprint_of(const std::vector<double>& v) { return sim::fingerprint(v.data(), v.size() * 8); }

std::uint64_t bits_of(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, 8);
    return b;
}

TEST(sim_send_fingerprint, the_process_uses_the_fastest_code_and_the_codes_of_one_hash_agree) {
    const code in_use = sim::detail::fingerprint_code_in_use();
    std::cout << "fingerprint code in use: " << name(in_use) << "\n";
    if (sim::detail::fingerprint_code_supported(code::madd52_vector)) {
        EXPECT_EQ(in_use, code::madd52_vector);
    } else if (sim::detail::fingerprint_code_supported(code::mul32_vector)) {
        EXPECT_EQ(in_use, code::mul32_vector);
    } else {
        EXPECT_EQ(in_use, code::mul32_portable);
    }
    // Lengths around the words (8 bytes), blocks (256) and the portable copy's pieces (15 KiB).
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 600; ++n) lengths.push_back(n);
    for (std::size_t n : {15359, 15360, 15361, 30727, 100003}) lengths.push_back(n);
    for (auto [vector, portable] : {std::pair{code::madd52_vector, code::madd52_portable},
                                    std::pair{code::mul32_vector, code::mul32_portable}}) {
        if (!sim::detail::fingerprint_code_supported(vector)) continue;
        for (std::size_t n : lengths) {
            const auto src = random_bytes(n, static_cast<unsigned>(n));
            std::uint64_t by_vector, by_portable;
            {
                using_code use(vector);
                by_vector = sim::fingerprint(src.data(), n);
            }
            {
                using_code use(portable);
                by_portable = sim::fingerprint(src.data(), n);
            }
            EXPECT_EQ(by_vector, by_portable) << name(vector) << ", length " << n;
        }
    }
    // The two hashes are different functions.
    const auto src = random_bytes(1000, 5);
    std::uint64_t madd52, mul32;
    {
        using_code use(code::madd52_portable);
        madd52 = sim::fingerprint(src.data(), src.size());
    }
    {
        using_code use(code::mul32_portable);
        mul32 = sim::fingerprint(src.data(), src.size());
    }
    EXPECT_NE(madd52, mul32);
}

TEST(sim_send_fingerprint, copying_gives_the_same_fingerprint_and_an_exact_copy_for_every_length) {
    std::vector<std::size_t> lengths;
    for (std::size_t n = 0; n <= 600; ++n) lengths.push_back(n);
    for (std::size_t n : {15359, 15360, 15361, 30719, 30720, 30744, 100000, 1000003}) lengths.push_back(n);
    for (code c : supported_codes()) {
        using_code use(c);
        for (std::size_t n : lengths) {
            const auto src = random_bytes(n, static_cast<unsigned>(n));
            std::vector<unsigned char> dst(n + 1, 0xAB);
            EXPECT_EQ(sim::copy_with_fingerprint(dst.data(), src.data(), n), sim::fingerprint(src.data(), n))
                << name(c) << ", length " << n;
            if (n > 0) {
                EXPECT_EQ(std::memcmp(dst.data(), src.data(), n), 0) << name(c) << ", length " << n;
            }
            EXPECT_EQ(dst[n], 0xAB) << name(c) << ": wrote past the end, length " << n;
        }
    }
}

// Copies of streaming_min_bytes and more store past the caches: by 32-byte stores where the
// destination allows, by 16-byte ones, or plainly; every alignment gives the same bytes and
// fingerprint, and nothing outside the destination is written.
TEST(sim_send_fingerprint, large_copies_are_exact_at_every_destination_alignment) {
    const std::size_t n = sim::streaming_min_bytes + 1000;
    const auto src = random_bytes(n + 64, 7);
    for (code c : supported_codes()) {
        using_code use(c);
        for (std::size_t src_offset : {0, 8, 24}) {
            const unsigned char* from = src.data() + src_offset;
            const std::uint64_t expected = sim::fingerprint(from, n);
            for (std::size_t dst_offset : {0, 8, 16, 24, 32, 40, 1, 3}) {
                std::vector<unsigned char> space(n + 128, 0xAB);
                auto* aligned = reinterpret_cast<unsigned char*>(
                    (reinterpret_cast<std::uintptr_t>(space.data()) + 63) / 64 * 64);
                unsigned char* to = aligned + dst_offset;
                EXPECT_EQ(sim::copy_with_fingerprint(to, from, n), expected)
                    << name(c) << ", source offset " << src_offset << ", destination offset " << dst_offset;
                EXPECT_EQ(std::memcmp(to, from, n), 0)
                    << name(c) << ", source offset " << src_offset << ", destination offset " << dst_offset;
                const auto untouched = [](unsigned char b) { return b == 0xAB; };
                EXPECT_TRUE(std::all_of(space.data(), to, untouched));
                EXPECT_TRUE(std::all_of(to + n, space.data() + space.size(), untouched));
            }
        }
    }
}

distdl::strided_layout layout_of(const distdl::array_box& box, std::size_t element_size) {
    distdl::strided_layout l;
    EXPECT_TRUE(distdl::make_layout(box, element_size, l));
    return l;
}

// The box's bytes in box order, gathered run by run.
std::vector<unsigned char> gather(const std::vector<unsigned char>& array, const distdl::strided_layout& l) {
    std::vector<unsigned char> out;
    for (distdl::layout_cursor c(l); c.left() != 0;) {
        const std::size_t run = c.left();
        out.insert(out.end(), array.begin() + static_cast<std::ptrdiff_t>(c.offset()),
                   array.begin() + static_cast<std::ptrdiff_t>(c.offset() + run));
        c.advance(run);
    }
    return out;
}

TEST(sim_send_fingerprint, a_box_copies_exactly_and_has_one_fingerprint_whatever_the_destination_runs) {
    struct box_case {
        distdl::array_box src, dst;
        std::size_t element;
    };
    // Source runs of whole words, of partial words (4- and 1-byte elements, odd counts), a
    // single element, several blocks; destinations contiguous, with other runs, with runs that
    // end inside a source word.
    const std::vector<box_case> cases = {
        {{{40, 300}, {3, 17}, {20, 260}}, {{20, 260}, {0, 0}, {20, 260}}, 8},
        {{{40, 300}, {3, 17}, {20, 260}}, {{50, 130}, {5, 0}, {40, 130}}, 8},
        {{{64, 64}, {0, 5}, {64, 1}}, {{64}, {0}, {64}}, 8},
        {{{33, 67}, {1, 2}, {31, 61}}, {{31, 61}, {0, 0}, {31, 61}}, 4},
        {{{33, 67}, {1, 2}, {31, 61}}, {{61, 31}, {0, 0}, {61, 31}}, 4},
        {{{30, 700}, {2, 3}, {9, 645}}, {{9, 645}, {0, 0}, {9, 645}}, 1},
        {{{30, 700}, {2, 3}, {9, 645}}, {{1935, 3}, {0, 0}, {1935, 3}}, 1},
        {{{12, 10, 520}, {1, 2, 3}, {5, 7, 512}}, {{35, 1024}, {0, 0}, {35, 512}}, 8},
        // Large enough to stream (sim::streaming_min_bytes): rows of 2 KiB into rows at a
        // 16-byte offset, and rows of odd length.
        {{{300, 256}, {0, 0}, {300, 256}}, {{300, 514}, {0, 2}, {300, 256}}, 8},
        {{{200, 700}, {3, 1}, {190, 697}}, {{190, 699}, {0, 1}, {190, 697}}, 4},
    };
    for (code c : supported_codes()) {
        using_code use(c);
        for (std::size_t k = 0; k < cases.size(); ++k) {
            const auto& bc = cases[k];
            const auto src_layout = layout_of(bc.src, bc.element);
            const auto dst_layout = layout_of(bc.dst, bc.element);
            ASSERT_EQ(src_layout.bytes(), dst_layout.bytes()) << "case " << k;
            std::size_t src_volume = bc.element, dst_volume = bc.element;
            for (std::size_t s : bc.src.shape) src_volume *= s;
            for (std::size_t s : bc.dst.shape) dst_volume *= s;
            const auto src = random_bytes(src_volume, static_cast<unsigned>(k));
            std::vector<unsigned char> dst(dst_volume, 0xAB), expected(dst_volume, 0xAB);
            distdl::copy_layout(expected.data(), dst_layout, src.data(), src_layout);
            const std::uint64_t copied = sim::copy_with_fingerprint(dst.data(), dst_layout, src.data(), src_layout);
            EXPECT_EQ(dst, expected) << name(c) << ", case " << k;
            EXPECT_EQ(copied, sim::fingerprint(src.data(), src_layout)) << name(c) << ", case " << k;
            // Runs of whole words are one stream: the box has its packed bytes' fingerprint.
            const auto packed = gather(src, src_layout);
            if (src_layout.run % 8 == 0) {
                EXPECT_EQ(copied, sim::fingerprint(packed.data(), packed.size())) << name(c) << ", case " << k;
            }
            // A byte of the box changed is caught; one outside it is not part of the message.
            auto changed = src;
            const distdl::layout_cursor first(src_layout);
            changed[first.offset() + src_layout.run - 1] ^= 0x40;
            EXPECT_NE(sim::fingerprint(changed.data(), src_layout), copied) << name(c) << ", case " << k;
        }
    }
}

TEST(sim_send_fingerprint, any_change_of_one_byte_or_one_word_is_caught) {
    for (code c : supported_codes()) {
        using_code use(c);
        for (std::size_t n : {1, 7, 8, 9, 255, 256, 257, 263, 519, 1100}) {
            auto buf = random_bytes(n, 11);
            const std::uint64_t original = sim::fingerprint(buf.data(), n);
            for (std::size_t at = 0; at < n; ++at) {
                for (unsigned char flip : {0x01, 0x80, 0xFF}) {
                    buf[at] ^= flip;
                    EXPECT_NE(sim::fingerprint(buf.data(), n), original) << name(c) << ", length " << n << ", byte " << at;
                    buf[at] ^= flip;
                }
            }
            std::mt19937_64 gen(n);
            for (std::size_t at = 0; at + 8 <= n; at += 8) {
                std::uint64_t word;
                std::memcpy(&word, buf.data() + at, 8);
                for (std::uint64_t other : {gen(), word ^ (std::uint64_t{1} << 63), word ^ (std::uint64_t{1} << 31), ~word}) {
                    std::memcpy(buf.data() + at, &other, 8);
                    EXPECT_NE(sim::fingerprint(buf.data(), n), original) << name(c) << ", length " << n << ", word at " << at;
                }
                std::memcpy(buf.data() + at, &word, 8);
            }
            EXPECT_EQ(sim::fingerprint(buf.data(), n), original);
        }
        // Longer buffers: every byte around the block and piece boundaries.
        const std::size_t n = 40000;
        auto buf = random_bytes(n, 12);
        const std::uint64_t original = sim::fingerprint(buf.data(), n);
        for (std::size_t edge : {std::size_t{256}, std::size_t{15360}, std::size_t{30720}, n - 40}) {
            for (std::size_t at = edge - 24; at < edge + 24 && at < n; ++at) {
                buf[at] ^= 0x80;
                EXPECT_NE(sim::fingerprint(buf.data(), n), original) << name(c) << ", byte " << at;
                buf[at] ^= 0x80;
            }
        }
    }
}

TEST(sim_send_fingerprint, swapped_words_are_caught_at_every_distance) {
    // 300 doubles (nine blocks and a part): every pair of positions, so every distance, even
    // ones and whole blocks (the same lane) included; once with general doubles, once with
    // 1.0 and -1.0 only (words that differ in the sign bit alone).
    const std::size_t n = 300;
    std::vector<double> signs(n);
    std::mt19937 gen(7);
    for (auto& x : signs) x = gen() & 1 ? 1.0 : -1.0;
    for (code c : supported_codes()) {
        using_code use(c);
        for (const auto& values : {random_doubles(n, 3), signs}) {
            const std::uint64_t original = fingerprint_of(values);
            std::size_t swaps = 0;
            auto v = values;
            for (std::size_t a = 0; a < n; ++a) {
                for (std::size_t b = a + 1; b < n; ++b) {
                    if (bits_of(v[a]) == bits_of(v[b])) continue;
                    std::swap(v[a], v[b]);
                    ++swaps;
                    EXPECT_NE(fingerprint_of(v), original) << name(c) << ": words " << a << ", " << b;
                    std::swap(v[a], v[b]);
                }
            }
            EXPECT_GT(swaps, n * n / 5);
        }
    }
}

TEST(sim_send_fingerprint, two_sign_flips_are_caught) {
    const std::size_t n = 300;
    const auto values = random_doubles(n, 4);
    for (code c : supported_codes()) {
        using_code use(c);
        const std::uint64_t original = fingerprint_of(values);
        auto v = values;
        for (std::size_t a = 0; a < n; ++a) {
            for (std::size_t b = a + 1; b < n; ++b) {
                v[a] = -v[a];
                v[b] = -v[b];
                EXPECT_NE(fingerprint_of(v), original) << name(c) << ": doubles " << a << ", " << b;
                v[a] = -v[a];
                v[b] = -v[b];
            }
        }
    }
}

TEST(sim_send_fingerprint, two_one_bit_flips_in_consecutive_words_of_a_lane_are_caught) {
    // Words k and k + 32 (256 bytes apart) go into the same lane one step after the other: a
    // lane step that leaves some bit's difference as one fixed bit (a single multiply does, for
    // the top bit) lets a flip of it and a flip of that bit in the next word cancel.
    const auto values = random_bytes(300 * 8, 13);
    for (code c : supported_codes()) {
        using_code use(c);
        const std::uint64_t original = sim::fingerprint(values.data(), values.size());
        auto v = values;
        for (std::size_t word : {0, 37, 255}) {
            for (std::size_t i = 0; i < 64; ++i) {
                for (std::size_t j = 0; j < 64; ++j) {
                    v[8 * word + i / 8] ^= static_cast<unsigned char>(1u << (i % 8));
                    v[8 * (word + 32) + j / 8] ^= static_cast<unsigned char>(1u << (j % 8));
                    EXPECT_NE(sim::fingerprint(v.data(), v.size()), original)
                        << name(c) << ": bit " << i << " of word " << word << ", bit " << j << " of word " << word + 32;
                    v[8 * word + i / 8] ^= static_cast<unsigned char>(1u << (i % 8));
                    v[8 * (word + 32) + j / 8] ^= static_cast<unsigned char>(1u << (j % 8));
                }
            }
        }
    }
}

TEST(sim_send_fingerprint, zeroed_shifted_and_rotated_runs_and_a_constant_everywhere_are_caught) {
    const std::size_t n = 517;  // doubles: 16 blocks and 5 words
    const auto values = random_doubles(n, 9);
    for (code c : supported_codes()) {
        using_code use(c);
        const std::uint64_t original = fingerprint_of(values);
        for (std::size_t start : {0, 1, 31, 32, 33, 100, 480, 512}) {
            for (std::size_t length : {1, 2, 3, 31, 32, 33, 64, 65, 200, 517}) {
                if (start + length > n) continue;
                auto zeroed = values;
                std::fill(zeroed.begin() + static_cast<std::ptrdiff_t>(start),
                          zeroed.begin() + static_cast<std::ptrdiff_t>(start + length), 0.0);
                EXPECT_NE(fingerprint_of(zeroed), original) << name(c) << ": zeroed " << start << " + " << length;
                if (start + length + 1 <= n) {
                    // The run moved one element on: element start repeats, start + length is lost.
                    auto shifted = values;
                    std::memmove(shifted.data() + start + 1, values.data() + start, length * 8);
                    EXPECT_NE(fingerprint_of(shifted), original) << name(c) << ": shifted " << start << " + " << length;
                }
                if (length >= 2) {
                    // The run rotated by one element: the same elements in another order.
                    auto rotated = values;
                    std::rotate(rotated.begin() + static_cast<std::ptrdiff_t>(start),
                                rotated.begin() + static_cast<std::ptrdiff_t>(start + 1),
                                rotated.begin() + static_cast<std::ptrdiff_t>(start + length));
                    EXPECT_NE(fingerprint_of(rotated), original) << name(c) << ": rotated " << start << " + " << length;
                }
                if (start >= 1) {
                    auto back = values;  // one element back: element start - 1 is lost
                    std::memmove(back.data() + start - 1, values.data() + start, length * 8);
                    EXPECT_NE(fingerprint_of(back), original) << name(c) << ": shifted back " << start << " + " << length;
                }
            }
        }
        // A constant written everywhere, for an odd and an even number of elements (an xor of
        // the words would give all constants one fingerprint in the even case).
        for (std::size_t count : {n, n - 1}) {
            const std::vector<double> part(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count));
            std::set<std::uint64_t> seen{fingerprint_of(part)};
            for (double fill : {0.0, -0.0, 1.0, -1.0, values[0], values[n - 1]}) {
                const std::vector<double> same(count, fill);
                EXPECT_TRUE(seen.insert(fingerprint_of(same)).second) << name(c) << ": " << count << " x " << fill;
            }
        }
    }
}

TEST(sim_send_fingerprint, tail_bytes_and_lengths_are_caught) {
    for (code c : supported_codes()) {
        using_code use(c);
        // Zeros of every length up to 600 bytes: all different.
        const std::vector<unsigned char> zeros(600, 0);
        std::set<std::uint64_t> seen;
        for (std::size_t n = 0; n <= zeros.size(); ++n)
            EXPECT_TRUE(seen.insert(sim::fingerprint(zeros.data(), n)).second) << name(c) << ", length " << n;
        // Every value of each tail byte (a length that is not whole words or blocks).
        for (std::size_t n : {5, 261, 1029}) {
            auto buf = random_bytes(n, 21);
            for (std::size_t at = n - n % 8; at < n; ++at) {
                std::set<std::uint64_t> values;
                for (int b = 0; b < 256; ++b) {
                    buf[at] = static_cast<unsigned char>(b);
                    values.insert(sim::fingerprint(buf.data(), n));
                }
                EXPECT_EQ(values.size(), 256u) << name(c) << ", length " << n << ", byte " << at;
            }
        }
    }
}

}  // namespace
