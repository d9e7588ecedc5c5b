#include "simulator/send_fingerprint.hpp"

#include <atomic>
#include <cstring>

#include "core/error.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace distdl::sim {

namespace {

using detail::fingerprint_code;

// The data is a stream of 8-byte words (a trailing partial word zero-padded); word k goes into
// lane k % 32. A block of 32 words (256 bytes) is one vector step of eight 4-lane accumulators:
// a step is 10-14 cycles of latency and 1.5-2 cycles of throughput, so eight keep it busy.
constexpr std::size_t lanes = 32;
constexpr std::size_t word_bytes = 8;
constexpr std::size_t block_bytes = lanes * word_bytes;

// Two lane steps, the first where the CPU has AVX-512 IFMA (on 256-bit vectors only), the other
// everywhere else. Each is xor, multiply, rotate, multiply: a bijection of the word for a fixed
// lane and of the lane for a fixed word, so a lane that differs once differs to the end. Every
// bit of the lane goes through a multiply in each step (the rotation moves the bits a multiply
// leaves linear, the top ones, to where the next multiplies them): with a single multiply some
// bit passes a step unchanged, and a flip of it and of its image in the lane's next word (256
// bytes later) would always cancel. Measured: no one-bit difference leaves a step as one fixed
// difference with probability above ~2^-11.

// x + lo52(lo52(x) * k) with k even: its low 52 bits are lo52(x) * (k + 1), an odd multiple, and
// given them its top 12 bits are the old ones plus a known carry, so it is a bijection. One
// instruction (vpmadd52luq) with IFMA.
constexpr std::uint64_t low52 = (std::uint64_t{1} << 52) - 1;
constexpr std::uint64_t madd52_a = 0xc2b2ae3d27d4eULL;
constexpr std::uint64_t madd52_b = 0x9e3779b97f4a6ULL;
constexpr int madd52_rotation = 22;  // the top 12 bits to 10..21, into the second multiply

inline std::uint64_t madd52(std::uint64_t x, std::uint64_t k) { return x + (((x & low52) * k) & low52); }

inline std::uint64_t madd52_step(std::uint64_t lane, std::uint64_t word) {
    std::uint64_t x = madd52(lane ^ word, madd52_a);
    x = (x << madd52_rotation) | (x >> (64 - madd52_rotation));
    return madd52(x, madd52_b);
}

// x + lo32(x) * k with k even (a 32 x 32 -> 64-bit multiply, _mm256_mul_epu32): its low half
// is lo32(x) * (k + 1), and given that its high half is the old one plus a known value. The
// halves swap in between, so each half is multiplied once.
constexpr std::uint64_t low32 = 0xffffffffULL;
constexpr std::uint64_t mul32_a = 0x9e3779baULL;
constexpr std::uint64_t mul32_b = 0x85ebca6aULL;

inline std::uint64_t mul32_step(std::uint64_t lane, std::uint64_t word) {
    std::uint64_t x = lane ^ word;
    x += (x & low32) * mul32_a;
    x = (x << 32) | (x >> 32);
    return x + (x & low32) * mul32_b;
}

bool is_madd52(fingerprint_code code) {
    return code == fingerprint_code::madd52_vector || code == fingerprint_code::madd52_portable;
}

// A strong bijective 64-bit mix (splitmix64's finalizer) for the end.
constexpr std::uint64_t mix(std::uint64_t x) {
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

std::uint64_t load_word(const unsigned char* p) {
    std::uint64_t word;
    std::memcpy(&word, p, word_bytes);
    return word;
}

// The code for new fingerprints: the fastest the CPU runs, or what a test forced.
#if defined(__x86_64__)
bool cpu_has_madd52() {
    static const bool supported = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                                  __builtin_cpu_supports("avx512ifma");
    return supported;
}
bool cpu_has_avx2() {
    static const bool supported = __builtin_cpu_supports("avx2");
    return supported;
}
#else
bool cpu_has_madd52() { return false; }
bool cpu_has_avx2() { return false; }
#endif

fingerprint_code fastest_code() {
    static const fingerprint_code fastest = cpu_has_madd52() ? fingerprint_code::madd52_vector
                                            : cpu_has_avx2() ? fingerprint_code::mul32_vector
                                                             : fingerprint_code::mul32_portable;
    return fastest;
}

std::atomic<int> forced_code{-1};

fingerprint_code current_code() {
    const int forced = forced_code.load(std::memory_order_relaxed);
    return forced < 0 ? fastest_code() : static_cast<fingerprint_code>(forced);
}

struct initial_lanes {
    std::uint64_t value[lanes];
    constexpr initial_lanes() : value() {
        for (std::size_t k = 0; k < lanes; ++k) value[k] = mix(0x9e3779b97f4a7c15ULL * (k + 1));
    }
};
constexpr initial_lanes initial;

struct fingerprint_state {
    std::uint64_t lane[lanes];  // lane k holds initial.value[k] until a word went into it
    std::uint64_t words = 0;    // fed so far: the next one goes into lane words % lanes
    fingerprint_code code = current_code();  // one code for the whole fingerprint

    std::uint64_t get(std::size_t k) const { return k < words ? lane[k] : initial.value[k]; }
};

// The portable code: whole words one by one, then a trailing partial word zero-padded.
template <std::uint64_t (*step)(std::uint64_t, std::uint64_t)>
void feed_words_with(fingerprint_state& s, const unsigned char* p, std::size_t bytes) {
    std::size_t i = 0;
    for (; i + word_bytes <= bytes; i += word_bytes) {
        const std::size_t k = s.words % lanes;
        s.lane[k] = step(s.get(k), load_word(p + i));
        ++s.words;
    }
    if (i < bytes) {
        std::uint64_t word = 0;
        std::memcpy(&word, p + i, bytes - i);
        const std::size_t k = s.words % lanes;
        s.lane[k] = step(s.get(k), word);
        ++s.words;
    }
}

void feed_words(fingerprint_state& s, const unsigned char* p, std::size_t bytes) {
    if (is_madd52(s.code)) {
        feed_words_with<madd52_step>(s, p, bytes);
    } else {
        feed_words_with<mul32_step>(s, p, bytes);
    }
}

#if defined(__x86_64__)
// How a block loop stores what it copies: not at all (hashing only), plainly, or streaming past
// the caches (non-temporal stores, to a destination aligned to 32 or 16 bytes), for copies
// larger than the caches (streaming_min_bytes): then nothing is read for ownership and the
// copy leaves the caches to what is used next. Measured on the development machine, the box
// copies of a large Repartition alone (runs of 2-4 KiB, 4 or 16 threads on 2 cores, no hash):
// plain 2.4 / 15.6 ms, streaming 1.3 / 6.7 ms.
enum class store { none, plain, stream32, stream16 };

template <store how>
__attribute__((target("avx2"), always_inline)) inline void put(__m256i* out, __m256i word) {
    if constexpr (how == store::plain) {
        _mm256_storeu_si256(out, word);
    } else if constexpr (how == store::stream32) {
        _mm256_stream_si256(out, word);
    } else if constexpr (how == store::stream16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(word));
        _mm_stream_si128(reinterpret_cast<__m128i*>(out) + 1, _mm256_extracti128_si256(word, 1));
    }
}

// Eight named accumulators (an array of them is copied through the stack, with 512-bit moves).
#define DISTDL_FINGERPRINT_BLOCKS(step)                                                                            \
    __m256i acc0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 0);                                 \
    __m256i acc1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 1);                                 \
    __m256i acc2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 2);                                 \
    __m256i acc3 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 3);                                 \
    __m256i acc4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 4);                                 \
    __m256i acc5 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 5);                                 \
    __m256i acc6 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 6);                                 \
    __m256i acc7 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from) + 7);                                 \
    for (std::size_t i = 0; i < blocks * block_bytes; i += block_bytes) {                                          \
        const auto* in = reinterpret_cast<const __m256i*>(p + i);                                                  \
        [[maybe_unused]] auto* out = reinterpret_cast<__m256i*>(to + i);                                           \
        acc0 = step(acc0, in, out, 0);                                                                             \
        acc1 = step(acc1, in, out, 1);                                                                             \
        acc2 = step(acc2, in, out, 2);                                                                             \
        acc3 = step(acc3, in, out, 3);                                                                             \
        acc4 = step(acc4, in, out, 4);                                                                             \
        acc5 = step(acc5, in, out, 5);                                                                             \
        acc6 = step(acc6, in, out, 6);                                                                             \
        acc7 = step(acc7, in, out, 7);                                                                             \
    }                                                                                                              \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 0, acc0);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 1, acc1);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 2, acc2);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 3, acc3);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 4, acc4);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 5, acc5);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 6, acc6);                                               \
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lane) + 7, acc7)

