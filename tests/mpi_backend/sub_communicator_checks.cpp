// The communicator contract, sub-communicators: create_sub keeps the given order, is
// collective over its members only, can overlap and nest, and isolates its traffic from the
// parent's. Written once for every transport.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "tests/common/checks.hpp"

namespace {

std::vector<int> range_of(int begin, int end) {
    std::vector<int> v(static_cast<std::size_t>(std::max(0, end - begin)));
    std::iota(v.begin(), v.end(), begin);
    return v;
}

int index_in(const std::vector<int>& ranks, int r) {
    const auto it = std::find(ranks.begin(), ranks.end(), r);
    return it == ranks.end() ? -1 : static_cast<int>(it - ranks.begin());
}

// Collectives and a ring over `sub`, whose rank i is world rank members[i].
void exercise(const std::shared_ptr<distdl::communicator>& sub, const std::vector<int>& members, int world_rank) {
    const int n = sub->size(), r = sub->rank();
    DCHECK_EQ(n, static_cast<int>(members.size()));
    DCHECK_EQ(r, index_in(members, world_rank));

    // Every member learns the world rank behind every sub rank.
    const auto world_ranks = sub->all_gather(static_cast<std::int32_t>(world_rank));
    for (int i = 0; i < n; ++i) DCHECK_EQ(world_ranks[static_cast<std::size_t>(i)], members[static_cast<std::size_t>(i)]);

    // Sum of world ranks; broadcast from the last sub rank.
    std::int64_t total = 0;
    for (int m : members) total += m;
    DCHECK_EQ(sub->all_reduce_sum(static_cast<std::int64_t>(world_rank)), total);
    double from_last = r == n - 1 ? 0.5 * world_rank : -1.0;
    sub->broadcast(&from_last, 1, n - 1);
    DCHECK_EQ(from_last, 0.5 * members.back());

    // A ring in sub numbering.
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    std::int32_t out = world_rank, in = -1;
    std::vector<distdl::request> requests;
    requests.push_back(sub->irecv(&in, 1, left, 2));
    requests.push_back(sub->isend(&out, 1, right, 2));
    sub->wait_all(requests);
    DCHECK_EQ(in, members[static_cast<std::size_t>(left)]);
    sub->barrier();
}

}  // namespace

// The last rank lists the world reversed, the others in order: refused on every member, naming
// the lists (Open MPI's MPI_Comm_create_group would wait forever). The world works on after.
DISTDL_CHECK(create_sub_lists_in_another_order_refused, world_size >= 2) {
    const int n = world->size(), r = world->rank();
    const auto members = range_of(0, n);
    auto reversed = members;
    std::reverse(reversed.begin(), reversed.end());
    DCHECK_THROWS(world->create_sub(r == n - 1 ? reversed : members), distdl::communication_error,
                  "members of a sub-communicator passed different rank lists");
    DCHECK_THROWS(world->create_sub(r == n - 1 ? reversed : members), distdl::communication_error,
                  "rank " + std::to_string(n - 1) + " called create_sub(" + distdl::format_list(reversed) + ")");
    exercise(world->create_sub(members), members, r);
}

// The whole world, reversed.
DISTDL_CHECK(create_sub_reversed_world, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    auto members = range_of(0, n);
    std::reverse(members.begin(), members.end());
    auto sub = world->create_sub(members);
    DCHECK_EQ(sub->rank(), n - 1 - r);
    exercise(sub, members, r);
}

// Only the members call create_sub: here the odd world ranks, in a rotated order. The even
// ranks carry on with world traffic of their own meanwhile.
DISTDL_CHECK(create_sub_of_some_ranks, world_size >= 2) {
    const int n = world->size(), r = world->rank();
    std::vector<int> odd;
    for (int i = 1; i < n; i += 2) odd.push_back(i);
    std::rotate(odd.begin(), odd.begin() + static_cast<std::ptrdiff_t>(odd.size() / 2), odd.end());
    if (r % 2 == 1) {
        auto sub = world->create_sub(odd);
        exercise(sub, odd, r);
    } else {
        std::vector<int> even;
        for (int i = 0; i < n; i += 2) even.push_back(i);
        auto sub = world->create_sub(even);
        exercise(sub, even, r);
    }
    world->barrier();
}

// Two overlapping sub-communicators, created in the same order by every member (the first
// two thirds, then the last two thirds in reverse), used one after the other; then a
// sub-communicator of a sub-communicator.
DISTDL_CHECK(create_sub_overlapping, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    const auto a = range_of(0, (2 * n + 2) / 3);
    auto b = range_of(n / 3, n);
    std::reverse(b.begin(), b.end());
    const bool in_a = index_in(a, r) >= 0, in_b = index_in(b, r) >= 0;
    DCHECK(in_a || in_b);
    std::shared_ptr<distdl::communicator> sub_a, sub_b;
    if (in_a) sub_a = world->create_sub(a);
    if (in_b) sub_b = world->create_sub(b);
    if (sub_a) exercise(sub_a, a, r);
    if (sub_b) exercise(sub_b, b, r);

    // Inside A: every other rank of A, counted from its end (A's numbering).
    if (sub_a) {
        std::vector<int> nested_in_a;
        for (int i = static_cast<int>(a.size()) - 1; i >= 0; i -= 2) nested_in_a.push_back(i);
        if (index_in(nested_in_a, sub_a->rank()) >= 0) {
            auto nested = sub_a->create_sub(nested_in_a);
            std::vector<int> nested_world;
            for (int i : nested_in_a) nested_world.push_back(a[static_cast<std::size_t>(i)]);
            exercise(nested, nested_world, r);
        }
    }
    world->barrier();
}

// Messages on a sub-communicator never match receives on its parent, even with the same
// peer and tag: each rank sends one value on the world and another on a same-shape sub.
DISTDL_CHECK(create_sub_isolates_messages, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    auto sub = world->create_sub(range_of(0, n));
    DCHECK_EQ(sub->rank(), r);
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    std::int64_t on_world = 10 * r + 1, on_sub = 10 * r + 2, got_world = -1, got_sub = -1;
    std::vector<distdl::request> requests;
    // Receive on the sub first, send on the world first: only the communicator tells them apart.
    requests.push_back(sub->irecv(&got_sub, 1, left, 5));
    requests.push_back(world->irecv(&got_world, 1, left, 5));
    requests.push_back(world->isend(&on_world, 1, right, 5));
    requests.push_back(sub->isend(&on_sub, 1, right, 5));
    world->wait_all(requests);  // requests of several communicators in one wait
    DCHECK_EQ(got_world, std::int64_t{10} * left + 1);
    DCHECK_EQ(got_sub, std::int64_t{10} * left + 2);
}

// Many short-lived sub-communicators in a row (they are freed as they go).
DISTDL_CHECK(create_sub_repeatedly, world_size >= 1) {
    const int n = world->size(), r = world->rank();
    for (int k = 1; k <= n; ++k) {
        // The first k ranks, rotated by k.
        auto members = range_of(0, k);
        std::rotate(members.begin(), members.begin() + (k % static_cast<int>(members.size())), members.end());
        if (r < k) {
            auto sub = world->create_sub(members);
            DCHECK_EQ(sub->rank(), index_in(members, r));
            DCHECK_EQ(sub->all_reduce_sum(std::int32_t{1}), k);
        }
    }
    // A rank on its own.
    auto self = world->create_sub({r});
    DCHECK_EQ(self->size(), 1);
    DCHECK_EQ(self->rank(), 0);
    DCHECK_EQ(self->all_reduce_sum(2.5), 2.5);
    world->barrier();
}
