#pragma once
// The fingerprint of a send buffer: taken when the simulator copies the data at isend and
// again at the wait (a deferred large send: at isend, and again as its data moves in a later
// blocking call of the sender), so a buffer changed in between is caught (the simulator copied
// it at isend, MPI might not have). It must run faster than a copy: three interleaved CRC32C
// streams over 8-byte words (SSE 4.2; the crc32 instruction's latency hidden by the other two
// streams); elsewhere a four-lane multiply-xorshift hash (each step a bijection of its word). A change of one word (of one byte) is always caught; any other escapes
// with probability about 2^-32.
#include <cstddef>
#include <cstdint>

#include "core/array_box.hpp"

namespace distdl::sim {

std::uint64_t fingerprint(const void* buf, std::size_t bytes);

// Copies `bytes` from `src` to `dst` (non-overlapping) and returns fingerprint(src, bytes),
// hashing each cache-sized piece right after copying it (one pass over the source in memory).
std::uint64_t copy_with_fingerprint(void* dst, const void* src, std::size_t bytes);

// The same for a box (core/array_box.hpp) of the array `buf`: its runs are fed in order, so a
// one-run layout has the plain buffer's fingerprint.
std::uint64_t fingerprint(const void* buf, const strided_layout& layout);

// Copies the box `src_layout` of `src` into the box `dst_layout` of `dst` (same bytes,
// element i into element i in row-major box order) and returns fingerprint(src, src_layout),
// hashing each piece of a source run right after copying it.
std::uint64_t copy_with_fingerprint(void* dst, const strided_layout& dst_layout, const void* src,
                                    const strided_layout& src_layout);

}  // namespace distdl::sim
