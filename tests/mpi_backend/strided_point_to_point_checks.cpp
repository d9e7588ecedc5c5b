// The communicator contract for strided point-to-point (isend_box / irecv_box): a box of a
// row-major array travels as its elements in row-major box order, bit-exact, into a box or a
// plain buffer of the same volume, and from a plain buffer into a box; elements outside the
// receive box are untouched. Written once for every transport (simulator and MPI).
#include <cstdint>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

using shape = std::vector<std::size_t>;

std::size_t volume_of(const shape& s) {
    std::size_t v = 1;
    for (auto e : s) v *= e;
    return v;
}

// Row-major flat indices (in an array of shape `array`) of the box's elements, in box order.
std::vector<std::size_t> box_indices(const shape& array, const shape& start, const shape& extent) {
    std::vector<std::size_t> out;
    if (volume_of(extent) == 0) return out;
    shape at(extent.size(), 0);
    while (true) {
        std::size_t flat = 0;
        for (std::size_t d = 0; d < array.size(); ++d) flat = flat * array[d] + start[d] + at[d];
        out.push_back(flat);
        std::size_t d = extent.size();
        while (d-- > 0) {
            if (++at[d] < extent[d]) break;
            at[d] = 0;
        }
        if (d == static_cast<std::size_t>(-1)) return out;
    }
}

// A distinct value per (rank, flat index, case), exact in double.
double value(int rank, std::size_t flat, int which) { return 1e6 * rank + 1e4 * which + static_cast<double>(flat); }

struct box_case {
    shape array;
    shape start;
    shape extent;
};

// Cases of rank 1 to 4 (send box; the receive box has the same extent in a larger array, or
// another extent of the same volume), and zero volume.
struct pair_case {
    box_case send;
    box_case receive;
};

std::vector<pair_case> cases() {
    return {
        {{{20}, {3}, {9}}, {{25}, {10}, {9}}},
        {{{6, 7}, {1, 2}, {4, 3}}, {{8, 9}, {2, 1}, {4, 3}}},
        {{{6, 7}, {1, 2}, {4, 3}}, {{5, 5}, {1, 1}, {3, 4}}},  // another extent, same volume
        {{{5, 4, 6}, {1, 0, 2}, {3, 4, 3}}, {{4, 6, 5}, {1, 1, 1}, {3, 4, 3}}},
        {{{3, 4, 5, 6}, {1, 1, 0, 2}, {2, 2, 5, 3}}, {{4, 4, 6, 4}, {2, 0, 1, 1}, {2, 2, 5, 3}}},
        {{{300, 64}, {10, 8}, {200, 48}}, {{210, 50}, {5, 1}, {200, 48}}},  // 75 KiB: large
        {{{4, 5}, {1, 2}, {3, 0}}, {{3, 3}, {0, 0}, {0, 3}}},                 // zero volume
    };
}

enum class mode { box_to_box, box_to_plain, plain_to_box };

// Every rank sends each case to its right neighbour and receives from its left one.
void exchange(const std::shared_ptr<distdl::communicator>& world, mode how) {
    const int n = world->size(), r = world->rank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    const auto all = cases();
    std::vector<std::vector<double>> out(all.size()), in(all.size());
    std::vector<distdl::request> requests;
    // Receives posted first, in reverse order.
    for (std::size_t k = all.size(); k-- > 0;) {
        const auto& c = all[k].receive;
        const int tag = static_cast<int>(k);
        if (how == mode::box_to_plain) {
            in[k].assign(volume_of(c.extent), -1.0);
            requests.push_back(world->irecv(in[k].data(), in[k].size(), left, tag));
        } else {
            in[k].assign(volume_of(c.array), -1.0);
            requests.push_back(world->irecv_box(in[k].data(), distdl::array_box{c.array, c.start, c.extent}, left, tag));
        }
    }
    for (std::size_t k = 0; k < all.size(); ++k) {
        const auto& c = all[k].send;
        const int tag = static_cast<int>(k);
        if (how == mode::plain_to_box) {
            for (std::size_t flat : box_indices(c.array, c.start, c.extent)) out[k].push_back(value(r, flat, 1));
            requests.push_back(world->isend(out[k].data(), out[k].size(), right, tag));
        } else {
            out[k].resize(volume_of(c.array));
            for (std::size_t i = 0; i < out[k].size(); ++i) out[k][i] = value(r, i, 1);
            requests.push_back(world->isend_box(out[k].data(), distdl::array_box{c.array, c.start, c.extent}, right, tag));
        }
    }
    world->wait_all(requests);
    DCHECK(requests.empty());
    for (std::size_t k = 0; k < all.size(); ++k) {
        const auto& s = all[k].send;
        const auto& c = all[k].receive;
        const auto sent = box_indices(s.array, s.start, s.extent);
        if (how == mode::box_to_plain) {
            DCHECK_EQ(in[k].size(), sent.size());
            for (std::size_t i = 0; i < sent.size(); ++i) DCHECK_EQ(in[k][i], value(left, sent[i], 1));
            continue;
        }
        // Element i of the receive box holds element i of the send box; the rest is untouched.
        const auto got = box_indices(c.array, c.start, c.extent);
        DCHECK_EQ(got.size(), sent.size());
        std::vector<char> inside(in[k].size(), 0);
        for (std::size_t i = 0; i < got.size(); ++i) {
            DCHECK_EQ(in[k][got[i]], value(left, sent[i], 1));
            inside[got[i]] = 1;
        }
        for (std::size_t i = 0; i < in[k].size(); ++i)
            if (!inside[i]) DCHECK_EQ(in[k][i], -1.0);
    }
}

}  // namespace

DISTDL_CHECK(strided_box_to_box, world_size >= 1 && world_size <= 4) { exchange(world, mode::box_to_box); }
DISTDL_CHECK(strided_box_to_plain, world_size >= 1 && world_size <= 4) { exchange(world, mode::box_to_plain); }
DISTDL_CHECK(strided_plain_to_box, world_size >= 1 && world_size <= 4) { exchange(world, mode::plain_to_box); }

// A box outside its array is refused before anything is sent, naming the box and the array.
DISTDL_CHECK(strided_box_outside_its_array_is_refused, world_size >= 1 && world_size <= 2) {
    std::vector<float> data(12);
    DCHECK_THROWS(world->isend_box(data.data(), distdl::array_box{{3, 4}, {1, 2}, {2, 3}}, 0, 1),
                  distdl::invalid_argument, "send box at [1,2] of extent [2,3] does not lie inside an array of shape [3,4]");
    DCHECK_THROWS(world->irecv_box(data.data(), distdl::array_box{{3, 4}, {0, 0}, {2, 2, 1}}, 0, 1),
                  distdl::invalid_argument, "receive box");
}
