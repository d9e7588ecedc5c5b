// HaloExchange checks (spec 004 mixin, DESIGN §3), run on both transports, against the serial
// meaning ref::halo_exchange: forward bit-exact (input filled with its global flat index), the
// adjoint of that output equal to ref::halo_exchange_adjoint (integer sums, exact), and the
// adjoint dot-product test on random data. A full sweep in 1-D (partition sizes 1-5, extents
// including n < P, kernel 1-5, stride 1-4, padding 0-4, dilation 1-3) and deterministic
// samples of the same ranges in 2-D and 3-D; kernels that do not fit must be refused.
#include <map>
#include <string>

#include "core/detail/box_copy.hpp"
#include "core/detail/box_exchange.hpp"
#include "core/halo_exchange.hpp"
#include "reference/halo_exchange.hpp"
#include "reference/repartition.hpp"
#include "tests/common/checks.hpp"
#include "tests/primitives/halo_test_util.hpp"

namespace {

using namespace distdl;
using namespace distdl::testing::movement;

// Does the kernel fit in every dimension?
bool fits(const shape_t& global, const kernel_geometry& g) {
    for (std::size_t d = 0; d < global.size(); ++d)
        if (ref::kernel_output_length(global[d], g.kernel_size[d], g.stride[d], g.padding[d], g.dilation[d]) == 0)
            return false;
    return true;
}

std::string describe(const shape_t& parts, const shape_t& global, const kernel_geometry& g) {
    using distdl::testing::show;
    return "P_x " + show(parts) + " n " + show(global) + " k " + show(g.kernel_size) + " s " + show(g.stride) +
           " p " + show(g.padding) + " d " + show(g.dilation);
}

// One configuration on every rank of the world: returns after the checks pass everywhere.
template <class T>
void run_halo(const std::shared_ptr<communicator>& world, const cartesian_partition& P_x, const shape_t& global_shape,
              const kernel_geometry& g, std::uint64_t seed) {
    const std::string what = describe(P_x.shape(), global_shape, g);
    if (!fits(global_shape, g)) {
        DCHECK_THROWS(halo_exchange<T>(P_x, global_shape, g), invalid_argument, "kernel does not fit");
        return;
    }
    const tensor<T> global = index_tensor<T>(global_shape);
    const auto pieces = ref::split(global, P_x.shape());
    const auto windows =
        ref::halo_exchange(global, P_x.shape(), g.kernel_size, g.stride, g.padding, g.dilation);
    const auto owners = ref::halo_exchange_adjoint(windows, global_shape, P_x.shape(), g.kernel_size, g.stride,
                                                   g.padding, g.dilation);
    const tensor<T> none = zero_volume<T>();
    const std::size_t me = P_x.active() ? static_cast<std::size_t>(P_x.rank()) : 0;

    halo_exchange<T> H(P_x, global_shape, g);
    const tensor<T> x = P_x.active() ? pieces[me] : none;
    const tensor<T> y = H.forward(x);
    MOVEMENT_CHECK_BITS(y, P_x.active() ? windows[me] : none, what << " forward");
    const tensor<T> dx = H.adjoint(y);
    MOVEMENT_CHECK_BITS(dx, P_x.active() ? owners[me] : none, what << " adjoint");

    const std::uint64_t s = seed * 7919u + 31u * static_cast<std::uint64_t>(world->rank());
    const tensor<T> xr = P_x.active() ? random_tensor<T>(shape_of(x), s) : none;

    // The conv layers' calls: forward_kept into one window (the second call leaves its padding
    // as the first zeroed it; a window at another address is zeroed afresh), the adjoint whose
    // own part the caller placed in dx (dy's own part is not read): the same bits; and
    // forward_kept leaving the own part out.
    tensor<T> kept, other;
    H.forward_kept(xr, kept);
    H.forward_kept(x, kept);
    MOVEMENT_CHECK_BITS(kept, P_x.active() ? windows[me] : none, what << " forward_kept");
    if (P_x.active()) {
        other = tensor<T>(shape_of(windows[me]));
        other.fill(T(9));
    }
    H.forward_kept(x, other);
    MOVEMENT_CHECK_BITS(other, P_x.active() ? windows[me] : none, what << " forward_kept, another window");
    shape_t window_start, piece_start, extent;
    tensor<T> placed = P_x.active() ? tensor<T>(shape_of(x)) : none, y_holes = y;
    if (P_x.active()) placed.fill(T(-3));
    if (H.own_part(window_start, piece_start, extent)) {
        detail::copy_box(y.data(), shape_of(y), window_start, placed.data(), shape_of(x), piece_start, extent,
                         detail::box_op::assign);
        detail::fill_box(y_holes.data(), shape_of(y), window_start, extent, T(-7));
    }
    H.adjoint_own_part_placed(y_holes, placed);
    MOVEMENT_CHECK_BITS(placed, P_x.active() ? owners[me] : none, what << " adjoint_own_part_placed");
    // forward_kept leaving the own part out: the rest of the window has its bits, the own part
    // is not written.
    tensor<T> holed = P_x.active() ? tensor<T>(shape_of(y)) : none, expected_holed = y;
    if (P_x.active()) holed.fill(T(9));
    if (H.own_part(window_start, piece_start, extent))
        detail::fill_box(expected_holed.data(), shape_of(y), window_start, extent, T(9));
    H.forward_kept(x, holed, true);
    MOVEMENT_CHECK_BITS(holed, expected_holed, what << " forward_kept without the own part");

    const tensor<T> Fx = H.forward(xr);
    const tensor<T> yr = P_x.active() ? random_tensor<T>(shape_of(Fx), s + 1) : none;
    const tensor<T> Fty = H.adjoint(yr);
    check_adjoint(world, xr, Fx, yr, Fty, what);
}

// Partitions are collective to build: keep one per (ranks, shape) for a whole sweep.
class partition_cache {
  public:
    explicit partition_cache(std::shared_ptr<communicator> world) : world_(std::move(world)) {}
    const cartesian_partition& get(const std::vector<int>& ranks, const shape_t& shape) {
        auto key = std::make_pair(ranks, shape);
        auto it = cache_.find(key);
        if (it == cache_.end()) it = cache_.emplace(key, make_partition(world_, ranks, shape)).first;
        return it->second;
    }

