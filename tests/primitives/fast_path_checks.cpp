// The fixed-shape fast path and the per-call guarantees of the primitives, on both transports:
//   - a repeated call with the same shapes sends no shape metadata ("<label>.shapes" traffic),
//     small and large tensors (fused status / status ahead of the bulk);
//   - forward(x, y) / adjoint(dy, dx) write into the caller's storage when it has the shape;
//   - a change of shape between calls is still right;
//   - a disagreement or a wrong shape on one worker is refused on every worker, and the module
//     works again on the next good call;
//   - a worker outside a primitive passing a non-empty tensor is refused.
#include <cmath>
#include <string>

#include "core/all_sum_reduce.hpp"
#include "core/broadcast.hpp"
#include "core/halo_exchange.hpp"
#include "core/repartition.hpp"
#include "core/sum_reduce.hpp"
#include "reference/halo_exchange.hpp"
#include "reference/repartition.hpp"
#include "tests/primitives/halo_test_util.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace {

using namespace distdl;
using namespace distdl::testing;

std::uint64_t messages(const std::shared_ptr<communicator>& world, const std::string& label) {
    const auto& by = world->traffic().by_label();
    const auto it = by.find(label);
    return it == by.end() ? std::uint64_t{0} : it->second.messages;
}

// Shape-metadata messages sent by all workers together (every rank gets the same number).
std::uint64_t all_metadata(const std::shared_ptr<communicator>& world, const std::string& label) {
    const std::uint64_t mine = messages(world, label + ".shapes");
    return world->all_reduce_sum<std::uint64_t>(mine);
}

template <class T>
tensor<T> filled(const shape_t& shape, T value) {
    return tensor<T>(shape, value);
}

// Broadcast from world rank 0 to every rank, then its adjoint, for a sequence of shapes; the
// second call of each shape must send no metadata and reuse y's storage.
template <class T>
void broadcast_sequence(const std::shared_ptr<communicator>& world, const std::vector<shape_t>& shapes) {
    const auto W = static_cast<std::size_t>(world->size());
    const auto P_0 = rank0_1d(world);
    const auto P_all = whole_world_1d(world);
    broadcast<T> B(P_0, P_all);
    tensor<T> y, dx;
    for (const shape_t& shape : shapes) {
        const tensor<T> x = world->rank() == 0 ? indexed_tensor<T>(shape, 1) : zero_volume<T>(shape[0], true);
        for (int call = 0; call < 2; ++call) {
            const std::uint64_t before = all_metadata(world, "broadcast");
            const T* storage = y.data();
            B.forward(x, y);
            if (!same_bits(y, indexed_tensor<T>(shape, 1))) DCHECK_FAIL_("broadcast of " << show(shape) << " call " << call);
            if (call == 1) {
                DCHECK_EQ(all_metadata(world, "broadcast"), before);
                DCHECK(y.data() == storage);
            } else if (W > 1) {
                DCHECK(all_metadata(world, "broadcast") > before);
            }
            // Adjoint: every rank sends its y back; rank 0 receives W copies summed (exact).
            const T* dx_storage = dx.data();
            B.adjoint(y, dx);
            if (world->rank() == 0) {
                tensor<T> want = indexed_tensor<T>(shape, 1);
                for (std::size_t i = 0; i < want.size(); ++i) want.data()[i] *= static_cast<T>(W);
                if (!same_bits(dx, want)) DCHECK_FAIL_("broadcast adjoint of " << show(shape) << " call " << call);
                if (call == 1) DCHECK(dx.data() == dx_storage);
            } else {
                DCHECK_EQ(shape_of(dx), (shape_t{shape[0], 0}));
            }
        }
    }
}

