#include "verify/registry.hpp"

#include <utility>

#include "core/error.hpp"

namespace distdl::verify {

void runner_registry::add(layer_runner runner) {
    DISTDL_REQUIRE(!runner.layer.empty(), "runner_registry: a runner needs a layer name");
    DISTDL_REQUIRE(runner.make_float && runner.make_double,
                   "runner_registry: runner for " << runner.layer << " lacks a float or double factory");
    const std::string name = runner.layer;
    DISTDL_REQUIRE(runners_.emplace(name, std::move(runner)).second,
                   "runner_registry: layer " << name << " is registered twice");
}

const layer_runner* runner_registry::find(const std::string& layer) const {
    auto it = runners_.find(layer);
    return it == runners_.end() ? nullptr : &it->second;
}

std::vector<std::string> runner_registry::layers() const {
    std::vector<std::string> names;
    for (const auto& entry : runners_) names.push_back(entry.first);
    return names;
}

// The table: one entry per layer, each defined in its runner file (verify/runners/). An
// explicit table rather than self-registering statics, which a static library would drop.
layer_runner broadcast_runner();
layer_runner sum_reduce_runner();
layer_runner all_sum_reduce_runner();
layer_runner repartition_runner();
layer_runner halo_exchange_runner();
layer_runner linear_runner();
layer_runner flatten_runner();
layer_runner relu_runner();
std::vector<layer_runner> conv_runners();  // FeatureConvNd, ChannelConvNd, GeneralConvNd, ConvNd
std::vector<layer_runner> pool_runners();  // MaxPool1d…3d, AvgPool1d…3d
layer_runner sequential_runner();           // chains of the layers above

const runner_registry& builtin_registry() {
    static const runner_registry registry = [] {
        runner_registry r;
        for (auto entry : {broadcast_runner, sum_reduce_runner, all_sum_reduce_runner, repartition_runner,
                           halo_exchange_runner, linear_runner, flatten_runner, relu_runner,
                           sequential_runner})
            r.add(entry());
        for (auto& runner : conv_runners()) r.add(std::move(runner));
        for (auto& runner : pool_runners()) r.add(std::move(runner));
        return r;
    }();
    return registry;
}

const cartesian_partition& case_world::get(const std::string& name) const {
    auto it = partitions.find(name);
    DISTDL_REQUIRE(it != partitions.end(), "case_world: the case has no partition " << name);
    return it->second;
}

}  // namespace distdl::verify
