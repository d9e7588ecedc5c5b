#pragma once
// The runner registry: layer name -> layer_runner. Adding a layer to the harness is its
// runner file in verify/runners/ plus one entry in the table of registry.cpp.
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

// Every layer this build can verify (the table is in registry.cpp).
const runner_registry& builtin_registry();

}  // namespace distdl::verify
