#include "layers/linear.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <sstream>

#include "core/decomposition.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/call_status.hpp"
#include "core/detail/layer_workers.hpp"
#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "kernels/gemm.hpp"
#include "layers/detail/one_world.hpp"
#include "layers/detail/parameter_shape.hpp"
#include "layers/initial_values.hpp"

namespace distdl {

namespace {

using kernels::transpose;

enum class which : std::uint64_t { weight = 1, bias = 2 };

// Initial value of global element `index` of the weight or the bias (layers/initial_values.hpp).
double initial_value(std::uint64_t seed, which tensor_id, std::uint64_t index, std::size_t in_features) {
    return initial_parameter_value(seed, static_cast<std::uint64_t>(tensor_id), index, in_features);
}

std::string describe_shape(const std::array<std::uint64_t, 4>& s) {
    if (s[0] == 0) return format_piece_shape(shape_t{});
    std::ostringstream out;
    out << '[';
    for (std::uint64_t d = 0; d < s[0] && d < 2; ++d) out << (d ? "," : "") << s[1 + d];
    if (s[0] > 2) out << ",...] (rank " << s[0] << ")";
    else out << ']';
    return out.str();
}

// A piece that can be right on its own: a matrix with this worker's number of features.
template <class T>
bool fits(const tensor<T>& piece, std::size_t features) {
    return piece.dimension() == 2 && piece.shape()[1] == features;
}

// Runs one primitive call; false when it refused. Its refusals are the same on every member of
// its teams (core's guarantee), so every worker that takes part concludes alike.
template <class F>
bool completed(F&& call) {
    try {
        call();
        return true;
    } catch (const invalid_argument&) {
        return false;
    }
}

// Why the pieces of `team` (P_x or P_y) cannot be right (empty: no reason found); collective
// over `team` when it has more than one worker, so every member returns the same text.
template <class T>
std::string piece_problem(const cartesian_partition& team, const tensor<T>& piece, std::size_t features,
                          const std::size_t* expected_batch, const char* what) {
    // {rank, extent 0, extent 1, expected features}
    const std::array<std::uint64_t, 4> mine{piece.dimension(), piece.dimension() > 0 ? piece.shape()[0] : 0,
                                            piece.dimension() > 1 ? piece.shape()[1] : 0, features};
    const auto all = team.size() > 1 ? team.allgather_data(mine) : std::vector<std::array<std::uint64_t, 4>>{mine};
    const char* name = what[0] == 'x' ? "P_x" : "P_y";
    std::ostringstream problem;
    for (std::size_t w = 0; w < all.size(); ++w) {
        const auto& s = all[w];
        if (s[0] != 2 || s[2] != s[3]) {
            problem << "Linear: " << what << " on " << name << " " << team.worker_name(w) << " has shape "
                    << describe_shape(s) << ", expected [batch, " << s[3] << "]";
            return problem.str();
        }
    }
    for (std::size_t w = 0; w < all.size(); ++w) {
        const std::uint64_t batch = expected_batch ? *expected_batch : all[0][1];
        if (all[w][1] != batch) {
            problem << "Linear: " << what << " on " << name << " " << team.worker_name(w) << " has batch "
                    << all[w][1] << ", expected " << batch
                    << (expected_batch ? " (the batch of the last forward)" : " (the batch of P_x worker 0)");
            return problem.str();
        }
    }
    return {};
}

// The workers `ranks` (world ranks) as a 1 x n Cartesian partition.
cartesian_partition line_of(const std::shared_ptr<communicator>& world, const std::vector<int>& ranks) {
    return partition::world(world).create_partition_inclusive(ranks).create_cartesian_topology_partition(
        {1, ranks.size()});
}

void require_linear_partitions(const cartesian_partition& P_x, const cartesian_partition& P_y,
                               const cartesian_partition& P_W) {
    auto require_2d = [](const cartesian_partition& p, const char* name, const char* form) {
        DISTDL_REQUIRE_AS(p.dim() == 2, partition_error,
                          "Linear: " << name << " must be 2-dimensional (" << form << "), got shape "
                                     << format_list(p.shape()));
    };
    require_2d(P_x, "P_x", "1 x P_fi");
    require_2d(P_y, "P_y", "1 x P_fo");
    require_2d(P_W, "P_W", "P_fo x P_fi");
    DISTDL_REQUIRE_AS(P_x.shape()[0] == 1, partition_error,
                      "Linear: P_x shape " << format_list(P_x.shape()) << " must be 1 x P_fi (dimension 0 is "
                                           << P_x.shape()[0] << ", expected 1: the batch is not split)");
    DISTDL_REQUIRE_AS(P_y.shape()[0] == 1, partition_error,
                      "Linear: P_y shape " << format_list(P_y.shape()) << " must be 1 x P_fo (dimension 0 is "
                                           << P_y.shape()[0] << ", expected 1: the batch is not split)");
    DISTDL_REQUIRE_AS(P_W.shape()[1] == P_x.shape()[1], partition_error,
                      "Linear: P_W shape " << format_list(P_W.shape()) << " does not match P_x shape "
                                           << format_list(P_x.shape()) << " in the in_features split (P_W dimension 1: "
                                           << P_W.shape()[1] << " vs P_x dimension 1: " << P_x.shape()[1] << ")");
    DISTDL_REQUIRE_AS(P_W.shape()[0] == P_y.shape()[1], partition_error,
                      "Linear: P_W shape " << format_list(P_W.shape()) << " does not match P_y shape "
                                           << format_list(P_y.shape()) << " in the out_features split (P_W dimension 0: "
                                           << P_W.shape()[0] << " vs P_y dimension 1: " << P_y.shape()[1] << ")");
}

}  // namespace

template <class T>
linear_parameters<T> linear_initial_parameters(std::size_t in_features, std::size_t out_features,
                                               const linear_options& options) {
    linear_parameters<T> p{tensor<T>(shape_t{out_features, in_features}), tensor<T>(shape_t{options.bias ? out_features : 0})};
    for (std::size_t e = 0; e < p.weight.size(); ++e)
        p.weight.data()[e] = static_cast<T>(initial_value(options.seed, which::weight, e, in_features));
    for (std::size_t e = 0; e < p.bias.size(); ++e)
        p.bias.data()[e] = static_cast<T>(initial_value(options.seed, which::bias, e, in_features));
    return p;
}

template <class T>
distributed_linear<T>::distributed_linear(const cartesian_partition& P_x, const cartesian_partition& P_y,
                                          const cartesian_partition& P_W, std::size_t in_features,
                                          std::size_t out_features, linear_options options)
    : P_x_(P_x),
      P_y_(P_y),
      P_W_(P_W),
      empty_(shape_t{0}),
      marker_(shape_t{0}),
      poison_(shape_t{1}, T(0)),
      verdict_out_(shape_t{1}) {
    require_one_world("Linear", P_x, {{"P_y", &P_y}, {"P_W", &P_W}});
    // First, before anything that could fail on some workers only: the same arguments everywhere.
    detail::argument_agreement("Linear")
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y.shape())
        .list("P_W shape", P_W.shape())
        .number("in_features", in_features)
        .number("out_features", out_features)
        .flag("bias", options.bias)
        .number("seed", options.seed)
        .require(*P_x.world_comm());
    require_linear_partitions(P_x, P_y, P_W);
    this->set_partitions(&P_x, &P_y);
    const std::size_t P_fo = P_W.shape()[0], P_fi = P_W.shape()[1];
    // Both primitives check their partition rules and the element type on every worker.
    broadcast_x_ = std::make_unique<broadcast<T>>(P_x, P_W);
    reduce_y_ = std::make_unique<sum_reduce<T>>(P_W, P_y, sum_reduce_options{.transpose_src = true});

