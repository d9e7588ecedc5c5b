#pragma once
// Private helper of Broadcast and SumReduce: the arguments every worker must give alike,
// checked before the teams are built (workers with other flags would build other teams and
// wait for each other).
#include <string>

#include "core/broadcast.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/partition.hpp"

namespace distdl::detail {

// Collective over P_x's world; refuses disagreement on every worker, naming `module_name`.
inline void require_pair_agreement(const std::string& module_name, dtype element_type, const cartesian_partition& P_x,
                                   const cartesian_partition& P_y, const broadcast_options& options) {
    argument_agreement(module_name)
        .element_type(element_type)
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y.shape())
        .flag("transpose_src", options.transpose_src)
        .flag("transpose_dest", options.transpose_dest)
        .flag("preserve_batch", options.preserve_batch)
        .require(*P_x.world_comm());
}

}  // namespace distdl::detail