// `blocks` whole blocks into the lanes (the stream at lane 0; `from`: the lanes before, which
// may be the initial ones, `lane`: after), also copied to `to` unless it is null: one pass,
// the copy's loads and stores run beside the hash's arithmetic.
template <store how>
__attribute__((target("avx2,avx512f,avx512vl,avx512ifma"))) void feed_blocks_madd52(const std::uint64_t* from,
                                                                                     std::uint64_t* lane,
                                                                                     const unsigned char* p,
                                                                                     std::size_t blocks,
                                                                                     unsigned char* to) {
    const __m256i a = _mm256_set1_epi64x(static_cast<long long>(madd52_a));
    const __m256i b = _mm256_set1_epi64x(static_cast<long long>(madd52_b));
    const auto step = [a, b](__m256i acc, const __m256i* in, __m256i* out, int k)
                          __attribute__((target("avx2,avx512f,avx512vl,avx512ifma"), always_inline)) {
        const __m256i word = _mm256_loadu_si256(in + k);
        put<how>(out + k, word);
        __m256i x = _mm256_xor_si256(acc, word);
        x = _mm256_madd52lo_epu64(x, x, a);
        x = _mm256_rol_epi64(x, madd52_rotation);
        return _mm256_madd52lo_epu64(x, x, b);
    };
    DISTDL_FINGERPRINT_BLOCKS(step);
}

