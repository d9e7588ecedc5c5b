#include "layers/flatten.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "core/detail/argument_agreement.hpp"
#include "core/detail/call_status.hpp"
#include "core/detail/output.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "layers/detail/gradient_shape.hpp"
#include "layers/detail/idle_call.hpp"
#include "layers/detail/one_world.hpp"
#include "layers/detail/piece_layout.hpp"

namespace distdl {

namespace {

constexpr const char* name = "Flatten";

}  // namespace

template <class T>
struct flatten<T>::state {
    explicit state(const cartesian_partition& P) : P_x(P) {}
    cartesian_partition P_x;
    bool forward_done = false;
    shape_t x_shape, y_shape;  // this worker's pieces at the last forward
    bool shapes_known = false;  // x_shape holds one (an empty x_shape is also a 0-d piece's)
};

template <class T>
flatten<T>::flatten(const cartesian_partition& P_x, const cartesian_partition& P_y)
    : state_(std::make_unique<state>(P_x)) {
    require_one_world(name, P_x, {{"P_y", &P_y}});
    // First, before any check that could fail on some workers only: the same arguments everywhere.
    detail::argument_agreement(name)
        .element_type(dtype_of<T>())
        .partition("P_x", P_x)
        .partition("P_y", P_y)
        .require(*P_x.world_comm());
    const shape_t& grid = P_x.shape();
    DISTDL_REQUIRE_AS(grid.size() >= 2 && grid.size() <= 5, partition_error,
                      name << ": P_x has shape " << format_list(grid)
                           << "; expected 2 to 5 dimensions, as the input (the batch, then the features)");
    for (std::size_t d = 1; d < grid.size(); ++d)
        DISTDL_REQUIRE_AS(grid[d] == 1, partition_error,
                          name << ": P_x " << format_list(grid) << " splits dimension " << d << " into " << grid[d]
                               << "; only the batch (dimension 0) may be split, so that every worker holds whole "
                                  "samples (a Repartition to a partition that splits the batch only comes first)");
    DISTDL_REQUIRE_AS(P_y.shape() == shape_t({grid[0], 1}), partition_error,
                      name << ": P_y has shape " << format_list(P_y.shape()) << "; expected [" << grid[0]
                           << ",1] (the batch split of P_x " << format_list(grid) << ")");
    DISTDL_REQUIRE_AS(P_y.members() == P_x.members(), partition_error,
                      name << ": P_y must be on the workers of P_x in the same order (Flatten moves no data): P_x on "
                           << "world ranks " << format_list(P_x.members()) << ", P_y on "
                           << format_list(P_y.members()));
    this->set_partitions(&P_x, &P_y);
}

template <class T>
flatten<T>::~flatten() = default;

template <class T>
void flatten<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    auto& st = *state_;
    st.forward_done = false;
    if (!st.P_x.active()) return idle_call(st.P_x, name, x, y, "an input");
    const shape_t piece = shape_of(x);
    if (st.P_x.size() == 1) {
        DISTDL_REQUIRE(piece.size() == st.P_x.dim(),
                       name << ": x on P_x " << st.P_x.worker_name(0) << " has shape "
                            << format_list(piece) << ", expected " << st.P_x.dim()
                            << " dimensions (the batch, then the features, as P_x " << format_list(st.P_x.shape())
                            << ")");
    } else if (detail::agree_on_call(*st.P_x.comm(), {}, !st.shapes_known || piece != st.x_shape)) {
        // A piece changed somewhere: every worker judges all the pieces' shapes alike.
        shape_t global;
        const std::string problem = agree_on_piece_layout(
            st.P_x, name, piece, global, "the batch, then " + std::to_string(st.P_x.dim() - 1) + " feature dimensions");
        DISTDL_REQUIRE(problem.empty(), problem);
    }
    st.x_shape = piece;
    st.shapes_known = true;
    std::size_t features = 1;
    for (std::size_t d = 1; d < piece.size(); ++d) features *= piece[d];
    st.y_shape = {piece[0], features};
    detail::prepare_output(y, st.y_shape);
    std::copy(x.data(), x.data() + x.size(), y.data());
    st.forward_done = true;
}

template <class T>
void flatten<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    auto& st = *state_;
    if (!st.P_x.active()) return idle_call(st.P_x, name, dy, dx, "an output gradient");
    DISTDL_REQUIRE(st.forward_done, name << ": adjoint() needs a successful forward() first (the gradient goes to "
                                            "the shape of its input)");
    require_gradient_shape(st.P_x, name, dy, st.y_shape);
    detail::prepare_output(dx, st.x_shape);
    std::copy(dy.data(), dy.data() + dy.size(), dx.data());
}

template class flatten<float>;
template class flatten<double>;

}  // namespace distdl
