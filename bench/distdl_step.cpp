#include <memory>

#include "bench/step.hpp"
#include "core/all_sum_reduce.hpp"
#include "core/broadcast.hpp"
#include "core/decomposition.hpp"
#include "core/halo_exchange.hpp"
#include "core/partition.hpp"
#include "core/repartition.hpp"
#include "core/sum_reduce.hpp"

namespace distdl::bench {

namespace {

// The module and its buffers; run() reuses y (as the adjoint's input, too) and dx.
class module_step final : public step {
  public:
    module_step(std::unique_ptr<module<double>> op, tensor<double> x) : op_(std::move(op)), x_(std::move(x)) {}
    void run() override {
        op_->forward(x_, y_);
        op_->adjoint(y_, dx_);
    }

  private:
    std::unique_ptr<module<double>> op_;
    tensor<double> x_, y_, dx_;
};

std::vector<int> first_ranks(int count) {
    std::vector<int> r(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
}

cartesian_partition grid_of(const partition& world, int count, const shape_t& shape) {
    return world.create_partition_inclusive(first_ranks(count)).create_cartesian_topology_partition(shape);
}

tensor<double> filled(const shape_t& shape) { return tensor<double>(shape, 1.0); }

// The balanced piece of `global` that this worker owns on P.
tensor<double> piece(const cartesian_partition& P, const shape_t& global) {
    shape_t local(global.size());
    const shape_t index = P.index();
    for (std::size_t d = 0; d < global.size(); ++d) local[d] = balanced_size(global[d], P.shape()[d], index[d]);
    return filled(local);
}

}  // namespace

std::unique_ptr<step> make_distdl_step(const workload& w, const std::shared_ptr<communicator>& world) {
    const partition W = partition::world(world);
    const shape_t grid = w.worker_grid();
    const auto absent = zero_volume<double>(w.shape[0], true);  // inputs of workers outside P_x
    switch (w.kind) {
        case primitive_kind::broadcast: {
            const auto P_x = grid_of(W, 1, shape_t(grid.size(), 1));
            const auto P_y = grid_of(W, w.workers, grid);
            return std::make_unique<module_step>(std::make_unique<broadcast<double>>(P_x, P_y),
                                                 P_x.active() ? filled(w.shape) : absent);
        }
        case primitive_kind::sum_reduce: {
            const auto P_x = grid_of(W, w.workers, grid);
            const auto P_y = grid_of(W, 1, shape_t(grid.size(), 1));
            return std::make_unique<module_step>(std::make_unique<sum_reduce<double>>(P_x, P_y), filled(w.shape));
        }
        case primitive_kind::all_sum_reduce: {
            const auto P_x = grid_of(W, w.workers, grid);
            return std::make_unique<module_step>(std::make_unique<all_sum_reduce<double>>(P_x, std::vector<std::size_t>{0}),
                                                 filled(w.shape));
        }
        case primitive_kind::repartition: {
            const auto P_x = grid_of(W, w.workers, grid);
            const auto P_y = grid_of(W, w.workers, {grid[1], grid[0]});
            return std::make_unique<module_step>(std::make_unique<repartition<double>>(P_x, P_y), piece(P_x, w.shape));
        }
        case primitive_kind::halo_exchange: {
            const auto P_x = grid_of(W, w.workers, grid);
            const kernel_geometry g{{3, 3}, {1, 1}, {1, 1}, {1, 1}};
            return std::make_unique<module_step>(std::make_unique<halo_exchange<double>>(P_x, w.shape, g),
                                                 piece(P_x, w.shape));
        }
    }
    DISTDL_REQUIRE(false, "make_distdl_step: unknown primitive");
    return nullptr;
}

}  // namespace distdl::bench
