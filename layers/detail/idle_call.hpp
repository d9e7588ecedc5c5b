#pragma once
// What a worker outside P_x does in a call of a layer that lives on P_x alone (pooling, Flatten):
// it takes no part, must pass a zero-volume tensor and gets {0} (checked on that worker only: it
// communicates with nobody).
#include <string>

#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"

namespace distdl {

template <class T>
void idle_call(const cartesian_partition& P_x, const std::string& name, const tensor<T>& arg, tensor<T>& out,
               const char* what) {
    DISTDL_REQUIRE(arg.size() == 0, name << ": world rank " << P_x.world_comm()->rank() << " is not in P_x and must pass "
                                         << what << " of zero volume, got shape " << format_piece_shape(shape_of(arg)));
    detail::prepare_output(out, shape_t{0});
}

}  // namespace distdl