// SumReduce of every rank into world rank 0 and AllSumReduce over every rank.
template <class T>
void reduction_sequence(const std::shared_ptr<communicator>& world, const std::vector<shape_t>& shapes) {
    const auto W = static_cast<std::size_t>(world->size());
    const auto P_0 = rank0_1d(world);
    const auto P_all = whole_world_1d(world);
    sum_reduce<T> R(P_all, P_0);
    all_sum_reduce<T> A(P_all, {0});
    tensor<T> y, z;
    for (const shape_t& shape : shapes) {
        const tensor<T> x = filled<T>(shape, static_cast<T>(world->rank() + 1));
        const tensor<T> want = filled<T>(shape, static_cast<T>(W * (W + 1) / 2));
        for (int call = 0; call < 2; ++call) {
            const std::uint64_t before = all_metadata(world, "sum_reduce") + all_metadata(world, "all_sum_reduce");
            const T* storage = y.data();
            const T* z_storage = z.data();
            R.forward(x, y);
            A.forward(x, z);
            if (world->rank() == 0 && !same_bits(y, want)) DCHECK_FAIL_("sum_reduce of " << show(shape));
            if (world->rank() != 0) DCHECK_EQ(shape_of(y), (shape_t{shape[0], 0}));
            if (!same_bits(z, want)) DCHECK_FAIL_("all_sum_reduce of " << show(shape));
            const std::uint64_t after = all_metadata(world, "sum_reduce") + all_metadata(world, "all_sum_reduce");
            if (call == 1) {
                DCHECK_EQ(after, before);
                if (world->rank() == 0) DCHECK(y.data() == storage);
                DCHECK(z.data() == z_storage);
            } else if (W > 1) {
                DCHECK(after > before);
            }
        }
    }
}

}  // namespace

// Small (fused status) and large (> 64 KiB: status ahead of the bulk) tensors, shapes changing
// between calls, and back.
DISTDL_CHECK(fast_path_broadcast_repeats_without_metadata, world_size >= 1) {
    broadcast_sequence<double>(world, {{2, 3}, {4, 3}, {2, 5000}, {2, 3}, {3, 5000}});
    broadcast_sequence<float>(world, {{3, 2}, {3, 9000}});
}

DISTDL_CHECK(fast_path_reductions_repeat_without_metadata, world_size >= 1) {
    reduction_sequence<double>(world, {{2, 3}, {4, 3}, {2, 5000}, {2, 3}, {3, 5000}});
    reduction_sequence<float>(world, {{3, 2}, {3, 9000}});
}

// The first call (shapes agreed) and the later ones (status with the data) add the same terms
// in the same order: the same bits, small and large. On Open MPI the first call's reduce and
// the later calls' all-reduce folded them differently (221 of 1,000 sums off in the last bit).
DISTDL_CHECK(reductions_first_call_same_bits_as_later, world_size >= 3) {
    const int n = world->size();
    const auto P_x = make_partition(world, rank_range(0, n), {static_cast<std::size_t>(n)});
    for (const std::size_t count : {std::size_t(1000), std::size_t(20000)}) {
        tensor<double> x(shape_t{count});
        for (std::size_t i = 0; i < count; ++i)  // terms of mixed magnitudes, different on every worker
            x.data()[i] = std::ldexp(1.0 + 1e-3 * double((i * 7919 + std::size_t(world->rank()) * 104729) % 1000),
                                     int((i + std::size_t(world->rank()) * 13) % 40) - 20);
        sum_reduce<double> reduce(P_x, rank0_1d(world));
        all_sum_reduce<double> all(P_x, {0});
        const tensor<double> reduced = reduce.forward(x), summed = all.forward(x);
        for (int call = 0; call < 2; ++call) {
            DCHECK(same_bits(reduce.forward(x), reduced));
            DCHECK(same_bits(all.forward(x), summed));
        }
    }
}

// After the shapes are known, one contributor with another shape is refused on every worker
// (never a hang or a truncated message); the next good call works.
DISTDL_CHECK(fast_path_reduction_disagreement_refused_everywhere, world_size >= 2) {
    const auto W = static_cast<std::size_t>(world->size());
    const auto P_0 = rank0_1d(world);
    const auto P_all = whole_world_1d(world);
    sum_reduce<double> R(P_all, P_0);
    all_sum_reduce<double> A(P_all, {0});
    for (std::size_t n : {3u, 9000u}) {
        const tensor<double> good = filled<double>({2, n}, 1.0);
        tensor<double> y, z;
        R.forward(good, y);
        A.forward(good, z);
        const tensor<double> odd = world->rank() == 1 ? filled<double>({2, n + 1}, 1.0) : good;
        DCHECK_THROWS(R.forward(odd, y), invalid_argument, "tensors summed together must have one shape");
        DCHECK_THROWS(A.forward(odd, z), invalid_argument, "tensors summed together must have one shape");
        R.forward(good, y);
        A.forward(good, z);
        DCHECK(same_bits(z, filled<double>({2, n}, static_cast<double>(W))));
        if (world->rank() == 0) DCHECK(same_bits(y, filled<double>({2, n}, static_cast<double>(W))));
    }
}

