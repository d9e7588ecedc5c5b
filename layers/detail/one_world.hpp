#pragma once
// A layer's partitions must all come from one world communicator: its teams are built there. A
// partition made from another (even one over the same processes) is refused naming the layer.
#include <initializer_list>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/partition.hpp"

namespace distdl {

inline void require_one_world(const std::string& layer, const partition& P_x,
                              std::initializer_list<std::pair<const char*, const partition*>> others) {
    for (const auto& [name, p] : others)
        DISTDL_REQUIRE_AS(p->world_comm() == P_x.world_comm(), partition_error,
                          layer << ": " << name << " was made from another world communicator than P_x (the "
                                << "partitions of a layer must all come from one world)");
}

}  // namespace distdl