  private:
    std::shared_ptr<communicator> world_;
    std::map<std::pair<std::vector<int>, shape_t>, cartesian_partition> cache_;
};

// Deterministic generator for the sampled sweeps (the same sequence on every rank).
class lcg {
  public:
    explicit lcg(std::uint64_t seed) : state_(seed) {}
    std::size_t next(std::size_t lo, std::size_t hi) {  // uniform-ish in [lo, hi]
        state_ = state_ * 6364136223846793005ull + 1442695040888963407ull;
        return lo + static_cast<std::size_t>((state_ >> 33) % (hi - lo + 1));
    }

  private:
    std::uint64_t state_;
};

void sampled_sweep(const std::shared_ptr<communicator>& world, std::size_t dim, int samples, std::size_t max_n,
                   std::uint64_t seed) {
    partition_cache cache(world);
    lcg gen(seed);
    const std::size_t max_workers = static_cast<std::size_t>(world->size());
    for (int i = 0; i < samples; ++i) {
        shape_t parts(dim), global(dim);
        kernel_geometry g{std::vector<std::size_t>(dim), std::vector<std::size_t>(dim),
                          std::vector<std::size_t>(dim), std::vector<std::size_t>(dim)};
        do {
            for (std::size_t d = 0; d < dim; ++d) parts[d] = gen.next(1, 5);
        } while (volume(parts) > max_workers);
        for (std::size_t d = 0; d < dim; ++d) {
            global[d] = gen.next(1, max_n);
            g.kernel_size[d] = gen.next(1, 5);
            g.stride[d] = gen.next(1, 4);
            g.padding[d] = gen.next(0, 4);
            g.dilation[d] = gen.next(1, 3);
        }
        // Alternate world order and a reversed order of the workers, with idle ones.
        std::vector<int> ranks = consecutive_ranks(0, static_cast<int>(volume(parts)));
        if (i % 2 == 1)
            for (auto& r : ranks) r = world->size() - 1 - r;
        const cartesian_partition& P_x = cache.get(ranks, parts);
        if (i % 5 == 4) run_halo<float>(world, P_x, global, g, static_cast<std::uint64_t>(i));
        else run_halo<double>(world, P_x, global, g, static_cast<std::uint64_t>(i));
    }
}

}  // namespace