template <store how>
__attribute__((target("avx2"))) void feed_blocks_mul32(const std::uint64_t* from, std::uint64_t* lane,
                                                       const unsigned char* p, std::size_t blocks, unsigned char* to) {
    const __m256i a = _mm256_set1_epi64x(static_cast<long long>(mul32_a));
    const __m256i b = _mm256_set1_epi64x(static_cast<long long>(mul32_b));
    const auto step = [a, b](__m256i acc, const __m256i* in, __m256i* out, int k)
                          __attribute__((target("avx2"), always_inline)) {
        const __m256i word = _mm256_loadu_si256(in + k);
        put<how>(out + k, word);
        __m256i x = _mm256_xor_si256(acc, word);
        x = _mm256_add_epi64(x, _mm256_mul_epu32(x, a));
        x = _mm256_shuffle_epi32(x, 0xB1);  // swaps the 32-bit halves of each lane
        return _mm256_add_epi64(x, _mm256_mul_epu32(x, b));
    };
    DISTDL_FINGERPRINT_BLOCKS(step);
}
#undef DISTDL_FINGERPRINT_BLOCKS

template <store how>
void feed_blocks_as(fingerprint_state& s, const unsigned char* p, std::size_t blocks, unsigned char* to) {
    const std::uint64_t* from = s.words == 0 ? initial.value : s.lane;
    if (s.code == fingerprint_code::madd52_vector) {
        feed_blocks_madd52<how>(from, s.lane, p, blocks, to);
    } else {
        feed_blocks_mul32<how>(from, s.lane, p, blocks, to);
    }
    s.words += blocks * lanes;
}

// Whole blocks, copied to `to` unless it is null (streaming where `stream` and `to` allow it).
void feed_blocks(fingerprint_state& s, const unsigned char* p, std::size_t blocks, unsigned char* to, bool stream) {
    const auto align = reinterpret_cast<std::uintptr_t>(to);
    if (to == nullptr) feed_blocks_as<store::none>(s, p, blocks, to);
    else if (stream && align % 32 == 0) feed_blocks_as<store::stream32>(s, p, blocks, to);
    else if (stream && align % 16 == 0) feed_blocks_as<store::stream16>(s, p, blocks, to);
    else feed_blocks_as<store::plain>(s, p, blocks, to);
}

// Orders streaming stores before whatever tells the receiver its data is there.
void end_streaming() { _mm_sfence(); }
#else
void end_streaming() {}
#endif

bool vector_code(fingerprint_code code) {
    return code == fingerprint_code::madd52_vector || code == fingerprint_code::mul32_vector;
}

// Portable copy and fingerprint: pieces small enough to be hashed from L1 right after the copy,
// whole words (so the words do not depend on the pieces).
constexpr std::size_t piece_bytes = 15 * 1024;
static_assert(piece_bytes % word_bytes == 0);

void copy_and_feed_words(fingerprint_state& s, unsigned char* to, const unsigned char* from, std::size_t bytes) {
    for (std::size_t at = 0; at < bytes; at += piece_bytes) {
        const std::size_t len = bytes - at < piece_bytes ? bytes - at : piece_bytes;
        std::memcpy(to + at, from + at, len);
        feed_words(s, from + at, len);
    }
}

// Feeds `bytes` (and copies them to `to` unless it is null). Every piece fed but the last of a
// run must be whole words: then feeding pieces gives the state of feeding their concatenation.
void feed(fingerprint_state& s, const unsigned char* p, std::size_t bytes, unsigned char* to = nullptr,
          bool stream = false) {
#if defined(__x86_64__)
    if (bytes >= block_bytes && vector_code(s.code)) {
        // Words up to the next block boundary of the stream, whole blocks, then the rest.
        const std::size_t at = s.words % lanes;
        const std::size_t head = at == 0 ? 0 : (lanes - at) * word_bytes;
        if (head + block_bytes <= bytes) {
            if (to != nullptr) std::memcpy(to, p, head);
            feed_words(s, p, head);
            const std::size_t blocks = (bytes - head) / block_bytes;
            feed_blocks(s, p + head, blocks, to == nullptr ? nullptr : to + head, stream);
            if (to != nullptr) to += head + blocks * block_bytes;
            p += head + blocks * block_bytes;
            bytes -= head + blocks * block_bytes;
        }
    }
#endif
    if (to != nullptr) {
        copy_and_feed_words(s, to, p, bytes);
    } else {
        feed_words(s, p, bytes);
    }
}