    // The workers that hear nothing back in one direction, and who tells them the outcome.
    const auto& world = P_x.world_comm();
    const auto in_x = detail::world_membership({&P_x}), in_y = detail::world_membership({&P_y}),
               in_W = detail::world_membership({&P_W});
    std::vector<int> forward_sources, forward_deaf, adjoint_sources, adjoint_deaf;
    for (std::size_t c = 0; c < P_fi; ++c) {
        const int w = P_x.members()[c];
        if (in_W[static_cast<std::size_t>(w)] || in_y[static_cast<std::size_t>(w)]) continue;
        forward_deaf.push_back(w);
        forward_sources.push_back(P_W.members()[c]);  // P_W(0, c)
    }
    for (std::size_t r = 0; r < P_fo; ++r) {
        const int w = P_y.members()[r];
        if (in_W[static_cast<std::size_t>(w)] || in_x[static_cast<std::size_t>(w)]) continue;
        adjoint_deaf.push_back(w);
        adjoint_sources.push_back(P_W.members()[r * P_fi]);  // P_W(r, 0)
    }
    const int me = world->rank();
    tells_forward_ = std::find(forward_sources.begin(), forward_sources.end(), me) != forward_sources.end();
    tells_adjoint_ = std::find(adjoint_sources.begin(), adjoint_sources.end(), me) != adjoint_sources.end();
    if (!forward_deaf.empty())
        forward_verdict_ = std::make_unique<broadcast<T>>(line_of(world, forward_sources), line_of(world, forward_deaf));
    if (!adjoint_deaf.empty())
        adjoint_verdict_ = std::make_unique<broadcast<T>>(line_of(world, adjoint_sources), line_of(world, adjoint_deaf));
    layer_comm_ = detail::layer_workers_comm({&P_x, &P_y, &P_W});