// Full 1-D sweep; 5 workers hold every partition size (smaller ones leave idle workers).
DISTDL_CHECK(halo_sweep_1d, world_size == 5) {
    partition_cache cache(world);
    std::uint64_t seed = 0;
    for (std::size_t P = 1; P <= 5; ++P) {
        const cartesian_partition& P_x = cache.get(consecutive_ranks(0, static_cast<int>(P)), {P});
        for (std::size_t n : {1, 2, 3, 4, 6, 9})
            for (std::size_t k = 1; k <= 5; ++k)
                for (std::size_t s = 1; s <= 4; ++s)
                    for (std::size_t p = 0; p <= 4; ++p)
                        for (std::size_t d = 1; d <= 3; ++d) {
                            const kernel_geometry g{{k}, {s}, {p}, {d}};
                            if (++seed % 11 == 0) run_halo<float>(world, P_x, {n}, g, seed);
                            else run_halo<double>(world, P_x, {n}, g, seed);
                        }
    }
}

DISTDL_CHECK(halo_sweep_2d_sampled, world_size == 12) { sampled_sweep(world, 2, 400, 9, 2024); }

DISTDL_CHECK(halo_sweep_3d_sampled, world_size == 12) { sampled_sweep(world, 3, 250, 6, 4242); }

// Every world size: a 1-D partition over the whole world with pieces of 0-2 elements, and
// wide or dilated kernels whose halos reach past several neighbours.
DISTDL_CHECK(halo_wide_halos_whole_world, world_size >= 1) {
    const std::size_t W = static_cast<std::size_t>(world->size());
    const cartesian_partition P_x = make_partition(world, consecutive_ranks(0, world->size()), {W});
    std::uint64_t seed = 0;
    for (std::size_t n : {W > 1 ? W - 1 : 1, W + 3, 2 * W + 1})
        for (const kernel_geometry& g :
             {kernel_geometry{{5}, {1}, {2}, {3}}, kernel_geometry{{3}, {2}, {4}, {2}},
              kernel_geometry{{4}, {3}, {1}, {1}}, kernel_geometry{{1}, {1}, {0}, {1}},
              kernel_geometry{{2}, {4}, {0}, {3}}})
            run_halo<double>(world, P_x, {n}, g, ++seed);
}

// Batch and channel dimensions with the trivial kernel, features split: the conv layout.
DISTDL_CHECK(halo_conv_layout_3d, world_size >= 4) {
    const cartesian_partition P_x = make_partition(world, {3, 2, 1, 0}, {1, 1, 4});
    run_halo<double>(world, P_x, {2, 3, 10}, kernel_geometry{{1, 1, 3}, {1, 1, 1}, {0, 0, 1}, {1, 1, 1}}, 1);
    run_halo<float>(world, P_x, {2, 3, 10}, kernel_geometry{{1, 1, 5}, {1, 1, 2}, {0, 0, 2}, {1, 1, 2}}, 2);
    const cartesian_partition P_2d = make_partition(world, consecutive_ranks(0, 4), {1, 1, 2, 2});
    run_halo<double>(world, P_2d, {1, 2, 7, 6},
                     kernel_geometry{{1, 1, 3, 4}, {1, 1, 2, 1}, {0, 0, 1, 2}, {1, 1, 1, 2}}, 3);
}

