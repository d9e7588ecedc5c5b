#pragma once
// The runner registry: layer name -> layer_runner. Adding a layer to the harness is one
// line in builtin_registry() (registry.cpp) plus the layer's runner file.
#include <map>
#include <string>
#include <vector>

#include "verify/layer_runner.hpp"

namespace distdl::verify {

class runner_registry {
  public:
    // Throws distdl::invalid_argument when the layer is already registered.
    void add(layer_runner runner);
    // Null when no runner is registered for `layer`.
    const layer_runner* find(const std::string& layer) const;
    std::vector<std::string> layers() const;

  private:
    std::map<std::string, layer_runner> runners_;
};

// Every layer this build can verify.
const runner_registry& builtin_registry();

// The runner files' entries (one per layer).
layer_runner broadcast_runner();
layer_runner sum_reduce_runner();
layer_runner all_sum_reduce_runner();
layer_runner repartition_runner();
layer_runner halo_exchange_runner();

}  // namespace distdl::verify
