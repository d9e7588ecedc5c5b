#include "simulator/send_fingerprint.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace distdl::sim {

namespace {

// A running fingerprint; pieces fed to it must be whole blocks except the last. (An AVX-512
// variant over 1 KiB blocks was tried: it cost ~60 us per small Repartition on the simulator,
// the core's wide-vector frequency transitions, and gained nothing measurable on large ones.)

struct fingerprint_state {
    std::uint64_t lane[4] = {0x243f6a8885a308d3ULL, 0x13198a2e03707344ULL, 0xa4093822299f31d0ULL,
                             0x082efa98ec4e6c89ULL};
};

std::uint64_t load_word(const unsigned char* p) {
    std::uint64_t word;
    std::memcpy(&word, p, 8);
    return word;
}

constexpr std::uint64_t golden = 0x9e3779b97f4a7c15ULL;

// A bijective 64-bit mix (splitmix64's finalizer).
std::uint64_t mix(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// Each lane is mixed before the next joins: CRC is linear, so lanes merely XORed together
// would not see a word moved from one stream to another.
std::uint64_t finish(const fingerprint_state& s, std::size_t bytes) {
    std::uint64_t out = mix(s.lane[0] ^ bytes);
    for (int i = 1; i < 4; ++i) out = mix(out ^ s.lane[i]);
    return out;
}

#if defined(__x86_64__)
// Three CRC32C streams over consecutive 8-byte words; the tail goes into the fourth lane.
constexpr std::size_t crc_block = 24;

__attribute__((target("sse4.2"))) void feed_crc(fingerprint_state& s, const unsigned char* p, std::size_t bytes) {
    std::uint64_t a = s.lane[0], b = s.lane[1], c = s.lane[2];
    std::size_t i = 0;
    for (; i + crc_block <= bytes; i += crc_block) {
        a = _mm_crc32_u64(a, load_word(p + i));
        b = _mm_crc32_u64(b, load_word(p + i + 8));
        c = _mm_crc32_u64(c, load_word(p + i + 16));
    }
    std::uint64_t d = s.lane[3];
    for (; i + 8 <= bytes; i += 8) d = _mm_crc32_u64(d, load_word(p + i));
    for (; i < bytes; ++i) d = _mm_crc32_u8(static_cast<std::uint32_t>(d), p[i]);
    s.lane[0] = a;
    s.lane[1] = b;
    s.lane[2] = c;
    s.lane[3] = d;
}

bool has_crc32c() {
    static const bool supported = __builtin_cpu_supports("sse4.2");
    return supported;
}

#endif

// Four multiply-xorshift lanes over 32-byte blocks (each step a bijection of its word).
constexpr std::size_t mix_block = 32;

void feed_mix(fingerprint_state& s, const unsigned char* p, std::size_t bytes) {
    std::size_t i = 0;
    for (; i + mix_block <= bytes; i += mix_block) {
        for (std::size_t k = 0; k < 4; ++k) {
            s.lane[k] = (s.lane[k] ^ load_word(p + i + 8 * k)) * golden;
            s.lane[k] ^= s.lane[k] >> 29;
        }
    }
    for (; i + 8 <= bytes; i += 8) {
        s.lane[0] = (s.lane[0] ^ load_word(p + i)) * golden;
        s.lane[0] ^= s.lane[0] >> 29;
    }
    for (; i < bytes; ++i) s.lane[1] = (s.lane[1] ^ p[i]) * 0x100000001b3ULL;
}

void feed(fingerprint_state& s, const unsigned char* p, std::size_t bytes) {
#if defined(__x86_64__)
    if (has_crc32c()) return feed_crc(s, p, bytes);
#endif
    feed_mix(s, p, bytes);
}

// Copy-then-hash pieces: small enough to be hashed from L1, a whole number of blocks of
// every hash (24 and 32 bytes).
constexpr std::size_t piece_bytes = 96 * 160;  // 15 KiB

}  // namespace

std::uint64_t fingerprint(const void* buf, std::size_t bytes) {
    fingerprint_state s;
    feed(s, static_cast<const unsigned char*>(buf), bytes);
    return finish(s, bytes);
}

std::uint64_t copy_with_fingerprint(void* dst, const void* src, std::size_t bytes) {
    fingerprint_state s;
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    for (std::size_t at = 0; at < bytes; at += piece_bytes) {
        const std::size_t len = bytes - at < piece_bytes ? bytes - at : piece_bytes;
        std::memcpy(to + at, from + at, len);
        feed(s, from + at, len);
    }
    return finish(s, bytes);
}

std::uint64_t fingerprint(const void* buf, const strided_layout& layout) {
    fingerprint_state s;
    const auto* base = static_cast<const unsigned char*>(buf);
    const std::size_t bytes = layout.bytes();
    for (layout_cursor c(layout); c.left() != 0;) {
        const std::size_t run = c.left();
        feed(s, base + c.offset(), run);
        c.advance(run);
    }
    return finish(s, bytes);
}

std::uint64_t copy_with_fingerprint(void* dst, const strided_layout& dst_layout, const void* src,
                                    const strided_layout& src_layout) {
    if (dst_layout.contiguous() && src_layout.contiguous())
        return copy_with_fingerprint(static_cast<unsigned char*>(dst) + dst_layout.offset,
                                     static_cast<const unsigned char*>(src) + src_layout.offset, src_layout.run);
    fingerprint_state s;
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    const std::size_t bytes = src_layout.bytes();
    layout_cursor d(dst_layout);
    // Pieces of a source run start at multiples of piece_bytes from the run's start (whole
    // blocks of both hashes): feeding them one by one equals feeding the run.
    for (layout_cursor c(src_layout); c.left() != 0;) {
        const std::size_t piece = c.left() < piece_bytes ? c.left() : piece_bytes;
        const unsigned char* p = from + c.offset();
        for (std::size_t done = 0; done < piece;) {
            const std::size_t n = piece - done < d.left() ? piece - done : d.left();
            std::memcpy(to + d.offset(), p + done, n);
            d.advance(n);
            done += n;
        }
        feed(s, p, piece);
        c.advance(piece);
    }
    return finish(s, bytes);
}

}  // namespace distdl::sim