// A wrong local shape on one worker of HaloExchange (forward or adjoint) is the same error,
// naming that worker, on every worker of P_x; the module works again afterwards.
DISTDL_CHECK(halo_wrong_shape_refused_everywhere, world_size >= 2) {
    const auto W = static_cast<std::size_t>(world->size());
    const auto P_x = whole_world_1d(world);
    const shape_t global{2 * W + 1};
    const kernel_geometry g{{3}, {1}, {1}, {1}};
    halo_exchange<double> H(P_x, global, g);
    tensor<double> whole(global);
    for (std::size_t i = 0; i < whole.size(); ++i) whole.data()[i] = static_cast<double>(i + 1);
    const auto pieces = ref::split(whole, P_x.shape());
    const auto windows = ref::halo_exchange(whole, P_x.shape(), g.kernel_size, g.stride, g.padding, g.dilation);
    const tensor<double> x = pieces[static_cast<std::size_t>(world->rank())];
    const int bad = world->size() - 1;
    const tensor<double> wrong = world->rank() == bad ? tensor<double>(shape_t{7, 1}) : x;
    tensor<double> y, dx;
    DCHECK_THROWS(H.forward(wrong, y), invalid_argument,
                  "HaloExchange: worker " + std::to_string(bad) + " (world rank " + std::to_string(bad) +
                      ") of P_x shape [" + std::to_string(W) +
                      "] (global shape [" + std::to_string(2 * W + 1) + "]) expects a tensor of shape");
    H.forward(x, y);
    DCHECK(same_bits(y, windows[static_cast<std::size_t>(world->rank())]));
    const tensor<double> wrong_dy = world->rank() == 0 ? tensor<double>(shape_t{1, 1}) : y;
    DCHECK_THROWS(H.adjoint(wrong_dy, dx), invalid_argument, "HaloExchange adjoint: worker 0 (world rank 0) of P_x");
    H.adjoint(y, dx);
    DCHECK_EQ(shape_of(dx), shape_of(x));
    // The output may be the input itself (module.hpp): the same result as into other storage.
    tensor<double> aliased = x;
    H.forward(aliased, aliased);
    DCHECK(same_bits(aliased, y));
    H.adjoint(aliased, aliased);
    DCHECK(same_bits(aliased, dx));
}

