#pragma once
// The buffers of one rank's pending receives into one run (a plain buffer, or a box that is one
// run of its array), posted and not yet completed by wait_all nor dropped, so that a receive
// into bytes another pending receive still writes is refused: under MPI the two messages would
// land in the same bytes in either order, or mixed. Boxes of several runs are not listed: the
// boxes of one array (a halo window's strips) interleave in address order without sharing a
// byte, and telling that apart costs a walk of both boxes.
// The spans are kept sorted and disjoint (an overlapping one is never added), so a check is
// a binary search; storage is reused, so a steady loop allocates nothing.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace distdl::sim {

class receive_spans {
  public:
    // The owner of a listed span sharing a byte with [begin, begin + bytes), or null.
    const void* overlapping(const void* begin, std::size_t bytes) const;
    // Makes room for one more span, so that the next add() cannot throw (the caller then holds
    // state that an exception would leave half made).
    void make_room();
    // Lists [begin, begin + bytes) for `owner` (which overlapping() must have cleared; nothing
    // for an empty span).
    void add(const void* begin, std::size_t bytes, const void* owner);
    // Drops the span of `owner`, whose buffer starts at `begin` (nothing if none is listed).
    void remove(const void* begin, const void* owner);

  private:
    struct span {
        std::uintptr_t begin, end;
        const void* owner;
    };
    // The first span that ends after `at`.
    std::vector<span>::const_iterator first_ending_after(std::uintptr_t at) const;
    std::vector<span> spans_;
};

}  // namespace distdl::sim
