#pragma once
// One Broadcast or SumReduce configuration, checked end to end on every rank of the world:
//   - forward and adjoint outputs bit-exact against the serial meaning (reference/) on the
//     workers that receive, zero-volume shapes ({batch, 0} or {0}) elsewhere, never the
//     input's storage;
//   - twice, with different batch sizes, through the same layer (the shapes travel each call);
//   - the adjoint dot-product test with random, independent x and y.
// Input pieces have extents that depend on the team they belong to (a balanced split of 7
// over the teams: uneven, and empty for some teams when there are more than 7).
#include <memory>
#include <string>
#include <vector>

#include "core/broadcast.hpp"
#include "core/decomposition.hpp"
#include "core/sum_reduce.hpp"
#include "reference/broadcast.hpp"
#include "reference/sum_reduce.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace distdl::testing {

enum class pair_kind { broadcast, sum_reduce };

struct pair_case {
    std::vector<int> x_ranks;
    shape_t x_shape;
    std::vector<int> y_ranks;
    shape_t y_shape;
    broadcast_options options = {};
};

// The options of a case with these transpose flags (Broadcast and SumReduce take the same type).
inline broadcast_options transpose_flags(bool transpose_src, bool transpose_dest) {
    return {.transpose_src = transpose_src, .transpose_dest = transpose_dest};
}

template <class T>
void run_pair_case(const std::shared_ptr<communicator>& world, pair_kind kind, const pair_case& c,
                   std::uint64_t seed = 1) {
    const auto P_x = make_partition(world, c.x_ranks, c.x_shape);
    const auto P_y = make_partition(world, c.y_ranks, c.y_shape);
    const bool ts = c.options.transpose_src, td = c.options.transpose_dest, keep = c.options.preserve_batch;
    std::unique_ptr<module<T>> op;
    if (kind == pair_kind::broadcast) op = std::make_unique<broadcast<T>>(P_x, P_y, c.options);
    else op = std::make_unique<sum_reduce<T>>(P_x, P_y, c.options);

    // The team of each P_x worker: itself for a broadcast, its destination for a reduction.
    const std::size_t nx = volume(c.x_shape);
    std::vector<std::size_t> team(nx);
    for (std::size_t p = 0; p < nx; ++p) team[p] = p;
    if (kind == pair_kind::sum_reduce) team = ref::sum_reduce_destinations(c.x_shape, c.y_shape, ts, td);
    const std::size_t teams = kind == pair_kind::broadcast ? nx : volume(c.y_shape);
    auto piece_shape = [&](std::size_t p, std::size_t batch) {
        return shape_t{batch, balanced_size(7, teams, team[p]), 2};
    };

    for (std::size_t batch : {2u, 3u}) {
        std::vector<tensor<T>> x_all;
        for (std::size_t p = 0; p < nx; ++p) x_all.push_back(indexed_tensor<T>(piece_shape(p, batch), p + 1));
        const tensor<T> x = P_x.active() ? x_all[static_cast<std::size_t>(P_x.rank())] : zero_volume<T>(batch, keep);
        const tensor<T> y = op->forward(x);
        const auto y_all = kind == pair_kind::broadcast ? ref::broadcast(x_all, c.x_shape, c.y_shape, ts, td)
                                                        : ref::sum_reduce(x_all, c.x_shape, c.y_shape, ts, td);
        if (P_y.active()) {
            const auto& want = y_all[static_cast<std::size_t>(P_y.rank())];
            if (!same_bits(y, want))
                DCHECK_FAIL_("forward on P_y rank " << P_y.rank() << ": got shape " << show(shape_of(y))
                                                    << ", expected " << show(shape_of(want)) << " (or other values)");
            DCHECK(y.size() == 0 || y.data() != x.data());
        } else {
            DCHECK_EQ(shape_of(y), shape_of(zero_volume<T>(batch, keep)));
        }

        std::vector<tensor<T>> dy_all;
        for (std::size_t q = 0; q < y_all.size(); ++q) dy_all.push_back(indexed_tensor<T>(shape_of(y_all[q]), 100 + q));
        const tensor<T> dy = P_y.active() ? dy_all[static_cast<std::size_t>(P_y.rank())] : zero_volume<T>(batch, keep);
        const tensor<T> dx = op->adjoint(dy);
        const auto dx_all = kind == pair_kind::broadcast
                                ? ref::broadcast_adjoint(dy_all, c.x_shape, c.y_shape, ts, td)
                                : ref::sum_reduce_adjoint(dy_all, c.x_shape, c.y_shape, ts, td);
        if (P_x.active()) {
            const auto& want = dx_all[static_cast<std::size_t>(P_x.rank())];
            if (!same_bits(dx, want))
                DCHECK_FAIL_("adjoint on P_x rank " << P_x.rank() << ": got shape " << show(shape_of(dx))
                                                    << ", expected " << show(shape_of(want)) << " (or other values)");
            DCHECK(dx.size() == 0 || dx.data() != dy.data());
        } else {
            DCHECK_EQ(shape_of(dx), shape_of(zero_volume<T>(batch, keep)));
        }
    }

    const tensor<T> x = P_x.active() ? random_tensor<T>(piece_shape(static_cast<std::size_t>(P_x.rank()), 2),
                                                        seed * 7919 + static_cast<std::uint64_t>(world->rank()))
                                     : zero_volume<T>(2, keep);
    check_adjoint(world, *op, x, seed);
}

// Both element types, both layers' conventions for the zero-volume outputs.
inline void run_pair_case_all(const std::shared_ptr<communicator>& world, pair_kind kind, pair_case c) {
    for (bool keep : {true, false}) {
        c.options.preserve_batch = keep;
        run_pair_case<double>(world, kind, c, keep ? 3 : 4);
        run_pair_case<float>(world, kind, c, keep ? 5 : 6);
    }
}

// The mirror image of a configuration: P_x and P_y swapped, and with them the transposes.
inline pair_case mirrored(const pair_case& c) {
    pair_case m{c.y_ranks, c.y_shape, c.x_ranks, c.x_shape, c.options};
    std::swap(m.options.transpose_src, m.options.transpose_dest);
    return m;
}

}  // namespace distdl::testing
