#pragma once
// The fingerprint of a send buffer: taken when the simulator copies the data at isend and
// again at the wait (a deferred large send: at isend, and again as its data moves in a later
// blocking call of the sender), so a buffer changed in between is caught (the simulator copied
// it at isend, MPI might not have). Every byte is hashed each time.
//
// The hash: the bytes as 8-byte words (a trailing partial word zero-padded), word k into lane
// k % 32 of 32 64-bit lanes by a lane step: xor the word in, multiply, rotate, multiply. Each
// multiply, x + lo(x) * k with k even, is a bijection of the lane, so the step is a bijection of
// the word for a fixed lane and of the lane for a fixed word; the rotation puts the bits one
// multiply leaves linear (the top ones) under the other, so every bit is multiplied in every
// step. Two such steps exist: with AVX-512 IFMA, 52-bit multiply-adds (vpmadd52luq) on 256-bit
// vectors, about 20 bytes per cycle from L1; elsewhere 32 x 32-bit multiplies (AVX2
// _mm256_mul_epu32), about 16 bytes per cycle, or one word at a time without AVX2 (about 2.5).
// Each has portable code giving the same values, and a process uses one step for all its
// fingerprints. At the end the lanes fed are folded pairwise through a strong 64-bit mix.
//
// Cost: copy_with_fingerprint loads, stores and hashes in one loop, so it costs about what the
// copy costs; the other pass reads the buffer once more, for a large buffer at about the speed
// of memory, and that read is most of what the check costs: in the benchmarks' large
// Repartition on 16 workers (512 KiB messages, 2 cores), the copy takes ~50% of the CPU time
// and the second pass ~27%. (Earlier, on 4 ranks: ~6.2-6.5 ms against ~3.0 ms with no check,
// and three CRC32C streams instead of this hash ~6.9-7.4 ms.) A small message costs ~50-150
// cycles, mostly the final mixes. An AVX-512 variant on 512-bit vectors was tried before: it
// cost ~60 us per small Repartition on the simulator (the core's wide-vector frequency
// transitions); this one uses 256-bit vectors only.
//
// What it catches: a change of one word or one byte, always (the lane it enters differs from
// then on, and the end is a bijection of each lane). Several changed words escape only if their
// differences cancel: in different lanes, only as often as the final mix lets them; in one lane,
// only if the difference the lane carries equals the next changed word's difference exactly. A
// one-bit difference leaves a step as 11 bits or more (measured over 2^22 samples per bit), and
// the likeliest result of a one-, two- or three-bit difference (measured, sampled) has
// probability about 2^-10: a change crafted against these constants (two words 256 bytes
// apart) could escape about that often. We
// claim 2^-32 or less for changes not crafted so (about 2^-64 expected, not proven). Tested:
// every one-byte and one-word change; swaps of words at every distance, also of words that
// differ in the sign alone; two sign flips; two one-bit flips 256 bytes apart; zeroed, shifted
// and rotated runs; a constant everywhere; the tail bytes.
#include <cstddef>
#include <cstdint>

#include "core/array_box.hpp"

namespace distdl::sim {

// Copies of at least this many bytes (a message's) store past the caches where the CPU can
// (x86-64: non-temporal stores); the bytes and the fingerprint are the same either way. Tried
// for the large collectives' copies and sums too, and not kept there: the convolution layers
// read what a broadcast or a sum wrote right away, and were no faster or slower with it.
constexpr std::size_t streaming_min_bytes = 512 * 1024;

std::uint64_t fingerprint(const void* buf, std::size_t bytes);

// Copies `bytes` from `src` to `dst` (non-overlapping) and returns fingerprint(src, bytes),
// hashing each piece as it is copied (one pass over the source in memory).
std::uint64_t copy_with_fingerprint(void* dst, const void* src, std::size_t bytes);

// The same for a box (core/array_box.hpp) of the array `buf`: the runs are one stream of words
// (a run that is not whole words ends with a zero-padded word), so a one-run layout has the
// plain buffer's fingerprint, and so has any layout of whole-word runs holding the same bytes.
std::uint64_t fingerprint(const void* buf, const strided_layout& layout);

// Copies the box `src_layout` of `src` into the box `dst_layout` of `dst` (same bytes,
// element i into element i in row-major box order) and returns fingerprint(src, src_layout),
// whatever the destination's runs.
std::uint64_t copy_with_fingerprint(void* dst, const strided_layout& dst_layout, const void* src,
                                    const strided_layout& src_layout);

namespace detail {
// The codes that compute a fingerprint: two hashes (lane steps), each as vector code and as
// portable code giving the same values. A process uses the first its CPU runs of madd52_vector
// (AVX-512 IFMA on 256-bit vectors), mul32_vector (AVX2), mul32_portable.
enum class fingerprint_code { madd52_vector, madd52_portable, mul32_vector, mul32_portable };
bool fingerprint_code_supported(fingerprint_code code);
fingerprint_code fingerprint_code_in_use();
// For tests: fingerprints started from now on use `code` (invalid_argument if the CPU cannot
// run it), until unforced.
void force_fingerprint_code(fingerprint_code code);
void unforce_fingerprint_code();
}  // namespace detail

}  // namespace distdl::sim