    if (P_x.active()) local_in_ = balanced_size(in_features, P_fi, P_x.index()[1]);
    if (P_y.active()) local_out_ = balanced_size(out_features, P_fo, P_y.index()[1]);
    if (P_W.active()) {
        const auto at = P_W.index();
        const std::size_t row0 = balanced_start(out_features, P_fo, at[0]), rows = balanced_size(out_features, P_fo, at[0]);
        const std::size_t col0 = balanced_start(in_features, P_fi, at[1]), cols = balanced_size(in_features, P_fi, at[1]);
        holds_weight_ = true;
        holds_bias_ = options.bias && at[1] == 0;
        weight_block_ = shape_t{rows, cols};
        bias_block_ = shape_t{rows};
        weight_.name = "weight";
        weight_.value = tensor<T>(shape_t{rows, cols});
        weight_.grad = xt::zeros<T>(shape_t{rows, cols});
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c)
                weight_.value(r, c) =
                    static_cast<T>(initial_value(options.seed, which::weight, (row0 + r) * in_features + col0 + c, in_features));
        if (holds_bias_) {
            bias_.name = "bias";
            bias_.value = tensor<T>(shape_t{rows});
            bias_.grad = xt::zeros<T>(shape_t{rows});
            for (std::size_t r = 0; r < rows; ++r)
                bias_.value(r) = static_cast<T>(initial_value(options.seed, which::bias, row0 + r, in_features));
        }
    }
}

template <class T>
distributed_linear<T>::~distributed_linear() = default;

template <class T>
std::vector<parameter<T>*> distributed_linear<T>::parameters() {
    std::vector<parameter<T>*> owned;
    if (holds_weight_) owned.push_back(&weight_);
    if (holds_bias_) owned.push_back(&bias_);
    return owned;
}

template <class T>
void distributed_linear<T>::refuse(const cartesian_partition& team, const tensor<T>& piece, std::size_t features,
                                   const std::size_t* expected_batch, const char* what, const char* direction,
                                   const std::string& parameter_problem) {
    std::string problem;
    if (team.active()) problem = piece_problem(team, piece, features, expected_batch, what);
    if (!parameter_problem.empty()) problem = parameter_problem;
    // Every member of `team` found the same reason: the lowest-ranked one tells the others.
    detail::agree_on_call(*layer_comm_, problem, false, detail::first_problem);
    throw invalid_argument(std::string("Linear: ") + direction + " refused: the pieces of " +
                           (what[0] == 'x' ? "P_x" : "P_y") + " do not fit together");
}

template <class T>
std::string distributed_linear<T>::parameter_problem(bool with_grad) const {
    if (!holds_weight_) return {};
    return detail::owner_problem("Linear", "P_W", P_W_, weight_, weight_block_, holds_bias_ ? &bias_ : nullptr,
                                 bias_block_, with_grad);
}

template <class T>
bool distributed_linear<T>::tell_deaf(broadcast<T>* verdict, bool source, bool failed) {
    if (verdict == nullptr) return failed;
    verdict_out_(0) = failed ? T(1) : T(0);
    verdict->forward(source ? verdict_out_ : empty_, verdict_in_);
    return failed || (!source && verdict_in_.size() == 1 && verdict_in_.data()[0] != T(0));
}