// Repartition: the plan is kept while shapes stay (no metadata on a repeated call), given up
// front with global_shape (no metadata at all), rebuilt on a change of batch, and a wrong dy
// on one worker is refused on every worker of the union.
DISTDL_CHECK(repartition_fast_path_and_refusals, world_size >= 2) {
    const auto W = static_cast<std::size_t>(world->size());
    std::vector<int> reversed = rank_range(0, world->size());
    std::reverse(reversed.begin(), reversed.end());
    const auto P_x = make_partition(world, rank_range(0, world->size()), {1, W});
    const auto P_y = make_partition(world, reversed, {W, 1});
    const auto me_x = static_cast<std::size_t>(P_x.rank());
    const auto me_y = static_cast<std::size_t>(P_y.rank());
    repartition<double> R(P_x, P_y);
    tensor<double> y, dx;
    for (std::size_t batch : {3u, 5u, 3u}) {
        const shape_t global{batch + W, 2 * W + 1};
        tensor<double> whole(global);
        for (std::size_t i = 0; i < whole.size(); ++i) whole.data()[i] = static_cast<double>(i);
        const tensor<double> x = ref::split(whole, P_x.shape())[me_x];
        const tensor<double> want = ref::repartition(whole, P_y.shape())[me_y];
        for (int call = 0; call < 2; ++call) {
            const std::uint64_t before = all_metadata(world, "repartition");
            const double* storage = y.data();
            R.forward(x, y);
            DCHECK(same_bits(y, want));
            R.adjoint(y, dx);
            DCHECK(same_bits(dx, x));
            if (call == 1) {
                DCHECK_EQ(all_metadata(world, "repartition"), before);
                DCHECK(y.data() == storage);
            }
        }
    }
    // Shapes given up front: not even the first call sends metadata.
    const shape_t global{4, 2 * W + 1};
    tensor<double> whole(global);
    for (std::size_t i = 0; i < whole.size(); ++i) whole.data()[i] = static_cast<double>(i);
    repartition<double> G(P_x, P_y, repartition_options{.global_shape = global});
    const std::uint64_t before = all_metadata(world, "repartition");
    G.forward(ref::split(whole, P_x.shape())[me_x], y);
    DCHECK(same_bits(y, ref::repartition(whole, P_y.shape())[me_y]));
    DCHECK_EQ(all_metadata(world, "repartition"), before);
    // Workers that disagree on the shapes given up front are refused at construction, all of them.
    const shape_t other{5, 2 * W + 1};
    DCHECK_THROWS(repartition<double>(P_x, P_y, repartition_options{.global_shape = world->rank() == 1 ? other : global}),
                  invalid_argument, "Repartition: workers disagree on global_shape");
    DCHECK_THROWS(repartition<double>(P_x, P_y, repartition_options{.global_shape = world->rank() == 0 ? shape_t{} : global}),
                  invalid_argument, "Repartition: workers disagree on global_shape");
    // A wrong dy on one worker of P_y: refused on all; a good call works afterwards.
    const tensor<double> wrong = P_y.rank() == 0 ? tensor<double>(shape_t{1, 2}) : y;
    DCHECK_THROWS(G.adjoint(wrong, dx), invalid_argument,
                  "Repartition adjoint: worker 0 (world rank " + std::to_string(P_y.members()[0]) + ") of P_y shape");
    G.adjoint(y, dx);
    DCHECK(same_bits(dx, ref::split(whole, P_x.shape())[me_x]));
}

// Workers outside a primitive must pass zero-volume tensors; a non-empty one is refused, not
// returned as that worker's output.
DISTDL_CHECK(inactive_workers_refuse_nonempty_tensors, world_size >= 2) {
    const auto P_0 = rank0_1d(world);
    broadcast<double> B(P_0, P_0);
    all_sum_reduce<double> A(P_0, {0});
    halo_exchange<double> H(P_0, {4}, kernel_geometry{{3}, {1}, {1}, {1}});
    repartition<double> R(P_0, P_0);
    const tensor<double> x = filled<double>({4}, 1.0);
    tensor<double> y;
    if (world->rank() == 0) {
        B.forward(x, y);
        DCHECK(same_bits(y, x) && y.data() != x.data());
        A.forward(x, y);
        DCHECK(same_bits(y, x));
        H.forward(x, y);
        R.forward(x, y);
        DCHECK(same_bits(y, x));
    } else {
        DCHECK_THROWS(B.forward(x, y), invalid_argument, "must pass a zero-volume tensor, got shape [4]");
        DCHECK_THROWS(A.forward(x, y), invalid_argument, "must pass a zero-volume tensor, got shape [4]");
        DCHECK_THROWS(H.forward(x, y), invalid_argument, "must pass a zero-volume tensor, got shape [4]");
        DCHECK_THROWS(R.forward(x, y), invalid_argument, "must pass a zero-volume tensor, got shape [4]");
    }
}

