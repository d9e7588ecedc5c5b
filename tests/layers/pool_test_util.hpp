#pragma once
// Helpers of the pooling checks and sweep: small hand-written rows, each worker's piece of a
// list, and the comparison of a worker's piece with the expected one (bit-exact or within the
// arithmetic tolerance of T).
#include <limits>
#include <string>
#include <vector>

#include "layers/pool_options.hpp"
#include "tests/layers/layer_test_util.hpp"
#include "verify/runners/pieces.hpp"

namespace distdl::testing {

constexpr double inf = std::numeric_limits<double>::infinity();

// `options` with the global input shape given (planned at construction).
inline pool_options shaped(shape_t input_shape, pool_options options) {
    options.input_shape = std::move(input_shape);
    return options;
}

// A 1 × 1 × L tensor of the given values.
template <class T>
tensor<T> row(const std::vector<double>& values) {
    tensor<T> t(shape_t{1, 1, values.size()});
    for (std::size_t i = 0; i < values.size(); ++i) t.data()[i] = static_cast<T>(values[i]);
    return t;
}

// Worker i of `workers` holds pieces[i]; everyone else {0}.
template <class T>
tensor<T> mine(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& workers,
               const std::vector<tensor<T>>& pieces) {
    const int at = distdl::verify::runners::rank_in(workers, std::size_t(world->rank()));
    return at >= 0 ? pieces[std::size_t(at)] : distdl::zero_volume<T>();
}

template <class T>
void expect_pieces(const std::shared_ptr<distdl::communicator>& world, const std::vector<int>& workers,
                   const tensor<T>& got, const std::vector<tensor<T>>& want, bool exact, const std::string& what) {
    const tensor<T> expected = mine(world, workers, want);
    if (exact) {
        if (!same_bits(got, expected))
            DCHECK_FAIL_(what << " on rank " << world->rank() << ": got " << distdl::testing::show(got) << ", expected "
                              << distdl::testing::show(expected));
    } else {
        check_close(got, expected, what, distdl::verify::largest_magnitude(want));  // want: the whole tensor
    }
}

}  // namespace distdl::testing
