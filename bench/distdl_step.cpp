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
template <class T>
class module_step final : public step {
  public:
    module_step(std::unique_ptr<module<T>> op, tensor<T> x) : op_(std::move(op)), x_(std::move(x)) {}
    void run() override {
        op_->forward(x_, y_);
        op_->adjoint(y_, dx_);
    }
    std::vector<double> outputs() const override {
        std::vector<double> out(y_.begin(), y_.end());
        out.insert(out.end(), dx_.begin(), dx_.end());
        return out;
    }

  private:
    std::unique_ptr<module<T>> op_;
    tensor<T> x_, y_, dx_;
};

std::vector<int> first_ranks(int count) {
    std::vector<int> r(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) r[static_cast<std::size_t>(i)] = i;
    return r;
}

cartesian_partition grid_of(const partition& world, int count, const shape_t& shape) {
    return world.create_partition_inclusive(first_ranks(count)).create_cartesian_topology_partition(shape);
}

// A worker's own piece: element i holds input_value(i, rank).
tensor<double> filled(const shape_t& shape, int rank) {
    tensor<double> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = input_value(i, rank);
    return t;
}

// The balanced piece of the `global` tensor that this worker owns on P: each element holds
// `value` of its global flat index.
template <class T, class Value>
tensor<T> piece(const cartesian_partition& P, const shape_t& global, Value value) {
    const index_box box = balanced_box(global, P.shape(), P.index());
    const shape_t local = box.extent();
    tensor<T> t(local);
    const std::size_t rank = local.size();
    for (std::size_t i = 0; i < t.size(); ++i) {
        // Global flat index of local element i.
        std::size_t rest = i, flat = 0, scale = 1;
        for (std::size_t d = rank; d-- > 0;) {
            flat += (box.start[d] + rest % local[d]) * scale;
            rest /= local[d];
            scale *= global[d];
        }
        t.data()[i] = value(flat);
    }
    return t;
}

tensor<double> piece(const cartesian_partition& P, const shape_t& global) {
    return piece<double>(P, global, [](std::size_t flat) { return input_value(flat, 0); });
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
            return std::make_unique<module_step<double>>(std::make_unique<broadcast<double>>(P_x, P_y),
                                                 P_x.active() ? filled(w.shape, world->rank()) : absent);
        }
        case primitive_kind::sum_reduce: {
            const auto P_x = grid_of(W, w.workers, grid);
            const auto P_y = grid_of(W, 1, shape_t(grid.size(), 1));
            return std::make_unique<module_step<double>>(std::make_unique<sum_reduce<double>>(P_x, P_y),
                                                 filled(w.shape, world->rank()));
        }
        case primitive_kind::all_sum_reduce: {
            const auto P_x = grid_of(W, w.workers, grid);
            return std::make_unique<module_step<double>>(std::make_unique<all_sum_reduce<double>>(P_x, std::vector<std::size_t>{0}),
                                                 filled(w.shape, world->rank()));
        }
        case primitive_kind::repartition: {
            const auto P_x = grid_of(W, w.workers, grid);
            const auto P_y = grid_of(W, w.workers, {grid[1], grid[0]});
            return std::make_unique<module_step<double>>(std::make_unique<repartition<double>>(P_x, P_y), piece(P_x, w.shape));
        }
        case primitive_kind::halo_exchange: {
            const auto P_x = grid_of(W, w.workers, grid);
            const kernel_geometry g{{3, 3}, {1, 1}, {1, 1}, {1, 1}};
            return std::make_unique<module_step<double>>(std::make_unique<halo_exchange<double>>(P_x, w.shape, g),
                                                 piece(P_x, w.shape));
        }
        case primitive_kind::pool_halo:
        case primitive_kind::conv_halo: {
            const auto P_x = grid_of(W, w.workers, grid);
            const layer_halo_geometry p = layer_halo_geometry_of(w.kind);
            const kernel_geometry g{p.kernel_size, p.stride, p.padding, shape_t(p.stride.size(), 1)};
            return std::make_unique<module_step<float>>(std::make_unique<halo_exchange<float>>(P_x, w.shape, g),
                                                        piece<float>(P_x, w.shape, layer_halo_input_value));
        }
    }
    DISTDL_REQUIRE(false, "make_distdl_step: unknown primitive");
    return nullptr;
}

}  // namespace distdl::bench