// A worker that receives in a Broadcast or SumReduce but provides nothing must pass a
// zero-volume tensor; a non-empty one is refused on every worker of its team (not only on
// itself), on the first call (shape header) and on the fast path, both directions; a good call
// works afterwards.
DISTDL_CHECK(receive_only_workers_bad_input_is_refused_on_all, world_size >= 2) {
    const int n = world->size();
    const int last = n - 1;
    const std::size_t receivers = static_cast<std::size_t>(n - 1);
    const auto P_0 = make_partition(world, {0}, {1});
    const auto P_rest = make_partition(world, movement::consecutive_ranks(1, n - 1), {receivers});
    const tensor<double> data = filled<double>({3, 2}, 1.5);
    const tensor<double> none = zero_volume<double>();
    const std::string expected = "world rank " + std::to_string(last) + " provides no data here and must pass a "
                                 "zero-volume tensor, got shape [3,2]";
    tensor<double> y, dx;
    // Broadcast 0 -> the others: every receiver only receives; the last one errs.
    broadcast<double> B(P_0, P_rest);
    const bool source = world->rank() == 0;
    for (int call = 0; call < 2; ++call) {  // call 0: first call (header); call 1: fast path
        const tensor<double>& bad = source || world->rank() == last ? data : none;
        DCHECK_THROWS(B.forward(bad, y), invalid_argument, expected);
        B.forward(source ? data : none, y);
        if (!source) DCHECK(same_bits(y, data));
    }
    // Its adjoint (a sum into worker 0): worker 0 only receives there and errs; the message
    // names it.
    const std::string expected_root = "world rank 0 provides no data here and must pass a zero-volume tensor, got "
                                      "shape [3,2]";
    for (int call = 0; call < 2; ++call) {
        DCHECK_THROWS(B.adjoint(data, dx), invalid_argument, expected_root);
        B.adjoint(source ? none : data, dx);
        if (source) DCHECK(same_bits(dx, filled<double>({3, 2}, 1.5 * static_cast<double>(n - 1))));
    }
    // SumReduce the others -> 0 (worker 0 only receives) and its adjoint (the others only receive).
    sum_reduce<double> S(P_rest, P_0);
    for (int call = 0; call < 2; ++call) {
        DCHECK_THROWS(S.forward(data, y), invalid_argument, expected_root);
        S.forward(source ? none : data, y);
        if (source) DCHECK(same_bits(y, filled<double>({3, 2}, 1.5 * static_cast<double>(n - 1))));
    }
    for (int call = 0; call < 2; ++call) {
        const tensor<double>& bad = source || world->rank() == last ? data : none;
        DCHECK_THROWS(S.adjoint(bad, dx), invalid_argument, expected);
        S.adjoint(source ? data : none, dx);
        if (!source) DCHECK(same_bits(dx, data));
    }
}

// The same refusal for a tensor too large for the status to travel with the data (over 64 KiB:
// the status goes ahead of the bulk, and the first call agrees on the shapes alone): a
// destination that provides nothing but passes data is refused on every worker of the sum.
DISTDL_CHECK(receive_only_workers_bad_large_input_is_refused_on_all, world_size >= 2) {
    const int n = world->size();
    const auto P_0 = make_partition(world, {0}, {1});
    const auto P_rest = make_partition(world, movement::consecutive_ranks(1, n - 1), {static_cast<std::size_t>(n - 1)});
    const tensor<double> data = filled<double>({20000}, 0.5);
    sum_reduce<double> S(P_rest, P_0);
    tensor<double> y;
    for (int call = 0; call < 2; ++call) {
        DCHECK_THROWS(S.forward(data, y), invalid_argument,
                      "world rank 0 provides no data here and must pass a zero-volume tensor, got shape [20000]");
        S.forward(world->rank() == 0 ? zero_volume<double>() : data, y);
        if (world->rank() == 0) DCHECK(same_bits(y, filled<double>({20000}, 0.5 * static_cast<double>(n - 1))));
    }
}

// Terms of a sum that hold the same elements in tensors of different ranks ([6] and [2,3]) are
// refused on every worker, on the first call and after a good one (the shapes' primitives-level
// check; the layers' tests also cover terms that differ only in their rank).
DISTDL_CHECK(sum_terms_of_different_ranks_are_refused_on_all, world_size >= 2) {
    const int n = world->size();
    const auto P_all = make_partition(world, movement::consecutive_ranks(0, n), {static_cast<std::size_t>(n)});
    const auto P_0 = make_partition(world, {0}, {1});
    sum_reduce<double> S(P_all, P_0);
    const tensor<double> flat = filled<double>({6}, 1.0), square = filled<double>({2, 3}, 1.0);
    tensor<double> y;
    DCHECK_THROWS(S.forward(world->rank() == n - 1 ? flat : square, y), invalid_argument, "[6]");
    S.forward(square, y);
    DCHECK_THROWS(S.forward(world->rank() == n - 1 ? flat : square, y), invalid_argument, "[6]");
}