template <class T>
void distributed_linear<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    forward_done_ = false;
    // A worker whose parameters are wrong spoils its column's broadcast (a marker as its piece, or
    // as a receiver a non-empty input, which the broadcast refuses on every member): every row of
    // P_W then holds a worker that knows, and the rows' sums spread it as a bad piece's marker.
    const std::string own_problem = parameter_problem(false);
    const tensor<T>* sent = &empty_;
    if (P_x_.active()) sent = fits(x, local_in_) && own_problem.empty() ? &x : &marker_;
    else if (!own_problem.empty()) sent = &poison_;
    bool failed = !completed([&] { broadcast_x_->forward(*sent, x_piece_); });

    const tensor<T>* contribution = &empty_;
    if (holds_weight_) {
        if (failed || !own_problem.empty() || !fits(x_piece_, weight_block_[1])) {
            failed = true;  // the marker: some P_x piece or some worker's parameters cannot be right
            contribution = &marker_;
        } else {
            const std::size_t batch = x_piece_.shape()[0];
            const std::size_t rows = weight_.value.shape()[0];
            detail::prepare_output(y_partial_, {batch, rows});
            // With the bias, every row starts as b and the product is added to it (beta = 1).
            if (holds_bias_)
                for (std::size_t n = 0; n < batch; ++n)
                    std::copy(bias_.value.data(), bias_.value.data() + rows, y_partial_.data() + n * rows);
            kernels::gemm(transpose::no, transpose::yes, T(1), x_piece_, weight_.value, holds_bias_ ? T(1) : T(0),
                          y_partial_);
            contribution = &y_partial_;
        }
    }
    // A marker or a batch that differs between columns reaches every row: the rows' sums
    // refuse on all of their members, or (every piece a marker) deliver a marker.
    if (!completed([&] { reduce_y_->forward(*contribution, received_); })) failed = true;
    if (P_y_.active() && received_.dimension() != 2) failed = true;
    failed = tell_deaf(forward_verdict_.get(), tells_forward_, failed);
    if (failed) refuse(P_x_, x, local_in_, nullptr, "x", "forward", own_problem);

    if (P_y_.active()) {
        batch_ = received_.shape()[0];
        std::swap(y, received_);
    } else {
        detail::prepare_output(y, {0});
        if (holds_weight_) batch_ = x_piece_.shape()[0];
        else if (P_x_.active()) batch_ = x.shape()[0];
    }
    forward_done_ = true;
}

template <class T>
void distributed_linear<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    // Every worker of the layer knows whether the last forward succeeded (it succeeds or fails
    // on all of them); a worker in none of the partitions has nothing to do either way.
    const bool takes_part = P_x_.active() || P_y_.active() || P_W_.active();
    DISTDL_REQUIRE(forward_done_ || !takes_part,
                   "Linear: adjoint() needs a successful forward() first (it uses that input)");
    // As in forward, with rows and columns exchanged (the gradients too must have their shapes).
    const std::string own_problem = parameter_problem(true);
    const tensor<T>* sent = &empty_;
    if (P_y_.active()) sent = fits(dy, local_out_) && dy.shape()[0] == batch_ && own_problem.empty() ? &dy : &marker_;
    else if (!own_problem.empty()) sent = &poison_;
    bool failed = !completed([&] { reduce_y_->adjoint(*sent, dy_piece_); });

    const tensor<T>* contribution = &empty_;
    if (holds_weight_) {
        if (failed || !own_problem.empty() || !fits(dy_piece_, weight_block_[0]) ||
            dy_piece_.shape()[0] != x_piece_.shape()[0]) {
            failed = true;
            contribution = &marker_;
        } else {
            detail::prepare_output(dx_partial_, {dy_piece_.shape()[0], weight_.value.shape()[1]});
            kernels::gemm(transpose::no, transpose::no, T(1), dy_piece_, weight_.value, T(0), dx_partial_);
            contribution = &dx_partial_;
        }
    }
    // As in forward, with rows and columns exchanged: every column's sum hears from every row.
    if (!completed([&] { broadcast_x_->adjoint(*contribution, received_); })) failed = true;
    if (P_x_.active() && received_.dimension() != 2) failed = true;
    failed = tell_deaf(adjoint_verdict_.get(), tells_adjoint_, failed);
    if (failed) refuse(P_y_, dy, local_out_, &batch_, "dy", "adjoint", own_problem);

    // The call succeeded everywhere: now the gradients take it in.
    if (holds_weight_) {
        kernels::gemm(transpose::yes, transpose::no, T(1), dy_piece_, x_piece_, T(1), weight_.grad);
        if (holds_bias_) {
            const std::size_t rows = bias_.grad.size(), batch = dy_piece_.shape()[0];
            for (std::size_t n = 0; n < batch; ++n)
                for (std::size_t r = 0; r < rows; ++r) bias_.grad.data()[r] += dy_piece_.data()[n * rows + r];
        }
    }
    if (P_x_.active()) std::swap(dx, received_);
    else detail::prepare_output(dx, {0});
}

template linear_parameters<float> linear_initial_parameters<float>(std::size_t, std::size_t, const linear_options&);
template linear_parameters<double> linear_initial_parameters<double>(std::size_t, std::size_t, const linear_options&);
template class distributed_linear<float>;
template class distributed_linear<double>;

}  // namespace distdl
