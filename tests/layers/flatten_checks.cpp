// Flatten on both transports: the per-call agreements the case library cannot express (a bad
// piece or dy on one worker refused by every worker of P_x with the same text, a changed batch
// learnt again, adjoint before forward, idle workers), and a steady loop that reshapes in
// place. Construction refusals and the serial meaning: cases/flatten.
#include "layers/flatten.hpp"
#include "reference/flatten.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace {

using distdl::flatten;
using distdl::shape_t;
using distdl::tensor;
using distdl::testing::make_partition;
using distdl::testing::piece_of;
using distdl::testing::random_tensor;
using distdl::testing::rank_range;

// The first n samples of a global tensor.
tensor<double> first_samples(const tensor<double>& global, std::size_t n) { return xt::view(global, xt::range(0, n)); }

DISTDL_CHECK(flatten_batch_split_calls, world_size >= 3) {
    // P_x [3,1,1,1] on workers 0..2 (any further workers idle).
    const int me = world->rank();
    const std::vector<int> workers = rank_range(0, 3);
    const auto P_x = make_partition(world, workers, {3, 1, 1, 1});
    const auto P_y = make_partition(world, workers, {3, 1});
    flatten<double> layer(P_x, P_y);
    const tensor<double> none(shape_t{0});
    tensor<double> y, dx;
    for (const std::size_t N : {7u, 7u, 2u}) {  // the second call reuses, the third learns a new batch
        const tensor<double> x = random_tensor<double>({N, 2, 3, 2}, N);
        if (me >= 3) {
            layer.forward(none, y);
            DCHECK_EQ(distdl::shape_of(y), (shape_t{0}));
            layer.adjoint(none, dx);
            continue;
        }
        const tensor<double> x_piece = piece_of(x, {3, 1, 1, 1}, workers, me);
        layer.forward(x_piece, y);
        DCHECK(distdl::testing::same_bits(y, piece_of(distdl::ref::flatten(x), {3, 1}, workers, me)));
        layer.adjoint(y, dx);
        DCHECK(distdl::testing::same_bits(dx, x_piece));
    }
    if (me >= 3) return;

    // A piece of other features on worker 1 only: every worker of P_x refuses with its text.
    const tensor<double> x = random_tensor<double>({6, 2, 3, 2}, 9);
    const tensor<double> x_piece = piece_of(x, {3, 1, 1, 1}, workers, me);
    const tensor<double> bad = random_tensor<double>({2, 2, 3, 3}, 10);
    DCHECK_THROWS(layer.forward(me == 1 ? bad : x_piece, y), distdl::invalid_argument,
                  "Flatten: x on P_x worker 1 (world rank 1) has shape [2,2,3,3], but the pieces along dimension 3 "
                  "are not a balanced split");
    // A batch that is not a balanced split: 2, 2, 3 (of 6, worker 2 is off; of 7, two would be).
    DCHECK_THROWS(layer.forward(first_samples(x, me == 2 ? 3 : 2), y), distdl::invalid_argument,
                  "Flatten: x on P_x worker 2 (world rank 2) has shape [3,2,3,2], but the pieces along dimension 0 "
                  "are not a balanced split: its line along that dimension has extents [2,2,3], and the balanced "
                  "split of their sum 7 over 3 is [3,2,2]; the most pieces fit the balanced split of 6, which gives it "
                  "extent 2");
    // The failed forward left no forward behind.
    DCHECK_THROWS(layer.adjoint(tensor<double>(shape_t{2, 12}), dx), distdl::invalid_argument,
                  "Flatten: adjoint() needs a successful forward() first");
    layer.forward(x_piece, y);
    // dy of another shape on worker 2 only.
    const tensor<double> dy = me == 2 ? tensor<double>(shape_t{2, 11}) : y;
    DCHECK_THROWS(layer.adjoint(dy, dx), distdl::invalid_argument,
                  "Flatten: dy on P_x worker 2 (world rank 2) has shape [2,11], expected [2,12]");
    // And the layer still works.
    layer.adjoint(y, dx);
    DCHECK(distdl::testing::same_bits(dx, x_piece));
}

DISTDL_CHECK(flatten_one_worker_and_idle, world_size >= 2) {
    // P_x [1,1,1] on the last worker; the others idle and must pass zero-volume tensors.
    const int last = world->size() - 1;
    const auto P_x = make_partition(world, {last}, {1, 1, 1});
    const auto P_y = make_partition(world, {last}, {1, 1});
    flatten<double> layer(P_x, P_y);
    tensor<double> y;
    const tensor<double> x = random_tensor<double>({4, 3, 5}, 3);
    if (world->rank() == last) {
        layer.forward(x, y);
        DCHECK_EQ(distdl::shape_of(y), (shape_t{4, 15}));
        DCHECK_THROWS(layer.forward(tensor<double>(shape_t{4, 15}), y), distdl::invalid_argument,
                      "Flatten: x on P_x worker 0 (world rank " + std::to_string(last) +
                          ") has shape [4,15], expected 3 dimensions");
    } else {
        DCHECK_THROWS(layer.forward(x, y), distdl::invalid_argument,
                      "is not in P_x and must pass an input of zero volume, got shape [4,3,5]");
    }
}

}  // namespace
