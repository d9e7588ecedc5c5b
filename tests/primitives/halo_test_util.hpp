#pragma once
// Helpers of the repartition and halo-exchange checks: rank lists, tensors filled with their
// global flat index (so every moved element says where it came from) and bit-exact comparison;
// partitions, random data and the adjoint test are primitive_test_util.hpp's.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/partition.hpp"
#include "core/tensor.hpp"
#include "tests/common/checks.hpp"
#include "tests/primitives/primitive_test_util.hpp"

namespace distdl::testing::movement {

// `count` world ranks from `first` on (rank_range takes [begin, end) instead).
inline std::vector<int> consecutive_ranks(int first, int count) {
    std::vector<int> r(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) r[static_cast<std::size_t>(i)] = first + i;
    return r;
}

using testing::check_adjoint;
using testing::make_partition;
using testing::random_tensor;
using testing::same_bits;

// Element i (row-major) holds i: exact in float up to 2^24 elements.
template <class T>
tensor<T> index_tensor(const shape_t& shape) {
    tensor<T> t(shape);
    for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = static_cast<T>(i);
    return t;
}

#define MOVEMENT_CHECK_BITS(actual, expected, what)                                                       \
    do {                                                                                                  \
        if (!::distdl::testing::same_bits(actual, expected))                                    \
            DCHECK_FAIL_(what << ": got shape " << ::distdl::testing::show(::distdl::shape_of(actual))  \
                                << " " << (actual) << ", expected shape "                                 \
                                << ::distdl::testing::show(::distdl::shape_of(expected)) << " "           \
                                << (expected));                                                           \
    } while (false)

}  // namespace distdl::testing::movement