// The lanes fed, folded pairwise (x and y into mix(x) ^ y, a bijection of each; an odd one out
// moves up as it is), then with the length through mix: a change confined to one lane always
// changes the result, and changes of several lanes cancel only as often as a strong mix lets
// them. A tree, so that the mixes run side by side: this is most of a small message's cost.
std::uint64_t finish(const fingerprint_state& s, std::size_t bytes) {
    std::size_t n = s.words == 0 ? 1 : s.words < lanes ? static_cast<std::size_t>(s.words) : lanes;
    std::uint64_t level[lanes];
    for (std::size_t k = 0; k < n; ++k) level[k] = s.get(k);
    while (n > 1) {
        for (std::size_t k = 0; k < n / 2; ++k) level[k] = mix(level[2 * k]) ^ level[2 * k + 1];
        if (n % 2 == 1) level[n / 2] = level[n - 1];
        n = (n + 1) / 2;
    }
    return mix(level[0] ^ mix(bytes ^ 0x6a09e667f3bcc909ULL));
}

}  // namespace

namespace detail {

bool fingerprint_code_supported(fingerprint_code code) {
    switch (code) {
        case fingerprint_code::madd52_vector: return cpu_has_madd52();
        case fingerprint_code::mul32_vector: return cpu_has_avx2();
        case fingerprint_code::madd52_portable:
        case fingerprint_code::mul32_portable: return true;
    }
    return false;
}

fingerprint_code fingerprint_code_in_use() { return current_code(); }

void force_fingerprint_code(fingerprint_code code) {
    DISTDL_REQUIRE(fingerprint_code_supported(code), "sim: fingerprint code " << static_cast<int>(code)
                                                         << " was forced, but this CPU cannot run it");
    forced_code.store(static_cast<int>(code), std::memory_order_relaxed);
}

void unforce_fingerprint_code() { forced_code.store(-1, std::memory_order_relaxed); }

}  // namespace detail

std::uint64_t fingerprint(const void* buf, std::size_t bytes) {
    fingerprint_state s;
    feed(s, static_cast<const unsigned char*>(buf), bytes);
    return finish(s, bytes);
}

std::uint64_t copy_with_fingerprint(void* dst, const void* src, std::size_t bytes) {
    fingerprint_state s;
    const bool stream = bytes >= streaming_min_bytes;
    feed(s, static_cast<const unsigned char*>(src), bytes, static_cast<unsigned char*>(dst), stream);
    if (stream) end_streaming();
    return finish(s, bytes);
}

std::uint64_t fingerprint(const void* buf, const strided_layout& layout) {
    fingerprint_state s;
    const auto* base = static_cast<const unsigned char*>(buf);
    for (layout_cursor c(layout); c.left() != 0;) {
        const std::size_t run = c.left();
        feed(s, base + c.offset(), run);
        c.advance(run);
    }
    return finish(s, layout.bytes());
}

std::uint64_t copy_with_fingerprint(void* dst, const strided_layout& dst_layout, const void* src,
                                    const strided_layout& src_layout) {
    auto* to = static_cast<unsigned char*>(dst);
    const auto* from = static_cast<const unsigned char*>(src);
    if (dst_layout.contiguous() && src_layout.contiguous())
        return copy_with_fingerprint(to + dst_layout.offset, from + src_layout.offset, src_layout.run);
    fingerprint_state s;
    const bool stream = src_layout.bytes() >= streaming_min_bytes;
    layout_cursor d(dst_layout);
    // Each source run is fed in pieces that end at its end or on a word, so the words are those
    // fingerprint(src, src_layout) feeds. A piece within one destination run is copied as it is
    // hashed; one that spans destination runs is copied first, then hashed from cache.
    for (layout_cursor c(src_layout); c.left() != 0 && d.left() != 0;) {
        const unsigned char* p = from + c.offset();
        std::size_t piece = c.left() < d.left() ? c.left() : d.left();
        if (piece == c.left() || piece % word_bytes == 0) {
            feed(s, p, piece, to + d.offset(), stream);
            d.advance(piece);
        } else {
            piece = c.left() < piece_bytes ? c.left() : piece_bytes;
            for (std::size_t done = 0; done < piece;) {
                const std::size_t n = piece - done < d.left() ? piece - done : d.left();
                std::memcpy(to + d.offset(), p + done, n);
                d.advance(n);
                done += n;
            }
            feed(s, p, piece);
        }
        c.advance(piece);
    }
    if (stream) end_streaming();
    return finish(s, src_layout.bytes());
}

}  // namespace distdl::sim