// The trivial kernel (k 1, stride 1, no padding) needs exactly the owned piece: no messages.
DISTDL_CHECK(halo_trivial_kernel_moves_nothing, world_size >= 1) {
    const std::size_t W = static_cast<std::size_t>(world->size());
    const cartesian_partition P_x = make_partition(world, consecutive_ranks(0, world->size()), {W, 1});
    const shape_t global{2 * W + 1, 3};
    halo_exchange<double> H(P_x, global, kernel_geometry{{1, 1}, {1, 1}, {0, 0}, {1, 1}});
    const tensor<double> x = ref::split(index_tensor<double>(global), P_x.shape())[static_cast<std::size_t>(P_x.rank())];
    const auto messages = [&](const std::string& label) {
        const auto& by = world->traffic().by_label();
        const auto it = by.find(label);
        return it == by.end() ? std::uint64_t{0} : it->second.messages;
    };
    const auto data_before = messages("halo_exchange");
    const auto status_before = messages("halo_exchange.status");
    MOVEMENT_CHECK_BITS(H.forward(x), x, "trivial forward");
    MOVEMENT_CHECK_BITS(H.adjoint(x), x, "trivial adjoint");
    DCHECK_EQ(messages("halo_exchange"), data_before);
    // Only the per-call status word, each way: from every worker to every other one (no data
    // message carries it; where collectives are one step, the simulator, in the exchange's
    // meeting); on a large partition elsewhere to rank 0, which sends every other worker the
    // result (none on a single worker).
    const std::uint64_t status_per_direction =
        W == 1                                                                ? 0u
        : W <= static_cast<std::size_t>(detail::status_in_messages_limit) ||
                world->collectives_are_one_step()                             ? W - 1
        : P_x.rank() == 0                                                     ? W - 1
                                                                              : 1u;
    DCHECK_EQ(messages("halo_exchange.status") - status_before, 2 * status_per_direction);
}

DISTDL_CHECK(halo_rejects_bad_geometry, world_size >= 1) {
    const std::size_t W = static_cast<std::size_t>(world->size());
    const cartesian_partition P_x = make_partition(world, consecutive_ranks(0, world->size()), {1, W});
    const kernel_geometry ok{{1, 3}, {1, 1}, {0, 1}, {1, 1}};
    DCHECK_THROWS(halo_exchange<double>(P_x, {4, 5, 6}, ok), partition_error, "dimensions differ (2 vs 3)");
    DCHECK_THROWS(halo_exchange<double>(P_x, {4, 5}, (kernel_geometry{{3}, {1, 1}, {0, 1}, {1, 1}})),
                  invalid_argument, "kernel_size [3] has 1 entries, expected one per dimension (2)");
    DCHECK_THROWS(halo_exchange<float>(P_x, {4, 5}, (kernel_geometry{{1, 3}, {1, 0}, {0, 1}, {1, 1}})),
                  invalid_argument, "dimension 1: kernel size 3, stride 0 and dilation 1 must be at least 1");
    DCHECK_THROWS(halo_exchange<double>(P_x, {4, 5}, (kernel_geometry{{1, 4}, {1, 1}, {0, 0}, {1, 2}})),
                  invalid_argument,
                  "with global shape [4,5]: kernel does not fit in dimension 1: extent 5 + 2*padding 0 < dilation 2 "
                  "* (kernel size 4 - 1) + 1 = 7");
    DCHECK_EQ(kernel_output_length(10, 3, 2, 1, 2), std::size_t{4});
    DCHECK_EQ(kernel_output_length(3, 4, 1, 0, 1), std::size_t{0});
}
