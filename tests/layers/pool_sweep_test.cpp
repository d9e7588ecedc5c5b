// The randomized sweep of the pooling layers (layers/pool_max.hpp, layers/pool_avg.hpp) on
// the simulator, every world size 1..18, fixed seeds: partition shapes and worker placements
// (idle and reordered workers, batch or channels split now and then), kernel sizes 1-4,
// strides 1-3, padding up to the dilated kernel extent (windows of padding only), dilation
// 1-3 (max), spatial extents 1-9 (empty pieces, halos wider than a neighbour's piece, fewer
// outputs than workers); each configuration runs forward and adjoint twice into the same
// output tensors against reference/pool.hpp on the whole tensor. Half of the inputs are small
// integers, so ties are common and the first-maximum rule is tested across halos.
// (The transports' own checks are pool_checks.cpp; the sweep stays on the simulator because
// an oversubscribed MPI job spends seconds per configuration in communicator creation.)
#include <gtest/gtest.h>

#include <cmath>

#include "layers/pool_avg.hpp"
#include "layers/pool_max.hpp"
#include "reference/pool.hpp"
#include "simulator/run.hpp"
#include "tests/layers/pool_test_util.hpp"

namespace {

using distdl::distributed_avg_pool;
using distdl::distributed_max_pool;
using distdl::pool_options;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::expect_pieces;
using distdl::testing::make_partition;
using distdl::testing::mine;
using distdl::testing::rank_range;

// ---------------------------------------------------------------- randomized sweep

// Deterministic draws (the same on every rank, platform and transport).
struct draws {
    std::uint64_t state;
    std::size_t below(std::size_t n) {
        state = distdl::verify::mix_seed(state);
        return std::size_t(state % n);
    }
    std::size_t between(std::size_t lo, std::size_t hi) { return lo + below(hi - lo + 1); }
};

struct sweep_case {
    bool max = true;
    std::size_t dims = 1;
    shape_t P_x, x;
    std::vector<int> workers;
    std::vector<std::size_t> k, s, p, d;
    bool integers = false;  // small integers: many ties
    std::string describe() const {
        using distdl::format_list;
        return std::string(max ? "MaxPool" : "AvgPool") + std::to_string(dims) + "d P_x " + format_list(P_x) + " on " +
               format_list(workers) + " x " + format_list(x) + " k " + format_list(k) + " s " + format_list(s) +
               " p " + format_list(p) + " d " + format_list(d) + (integers ? " (integers)" : "");
    }
};

// A configuration that fits a world of `world_size`: spatial extents 1..9 split over up to
// the whole world (so pieces are often empty or shorter than the halo), batch or channels
// split now and then, padding up to the dilated kernel extent (windows of padding only).
sweep_case draw_case(draws& r, int world_size) {
    sweep_case c;
    c.max = r.below(2) == 0;
    c.dims = r.between(1, 3);
    c.integers = r.below(2) == 0;
    c.x = {r.between(1, 2), r.between(1, 3)};
    c.P_x = {1, 1};
    std::size_t workers = 1;
    for (std::size_t e = 0; e < c.dims; ++e) {
        const std::size_t parts = r.between(1, std::max<std::size_t>(1, std::size_t(world_size) / workers));
        c.P_x.push_back(parts);
        workers *= parts;
        const std::size_t k = r.between(1, 4), d = c.max ? r.between(1, 3) : 1, span = d * (k - 1) + 1;
        const std::size_t p = r.below(span + 1);  // up to span: windows of padding only (max: -inf)
        const std::size_t shortest = span > 2 * p ? span - 2 * p : 1;
        const std::size_t length = r.between(shortest, std::max<std::size_t>(shortest, 9));
        c.x.push_back(length);
        c.k.push_back(k);
        c.s.push_back(r.between(1, 3));
        c.p.push_back(p);
        c.d.push_back(d);
    }
    if (workers * 2 <= std::size_t(world_size) && r.below(4) == 0) {  // split the channels too
        c.P_x[1] = 2;
        workers *= 2;
    }
    // Workers: a random choice of world ranks in a random order.
    std::vector<int> pool = rank_range(0, world_size);
    for (std::size_t i = 0; i < workers; ++i) {
        std::swap(pool[i], pool[i + r.below(pool.size() - i)]);
        c.workers.push_back(pool[i]);
    }
    return c;
}

template <class T>
tensor<T> sweep_input(const sweep_case& c, std::uint64_t seed) {
    tensor<T> x = distdl::verify::random_tensor<T>(c.x, seed);
    if (c.integers)
        for (auto& v : x) v = std::floor(v * 3);  // -3..2
    return x;
}

template <class T>
void run_sweep_case(const std::shared_ptr<distdl::communicator>& world, const sweep_case& c, std::uint64_t seed) {
    const auto P_x = make_partition(world, c.workers, c.P_x);
    const pool_options options{.kernel_size = c.k, .stride = c.s, .padding = c.p, .dilation = c.d, .input_shape = c.x};
    const distdl::ref::pool_geometry g{c.k, c.s, c.p, c.d};
    std::unique_ptr<distdl::module<T>> layer;
    if (c.max) layer = std::make_unique<distributed_max_pool<T>>(P_x, options);
    else layer = std::make_unique<distributed_avg_pool<T>>(P_x, options);
    const auto split = [&](const tensor<T>& global) {
        return distdl::verify::runners::split_pieces(global, c.P_x, distdl::verify::input_split::balanced);
    };
    tensor<T> y, dx;  // reused across the two rounds, as a training loop would
    for (std::uint64_t round = 0; round < 2; ++round) {
        const tensor<T> x = sweep_input<T>(c, seed * 4 + round);
        const tensor<T> want_y = c.max ? distdl::ref::max_pool(x, g) : distdl::ref::avg_pool(x, g);
        const tensor<T> dy = distdl::verify::random_tensor<T>(distdl::shape_of(want_y), seed * 4 + round + 2);
        const tensor<T> want_dx =
            c.max ? distdl::ref::max_pool_adjoint(x, dy, g) : distdl::ref::avg_pool_adjoint(dy, c.x, g);
        const T* y_storage = y.size() ? y.data() : nullptr;
        layer->forward(mine(world, c.workers, split(x)), y);
        try {
            expect_pieces(world, c.workers, y, split(want_y), c.max, "forward");
            layer->adjoint(mine(world, c.workers, split(dy)), dx);
            expect_pieces(world, c.workers, dx, split(want_dx), false, "adjoint");
            if (round == 1 && y_storage) DCHECK(y.data() == y_storage);  // the same shape reuses the storage
        } catch (const distdl::testing::check_failure& e) {
            DCHECK_FAIL_(c.describe() << ", round " << round << ": " << e.what());
        }
    }
}

template <class T>
void sweep(const std::shared_ptr<distdl::communicator>& world, std::uint64_t seed, int count) {
    draws r{seed * 7919 + std::uint64_t(world->size())};
    for (int i = 0; i < count; ++i) run_sweep_case<T>(world, draw_case(r, world->size()), seed + std::uint64_t(i));
}

}  // namespace

class pool_sweep : public ::testing::TestWithParam<int> {
  protected:
    template <class T>
    void run_sweep(std::uint64_t seed, int count) {
        try {
            distdl::sim::run(GetParam(), [&](const std::shared_ptr<distdl::communicator>& world) {
                sweep<T>(world, seed, count);
            });
        } catch (const std::exception& e) {
            FAIL() << "world of " << GetParam() << ": " << e.what();
        }
    }
};

// 40 configurations per world size in double, 12 in float.
TEST_P(pool_sweep, matches_reference_double) { run_sweep<double>(101, 40); }
TEST_P(pool_sweep, matches_reference_float) { run_sweep<float>(202, 12); }

INSTANTIATE_TEST_SUITE_P(world, pool_sweep, ::testing::Range(1, 19));
