// The in-place sums (SumReduce::forward_in_place, Broadcast::adjoint_in_place) and the zero term
// of a reduction root that does not contribute, on both transports: the sums bit-exact against
// the terms added here (integers, exact in any order), the in-place worker's storage kept,
// repeated calls (the fast path, small and large tensors), a change of shape, and a refusal on a
// worker that is not its own destination.
#include "core/broadcast.hpp"
#include "core/sum_reduce.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace {

using namespace distdl;
using namespace distdl::testing;

// The sum of the terms indexed_tensor(shape, tag_of(r)) over the contributing ranks r.
template <class T, class Tag>
tensor<T> expected_sum(const shape_t& shape, int first, int last, Tag tag_of) {
    tensor<T> sum(shape, T(0));
    for (int r = first; r < last; ++r) {
        const tensor<T> term = indexed_tensor<T>(shape, tag_of(r));
        for (std::size_t i = 0; i < sum.size(); ++i) sum.data()[i] += term.data()[i];
    }
    return sum;
}

// Shapes below and above the fused-status limit (64 KiB), then a change back.
const std::vector<shape_t> shapes{{2, 3}, {3, 7000}, {4, 5}};

}  // namespace

// Every worker to world rank 0, which contributes: rank 0 sums in place, the others send.
DISTDL_CHECK(sum_reduce_forward_in_place, world_size >= 1) {
    const int W = world->size();
    sum_reduce<float> R(whole_world_1d(world), rank0_1d(world));
    DCHECK_EQ(R.sums_in_place(), world->rank() == 0);
    tensor<float> y;
    for (const shape_t& shape : shapes) {
        const auto mine = indexed_tensor<float>(shape, static_cast<std::size_t>(world->rank()) + 1);
        for (int call = 0; call < 2; ++call) {
            if (world->rank() == 0) {
                y = mine;
                const float* storage = y.data();
                R.forward_in_place(y);
                DCHECK(same_bits(y, expected_sum<float>(shape, 0, W, [](int r) { return std::size_t(r) + 1; })));
                DCHECK(y.data() == storage);
            } else {
                R.forward(mine, y);
                DCHECK_EQ(y.size(), std::size_t{0});
            }
        }
    }
}

// Not the destination of its own term: refused locally, before any communication.
DISTDL_CHECK(sum_reduce_forward_in_place_refused_elsewhere, world_size >= 2) {
    sum_reduce<double> R(whole_world_1d(world), rank0_1d(world));
    if (world->rank() == 0) return;
    tensor<double> y = indexed_tensor<double>({2, 2}, 1);
    DCHECK_THROWS(R.forward_in_place(y), invalid_argument, "does not receive a sum of its own term");
}

// World rank 0 receives the sum of the other ranks without contributing (its term: zeros).
DISTDL_CHECK(sum_reduce_root_outside_the_sum, world_size >= 2) {
    const int W = world->size();
    const auto P_x = make_partition(world, rank_range(1, W), {static_cast<std::size_t>(W - 1)});
    sum_reduce<double> R(P_x, rank0_1d(world));
    DCHECK(!R.sums_in_place());
    tensor<double> y;
    for (const shape_t& shape : shapes) {
        const tensor<double> x = world->rank() == 0 ? zero_volume<double>(shape[0], true)
                                                    : indexed_tensor<double>(shape, std::size_t(world->rank()));
        for (int call = 0; call < 2; ++call) {
            R.forward(x, y);
            if (world->rank() == 0)
                DCHECK(same_bits(y, expected_sum<double>(shape, 1, W, [](int r) { return std::size_t(r); })));
        }
    }
}

// Broadcast from world rank 0 to every rank: its adjoint sums every rank's dy into rank 0, in
// place there.
DISTDL_CHECK(broadcast_adjoint_in_place, world_size >= 1) {
    const int W = world->size();
    broadcast<double> B(rank0_1d(world), whole_world_1d(world));
    DCHECK_EQ(B.sums_in_place(), world->rank() == 0);
    tensor<double> dx;
    for (const shape_t& shape : shapes) {
        const auto dy = indexed_tensor<double>(shape, static_cast<std::size_t>(world->rank()) + 2);
        for (int call = 0; call < 2; ++call) {
            if (world->rank() == 0) {
                dx = dy;
                const double* storage = dx.data();
                B.adjoint_in_place(dx);
                DCHECK(same_bits(dx, expected_sum<double>(shape, 0, W, [](int r) { return std::size_t(r) + 2; })));
                DCHECK(dx.data() == storage);
            } else {
                B.adjoint(dy, dx);
                DCHECK_EQ(dx.size(), std::size_t{0});
            }
        }
    }
}
