#include "layers/conv_general.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <optional>
#include <sstream>

#include "core/broadcast.hpp"
#include "core/checked_arithmetic.hpp"
#include "core/decomposition.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/detail/box_copy.hpp"
#include "core/detail/call_status.hpp"
#include "core/detail/layer_workers.hpp"
#include "core/detail/output.hpp"
#include "core/error.hpp"
#include "core/halo_exchange.hpp"
#include "core/sum_reduce.hpp"
#include "kernels/convolution.hpp"
#include "layers/conv_initial.hpp"
#include "layers/detail/balanced_split.hpp"
#include "layers/detail/one_world.hpp"
#include "layers/detail/parameter_shape.hpp"

namespace distdl {

namespace {

// Largest tensor rank (3 spatial dimensions) plus one word for the rank itself.
constexpr std::size_t shape_record_words = 6;
using shape_record = std::array<std::uint64_t, shape_record_words>;

// Whether every member of `p` is a member of one of `among`.
bool members_within(const partition& p, std::initializer_list<const partition*> among) {
    const std::vector<char> in = detail::world_membership(among);
    return std::all_of(p.members().begin(), p.members().end(), [&](int r) { return in[std::size_t(r)] != 0; });
}

// Whether every worker of both P_x and P_w has the same input-channel block and spatial position
// in both (a P_x worker sends its window only to the P_w workers at its own position).
bool positions_agree(const cartesian_partition& px, const cartesian_partition& pw) {
    std::vector<int> in_w(static_cast<std::size_t>(pw.world_comm()->size()), -1);
    for (std::size_t k = 0; k < pw.members().size(); ++k) in_w[static_cast<std::size_t>(pw.members()[k])] = int(k);
    for (std::size_t k = 0; k < px.members().size(); ++k) {
        const int w = in_w[static_cast<std::size_t>(px.members()[k])];
        if (w < 0) continue;
        const shape_t at_x = px.cartesian_index(int(k)), at_w = pw.cartesian_index(w);
        if (!std::equal(at_x.begin() + 1, at_x.end(), at_w.begin() + 1)) return false;
    }
    return true;
}

shape_record record_of(const shape_t& shape) {
    shape_record r{};
    r[0] = shape.size();
    for (std::size_t d = 0; d < shape.size() && d + 1 < shape_record_words; ++d) r[d + 1] = shape[d];
    return r;
}

std::string describe(const shape_record& r) {
    if (r[0] + 1 > shape_record_words) return "of rank " + std::to_string(r[0]);
    return format_piece_shape(
        std::vector<std::uint64_t>(r.begin() + 1, r.begin() + 1 + static_cast<std::ptrdiff_t>(r[0])));
}

// The workers of `p` at the given partition ranks, as a grid of `shape`; the same team (no new
// communicator) when the order is p's own.
cartesian_partition regrid(const cartesian_partition& p, const std::vector<int>& ranks, const shape_t& shape) {
    bool same_order = ranks.size() == static_cast<std::size_t>(p.size());
    for (std::size_t i = 0; same_order && i < ranks.size(); ++i) same_order = ranks[i] == static_cast<int>(i);
    if (same_order) return p.create_cartesian_topology_partition(shape);
    return p.create_partition_inclusive(ranks).create_cartesian_topology_partition(shape);
}

template <class T>
void append(std::vector<T>& out, const tensor<T>& t) {
    out.insert(out.end(), t.data(), t.data() + t.size());
}

}  // namespace

template <class T>
struct general_conv<T>::state {
    conv_kind kind;
    std::string layer;
    conv_spec spec;
    std::size_t dims = 0;
    cartesian_partition P_x, P_y, P_w;
    std::optional<cartesian_partition> P_x_team;  // P_x over its own communicator (P_x workers)
    std::shared_ptr<communicator> layer_comm;     // every worker of P_x, P_y, P_w (refusals only)
    // Per spatial dimension: the window holds its padding (the halo exchange pads it; the kernel
    // pads none). With any split dimension, every one: the window is then the kernel's whole
    // padded input, so the kernel needs no padded copy of its own.
    std::vector<bool> halo_dim;
    bool any_halo = false;
    bool x_identity = false, y_identity = false, param_identity = false;
    bool check_dy_on_P_y = false;  // P_y agrees on dy (else the halo's adjoint carries a refusal)
    // With input_shape given and no halo exchange: a refusal on one P_x worker reaches every
    // worker of the layer as a marker along P_co and a disagreement in the sum along P_ci (every
    // P_x worker is a P_w worker), so the P_x workers need no status all-reduce of their own.
    bool x_status_travels = false;
    // A wrong parameter shape on an owner (parameter_shape.hpp) reaches every worker of the layer
    // in the data, as a marker in the parameters' broadcast, a refused or marked window, dy or
    // sum, in forward / adjoint (the layouts for which build() shows it); otherwise the workers
    // agree on the parameters' shapes at the call's start (one all-reduce of two words).
    bool params_travel_forward = false, params_travel_adjoint = false;
    // Without input_shape, in the same configurations: a piece whose shape left the plan goes
    // out as a marker too (no status all-reduce per call); every worker of the layer then meets
    // in relayout(), the P_x workers plan again, and the forward runs once more.
    bool relayout_by_data = false;
    bool relayout_running = false;

    std::unique_ptr<broadcast<T>> share_params;  // owners -> P_w
    std::unique_ptr<broadcast<T>> share_x;       // P_x -> P_w (along P_co)
    std::unique_ptr<sum_reduce<T>> reduce_y;     // P_w (ordered ci, co, j) -> P_y
    std::unique_ptr<halo_exchange<T>> halo;      // P_x workers; built for the agreed global shape
    std::unique_ptr<kernels::convolution<T>> kernel;  // P_w workers
    // The kernel keeps its own copy of each forward's input (the direct engine): the window needs
    // no copy of its own for the backward pass, and a worker whose window is its own piece
    // (x_identity without a halo, or the source of its own copy along P_co) hands the kernel x.
    bool kernel_keeps_x = false;
    // With a halo, the window on this very worker's kernel and the kernel keeping its own copy:
    // the halo exchange leaves the window's own part out and the kernel reads it from the piece
    // (x_patch), so the piece is copied once, not into the window and again into the kernel.
    bool window_patched = false;
    shape_t window_shape;  // P_w: the shape of the last forward's window
    // This worker receives the sum of its own contribution (of y along P_ci; of the window
    // gradient along P_co): it computes its term straight into the output and the sum runs in
    // place there (no partial buffer, no copy of it).
    bool y_in_place = false, dx_in_place = false;

    // Layout learnt from the pieces, or given at construction (P_x workers).
    bool shape_given = false;
    bool planned = false;
    shape_t global_x_shape, own_x_shape;

    // This worker's blocks (P_w workers).
    std::size_t out_block = 0, in_block = 0;
    bool owns_weight = false, owns_bias = false, uses_bias = false;
    parameter<T> weight, bias;
    shape_t weight_block, bias_block;  // their shapes (the program may not change them)

    // Reused between calls.
    tensor<T> x_hat;          // P_x: the window (a copy of x kept for the weight gradient when P_x
                              // is P_w without a halo, unless the kernel keeps one)
    // Buffers whose lives do not overlap share one: y_partial is the contribution in the forward
    // and the received dy in the adjoint (the same shape); x_piece, when the kernel keeps its own
    // copy of it, is the window gradient in the adjoint (the window's shape).
    tensor<T> x_piece;        // P_w: the broadcast window
    tensor<T> y_partial;      // P_w: the contribution; in the adjoint the received dy
    tensor<T> w_use, b_use;   // P_w: the broadcast parameters
    tensor<T> packed, packed_in;  // weight and bias (or their gradients) in one flat tensor
    tensor<T> dx_partial, dx_hat;
    tensor<T> dw_partial, db_partial;
    tensor<T> empty{shape_t{0}}, marker{shape_t{0}};
    tensor<T> params_marker{shape_t{0, 0}};  // an owner's instead of its packed parameters (rank 2)
    tensor<T> poison{shape_t{1}, T(0)};      // a receiver's input that its broadcast refuses on every member
    std::vector<T> pack_buffer;
    bool forward_done = false;
    shape_t y_shape;  // P_y: output shape of the last forward

    state(conv_kind k, std::string name, conv_spec s, const cartesian_partition& px, const cartesian_partition& py,
          const cartesian_partition& pw)
        : kind(k), layer(std::move(name)), spec(std::move(s)), dims(spec.spatial_dims), P_x(px), P_y(py), P_w(pw) {}

    bool is_marker(const tensor<T>& t) const { return t.dimension() != dims + 2; }
    // Without a halo, whether the window is a copy of x (kept for the weight gradient).
    bool copies_x() const { return x_identity && !kernel_keeps_x; }

    void build(const cartesian_partition& px, const cartesian_partition& py, const cartesian_partition& pw);
    std::string agree_on_layout(const tensor<T>& x);
    void plan_layout(const shape_t& global);
    std::string check_given_piece(const tensor<T>& x) const;
    std::string agree_over_P_x(std::string problem);
    std::string prepare_window(const tensor<T>& x, bool& refused);
    [[noreturn]] void refuse(const std::string& own, const std::string& fallback) const;
    void relayout(const tensor<T>& x);
    shape_t empty_batch_window() const;
    shape_t window_for(std::size_t batch, std::size_t channels, const shape_t& global, const shape_t& grid,
                         const shape_t& at) const;
    shape_t local_output_shape(const tensor<T>& xin) const;
    void local_forward(const tensor<T>& xin, const tensor<T>& x, tensor<T>& out);
    void local_backward(const tensor<T>* xin, const tensor<T>& dy, tensor<T>& dx_out,
                        const kernels::dx_redirect<T>* redirect = nullptr);
    std::string check_parameters(bool with_grad) const;
    void pack(const tensor<T>& a, const tensor<T>* b);
    void unpack(const tensor<T>& flat, tensor<T>& a, tensor<T>* b) const;
};

template <class T>
void general_conv<T>::state::build(const cartesian_partition& px, const cartesian_partition& py,
                                   const cartesian_partition& pw) {
    const shape_t& w_grid = pw.shape();  // P_co x P_ci x P_1..P_D
    const std::size_t P_co = w_grid[0], P_ci = w_grid[1];
    halo_dim.assign(dims, false);
    for (std::size_t e = 0; e < dims; ++e) {
        halo_dim[e] = px.shape()[2 + e] > 1;
        any_halo = any_halo || halo_dim[e];
    }
    if (any_halo) halo_dim.assign(dims, true);
    param_identity = !any_halo;
    x_identity = px == pw;
    if (px.active()) P_x_team.emplace(partition::world(px.comm()).create_cartesian_topology_partition(px.shape()));
    layer_comm = detail::layer_workers_comm({&px, &py, &pw});

    // P_w ordered (ci, co, j): its reduction into P_y sums along P_ci. Worker (co, ci, j) of
    // P_w is rank (co * P_ci + ci) * spatial + j (row-major), j the spatial index flattened.
    const std::size_t spatial = volume(w_grid) / std::max<std::size_t>(P_co * P_ci, 1);
    shape_t by_input = w_grid;
    std::swap(by_input[0], by_input[1]);
    std::vector<int> order;
    order.reserve(volume(w_grid));
    for (std::size_t ci = 0; ci < P_ci; ++ci)
        for (std::size_t co = 0; co < P_co; ++co)
            for (std::size_t j = 0; j < spatial; ++j) order.push_back(static_cast<int>((co * P_ci + ci) * spatial + j));
    const cartesian_partition P_w_by_input = regrid(pw, order, by_input);
    y_identity = P_w_by_input == py;

    // Parameter owners: (co, ci, 0..0).
    shape_t owner_grid(dims + 2, 1);
    owner_grid[0] = P_co;
    owner_grid[1] = P_ci;
    if (!param_identity) {
        std::vector<int> owners;
        for (std::size_t f = 0; f < P_co * P_ci; ++f) owners.push_back(static_cast<int>(f * spatial));
        share_params = std::make_unique<broadcast<T>>(regrid(pw, owners, owner_grid), pw);
    }
    if (!x_identity) share_x = std::make_unique<broadcast<T>>(px, pw);
    if (!y_identity) reduce_y = std::make_unique<sum_reduce<T>>(P_w_by_input, py);
    y_in_place = reduce_y && reduce_y->sums_in_place();
    dx_in_place = share_x && share_x->sums_in_place();
    // Without P_y's own agreement, a bad dy on one worker must still reach every worker. With a
    // halo exchange and P_x = P_w it does: the marker goes along P_ci to P_w workers, which are
    // P_x workers, whose halo adjoint refuses on all of P_x = P_w together (also at batch 0,
    // where a status stands in for the exchange); enough when every P_y worker is one of them.
    check_dy_on_P_y = py.size() > 1 && !(any_halo && x_identity && members_within(py, {&px}));
    // Without a halo exchange, a refused dy also travels in the data: a marker along P_ci to its
    // row of P_w, then a disagreement in the sum along P_co that every P_w and P_x worker of it
    // sees (P_co > 1 whenever P_y has several workers). Enough when every P_y worker is among them.
    if (check_dy_on_P_y && !any_halo && share_x && members_within(py, {&pw, &px})) check_dy_on_P_y = false;
    if (!any_halo && reduce_y) x_status_travels = members_within(px, {&pw});
    // An owner's problem, forward: its (co, ci) row of P_w learns it from the parameters'
    // broadcast (or it is that row, without a halo); they spoil the window broadcasts of input
    // channel ci, so every co has a worker that knows; their marked terms spoil every sum into
    // P_y. So all of P_w and P_y learn it, and the P_x workers of channel ci; the others only when
    // they are among those. A worker can spoil the broadcast it receives only as its sender or a
    // receiver alone: not when it sends another position's window (positions_agree). Adjoint: its
    // row of (co, spatial index 0) learns it from the dy broadcast, spoils the window-gradient
    // sums of every ci (all of P_w at spatial index 0 and the P_x workers there learn it), the
    // halo exchange tells every P_x worker and the gradient sums to the owners every P_w worker;
    // the P_y workers of other rows learn it only when they are among those.
    params_travel_forward =
        positions_agree(px, pw) && (x_identity || P_ci == 1 || members_within(px, {&pw, &py}));
    params_travel_adjoint = py.size() == 1 || members_within(py, {&pw, &px});

    if (!pw.active()) return;
    const shape_t at = pw.index();
    out_block = balanced_size(spec.out_channels, P_co, at[0]);
    in_block = balanced_size(spec.in_channels, P_ci, at[1]);
    const std::size_t out_start = balanced_start(spec.out_channels, P_co, at[0]);
    const std::size_t in_start = balanced_start(spec.in_channels, P_ci, at[1]);
    bool spatial_zero = true;
    for (std::size_t e = 0; e < dims; ++e) spatial_zero = spatial_zero && at[2 + e] == 0;
    uses_bias = spec.bias && at[1] == 0;
    owns_weight = spatial_zero;
    owns_bias = uses_bias && spatial_zero;

    shape_t block_shape{out_block, in_block};
    block_shape.insert(block_shape.end(), spec.kernel_size.begin(), spec.kernel_size.end());
    const std::size_t kernel_volume = volume(spec.kernel_size);
    weight_block = block_shape;
    bias_block = shape_t{out_block};
    if (owns_weight) {
        weight.name = "weight";
        weight.value = tensor<T>(block_shape);
        weight.grad = xt::zeros<T>(block_shape);
        for (std::size_t o = 0; o < out_block; ++o)
            for (std::size_t i = 0; i < in_block; ++i)
                for (std::size_t t = 0; t < kernel_volume; ++t)
                    weight.value.data()[(o * in_block + i) * kernel_volume + t] = static_cast<T>(conv_initial_weight(
                        spec, ((out_start + o) * spec.in_channels + in_start + i) * kernel_volume + t));
    }
    if (owns_bias) {
        bias.name = "bias";
        bias.value = tensor<T>(shape_t{out_block});
        bias.grad = xt::zeros<T>(shape_t{out_block});
        for (std::size_t o = 0; o < out_block; ++o) bias.value(o) = static_cast<T>(conv_initial_bias(spec, out_start + o));
    }
    w_use = tensor<T>(block_shape);
    b_use = tensor<T>(shape_t{uses_bias ? out_block : 0});
    dw_partial = tensor<T>(block_shape);
    db_partial = tensor<T>(shape_t{uses_bias ? out_block : 0});

    kernels::conv_geometry g;
    g.in_channels = in_block;
    g.out_channels = out_block;
    g.kernel_size = spec.kernel_size;
    g.stride = spec.stride;
    g.dilation = spec.dilation;
    g.padding = spec.padding;
    for (std::size_t e = 0; e < dims; ++e)
        if (halo_dim[e]) g.padding[e] = 0;  // the window holds its padding
    g.bias = uses_bias;
    // With input_shape given, this worker's window shape (the kernel's engine depends on it).
    shape_t planned_window;
    if (spec.input_shape)
        planned_window = window_for((*spec.input_shape)[0], in_block, *spec.input_shape, w_grid, at);
    kernel = std::make_unique<kernels::convolution<T>>(g, kernels::conv_engine::automatic, planned_window);
    kernel_keeps_x = kernel->retains_input();
    window_patched = any_halo && x_identity && kernel_keeps_x;
}

// Collective over P_x: every worker's piece shape; on all of them the same verdict (empty when
// the pieces are the balanced split of one N x C_in x L.. tensor that the kernel fits), and
// then the global shape and, with spatial partitioning, a halo exchange planned for it.
template <class T>
std::string general_conv<T>::state::agree_on_layout(const tensor<T>& x) {
    planned = false;
    const auto all = P_x_team->allgather_data(record_of(shape_of(x)));
    const shape_t& grid = P_x.shape();
    std::ostringstream problem;
    auto worker = [&](std::size_t w) {
        return "x on P_x " + P_x.worker_name(w);
    };
    const std::size_t per_channel_index = volume(shape_t(grid.begin() + 2, grid.end()));  // row-major
    for (std::size_t w = 0; w < all.size(); ++w) {
        const std::size_t channels = balanced_size(spec.in_channels, grid[1], w / per_channel_index % grid[1]);
        if (all[w][0] != dims + 2 || all[w][2] != channels) {
            problem << layer << ": " << worker(w) << " has shape " << describe(all[w]) << ", expected [batch, "
                    << channels << ", " << dims << " spatial extent" << (dims == 1 ? "" : "s") << "]";
            return problem.str();
        }
        if (all[w][1] != all[0][1]) {
            problem << layer << ": " << worker(w) << " has batch " << all[w][1] << ", expected " << all[0][1]
                    << " (the batch of P_x worker 0)";
            return problem.str();
        }
    }
    shape_t global{all[0][1], spec.in_channels};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t d = 2 + e;
        const auto split = detail::check_balanced_split(grid, d, [&](std::size_t w) { return all[w][1 + d]; });
        const std::size_t length = split.length;
        if (!split.balanced()) {
            problem << layer << ": " << worker(split.off) << " has shape " << describe(all[split.off])
                    << ", but the pieces along spatial dimension " << e << " are not "
                    << detail::unbalanced_reason(split);
            return problem.str();
        }
        const std::size_t k = spec.kernel_size[e], s = spec.stride[e], p = spec.padding[e], dil = spec.dilation[e];
        if (kernel_output_length(length, k, s, p, dil) == 0) {
            problem << layer << ": the kernel does not fit in spatial dimension " << e << ": extent " << length
                    << " + 2*padding " << p << " < dilation " << dil << " * (kernel_size " << k << " - 1) + 1 = "
                    << dil * (k - 1) + 1;
            return problem.str();
        }
        global.push_back(length);
    }
    try {
        checked_volume(spec.output_shape(global), layer + ": output shape");
    } catch (const invalid_argument& e) {
        return e.what();
    }
    plan_layout(global);
    return {};
}

// P_x workers: the global shape, this worker's piece of it and, with spatial partitioning, a
// halo exchange planned for it (collective over P_x).
template <class T>
void general_conv<T>::state::plan_layout(const shape_t& global) {
    global_x_shape = global;
    own_x_shape = shape_t(global.size());
    for (std::size_t d = 0; d < global.size(); ++d)
        own_x_shape[d] = balanced_size(global[d], P_x.shape()[d], P_x.index()[d]);
    halo.reset();
    if (any_halo && global[0] > 0) {
        kernel_geometry g{shape_t(dims + 2, 1), shape_t(dims + 2, 1), shape_t(dims + 2, 0), shape_t(dims + 2, 1)};
        for (std::size_t e = 0; e < dims; ++e) {
            if (!halo_dim[e]) continue;
            g.kernel_size[2 + e] = spec.kernel_size[e];
            g.stride[2 + e] = spec.stride[e];
            g.padding[2 + e] = spec.padding[e];
            g.dilation[2 + e] = spec.dilation[e];
        }
        halo = std::make_unique<halo_exchange<T>>(*P_x_team, global, g);
    }
    planned = true;
}

// With input_shape given: this worker's problem with its piece (empty when it is the planned one).
template <class T>
std::string general_conv<T>::state::check_given_piece(const tensor<T>& x) const {
    if (has_shape(x, own_x_shape)) return {};
    std::ostringstream problem;
    problem << layer << ": x on P_x " << P_x.worker_name() << " has shape " << format_piece_shape(shape_of(x))
            << ", expected " << format_list(own_x_shape) << " (its piece of input_shape "
            << format_list(global_x_shape) << ")";
    return problem.str();
}

// Collective over P_x: the lowest-ranked worker's problem on every P_x worker (empty: none).
template <class T>
std::string general_conv<T>::state::agree_over_P_x(std::string problem) {
    if (P_x.size() == 1) return problem;
    try {
        detail::agree_on_call(*P_x.comm(), problem, false);
    } catch (const invalid_argument& e) {
        if (problem.empty()) problem = e.what();
    }
    return problem;
}

// P_x workers: the window this worker's input contributes (x_hat, or x itself), or a refusal
// that every P_x worker shares (`refused`), with its reason when this worker knows it.
template <class T>
std::string general_conv<T>::state::prepare_window(const tensor<T>& x, bool& refused) {
    refused = false;
    if (shape_given) {
        std::string problem = check_given_piece(x);
        if (halo) {  // its per-call status refuses a piece off the plan on every P_x worker
            try {
                halo->forward_kept(problem.empty() ? x : marker, x_hat, window_patched);
                return {};
            } catch (const invalid_argument&) {
                refused = true;  // the reason: this worker's, or (empty) another's, told in refuse()
                return problem;
            }
        }
        if (!x_status_travels) problem = agree_over_P_x(problem);
        refused = !problem.empty();
        if (!problem.empty()) return problem;
        if (any_halo) detail::prepare_output(x_hat, empty_batch_window());  // batch 0: nothing to exchange
        else if (copies_x()) detail::copy_into(x, x_hat);  // kept for the weight gradient
        return {};
    }
    if (any_halo) {
        // The halo exchange notices (on every P_x worker) any piece that differs from its plan.
        if (halo) {
            try {
                halo->forward_kept(x, x_hat, window_patched);
                return {};
            } catch (const invalid_argument&) {
            }
        }
        const std::string problem = agree_on_layout(x);
        refused = !problem.empty();
        if (!problem.empty()) return problem;
        if (halo) halo->forward_kept(x, x_hat, window_patched);
        else detail::prepare_output(x_hat, empty_batch_window());  // batch 0: nothing to exchange
        return {};
    }
    bool changed = !planned || !has_shape(x, own_x_shape);
    if (relayout_by_data) {
        // A marker: relayout() follows on every worker of the layer (and plans for this very x).
        refused = changed && !relayout_running;
        if (refused) return {};
        changed = false;
    } else if (P_x.size() > 1) {
        changed = detail::agree_on_call(*P_x.comm(), {}, changed);
    }
    if (changed) {
        const std::string problem = agree_on_layout(x);
        refused = !problem.empty();
        if (!problem.empty()) return problem;
    }
    if (copies_x()) detail::copy_into(x, x_hat);  // kept for the weight gradient
    return {};
}

// Error path only, reached by every worker of the layer together (the refusal travelled to each
// of them in the data): the lowest-ranked worker that knows why (`own` non-empty) tells every
// other, so all throw the same message naming the worker and the problem.
template <class T>
void general_conv<T>::state::refuse(const std::string& own, const std::string& fallback) const {
    detail::agree_on_call(*layer_comm, own, false, detail::first_problem);
    throw invalid_argument(fallback);  // nobody knew why (not expected)
}

// Every worker of the layer, after a marker from a piece off the plan (relayout_by_data): the P_x
// workers agree on the layout (collective over P_x) and tell its verdict to the whole layer; a
// refusal throws on every worker with the reason.
template <class T>
void general_conv<T>::state::relayout(const tensor<T>& x) {
    std::string problem;
    if (P_x.active()) problem = agree_on_layout(x);
    detail::agree_on_call(*layer_comm, problem, false, detail::first_problem);
}

// This worker's window for a batch of 0 (the halo exchange refuses an empty batch dimension).
template <class T>
shape_t general_conv<T>::state::empty_batch_window() const {
    return window_for(0, own_x_shape[1], global_x_shape, P_x.shape(), P_x.index());
}

// The window (batch x channels x spatial) of the worker at `at` of a grid whose spatial
// dimensions are P_x's, for the global input shape `global`: in a dimension with a halo, the
// input its block of outputs reads; elsewhere the whole length.
template <class T>
shape_t general_conv<T>::state::window_for(std::size_t batch, std::size_t channels, const shape_t& global,
                                             const shape_t& grid, const shape_t& at) const {
    shape_t shape{batch, channels};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t n = global[2 + e];
        if (!halo_dim[e]) {
            shape.push_back(n);
            continue;
        }
        const std::size_t k = spec.kernel_size[e], s = spec.stride[e], dil = spec.dilation[e];
        const std::size_t m = kernel_output_length(n, k, s, spec.padding[e], dil);
        const std::size_t a = balanced_start(m, grid[2 + e], at[2 + e]), b = balanced_stop(m, grid[2 + e], at[2 + e]);
        shape.push_back(b > a ? s * (b - 1 - a) + dil * (k - 1) + 1 : 0);
    }
    return shape;
}

// The shape of this P_w worker's contribution for window `xin`; an empty window (an empty
// output block) gives extent 0.
template <class T>
shape_t general_conv<T>::state::local_output_shape(const tensor<T>& xin) const {
    shape_t out{xin.shape()[0], out_block};
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t n = xin.shape()[2 + e];
        const std::size_t pad = halo_dim[e] ? 0 : spec.padding[e];
        out.push_back(n == 0 && halo_dim[e] ? 0
                                            : kernel_output_length(n, spec.kernel_size[e], spec.stride[e], pad,
                                                                   spec.dilation[e]));
    }
    return out;
}

// `x`: this worker's piece, read in place of the window's own part when window_patched.
template <class T>
void general_conv<T>::state::local_forward(const tensor<T>& xin, const tensor<T>& x, tensor<T>& out) {
    const shape_t shape = local_output_shape(xin);
    window_shape = shape_of(xin);
    if (volume(shape) == 0) {
        detail::prepare_output(out, shape);
        return;
    }
    const tensor<T>& w = param_identity ? weight.value : w_use;
    const tensor<T>* b = uses_bias ? (param_identity ? &bias.value : &b_use) : nullptr;
    kernels::x_patch<T> own;
    const bool patched =
        window_patched && halo && &xin == &x_hat && halo->own_part(own.start, own.source_start, own.extent);
    if (patched) own.source = x.data(), own.source_shape = shape_of(x);
    kernel->forward(xin, w, b, out, patched ? &own : nullptr);
}

// dx_out (overwritten) and dw_partial, db_partial (overwritten) for the last forward's window:
// `xin` (untouched since: the kernel reuses its converted copy), or null when the kernel keeps
// its own copy.
template <class T>
void general_conv<T>::state::local_backward(const tensor<T>* xin, const tensor<T>& dy, tensor<T>& dx_out,
                                            const kernels::dx_redirect<T>* redirect) {
    dw_partial.fill(T(0));
    db_partial.fill(T(0));
    if (dy.size() == 0) {  // nothing reaches y: no gradient
        detail::prepare_output(dx_out, window_shape);
        dx_out.fill(T(0));
        if (redirect)
            detail::fill_box(redirect->target, redirect->target_shape, redirect->target_start, redirect->extent, T(0));
        return;
    }
    const tensor<T>& w = param_identity ? weight.value : w_use;
    tensor<T>* db = uses_bias ? &db_partial : nullptr;
    if (xin) kernel->backward(*xin, dy, w, dx_out, dw_partial, db, redirect);
    else kernel->backward_last(dy, w, dx_out, dw_partial, db, redirect);
}

// Every worker of the layer, at a call's start: this owner's problem with its parameters (and in
// the adjoint their gradients), to be spread in the data; or, where the data cannot reach every
// worker, an agreement that refuses the call on all of them with the lowest-ranked owner's reason
// (then it returns empty).
template <class T>
std::string general_conv<T>::state::check_parameters(bool with_grad) const {
    std::string problem;
    if (owns_weight)
        problem = detail::owner_problem(layer, "P_w", P_w, weight, weight_block, owns_bias ? &bias : nullptr,
                                        bias_block, with_grad);
    const bool travels = with_grad ? params_travel_adjoint : params_travel_forward;
    if (!travels && layer_comm) detail::agree_on_call(*layer_comm, problem, false, detail::first_problem);
    return problem;
}

template <class T>
void general_conv<T>::state::pack(const tensor<T>& a, const tensor<T>* b) {
    pack_buffer.clear();
    append(pack_buffer, a);
    if (b) append(pack_buffer, *b);
    detail::prepare_output(packed, shape_t{pack_buffer.size()});
    std::copy(pack_buffer.begin(), pack_buffer.end(), packed.data());
}

template <class T>
void general_conv<T>::state::unpack(const tensor<T>& flat, tensor<T>& a, tensor<T>* b) const {
    const std::size_t want = a.size() + (b ? b->size() : 0);
    DISTDL_REQUIRE(flat.dimension() == 1 && flat.size() == want,
                   layer << ": internal error: " << flat.size() << " packed parameter values, expected " << want);
    std::copy(flat.data(), flat.data() + a.size(), a.data());
    if (b) std::copy(flat.data() + a.size(), flat.data() + want, b->data());
}

template <class T>
general_conv<T>::general_conv(std::size_t spatial_dims, const cartesian_partition& P_x, const cartesian_partition& P_y,
                              const cartesian_partition& P_w, std::size_t in_channels, std::size_t out_channels,
                              conv_options options)
    : general_conv(conv_kind::general, spatial_dims, P_x, P_y, P_w, in_channels, out_channels, std::move(options)) {}

template <class T>
general_conv<T>::general_conv(conv_kind kind, std::size_t spatial_dims, const cartesian_partition& P_x,
                              const cartesian_partition& P_y, const cartesian_partition& P_w, std::size_t in_channels,
                              std::size_t out_channels, conv_options options) {
    const std::string layer = conv_layer_name(conv_family(kind), spatial_dims);
    require_one_world(layer, P_x, {{"P_y", &P_y}, {"P_w", &P_w}});
    // First, before anything that could fail on some workers only: the same arguments everywhere.
    detail::argument_agreement(layer)
        .element_type(dtype_of<T>())
        .number("spatial dimensions", spatial_dims)
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y.shape())
        .list("P_w shape", P_w.shape())
        .number("in_channels", in_channels)
        .number("out_channels", out_channels)
        .list("kernel_size", options.kernel_size)
        .list("stride", options.stride)
        .list("padding", options.padding)
        .list("dilation", options.dilation)
        .flag("bias", options.bias)
        .number("seed", options.seed)
        .flag("input_shape given", options.input_shape.has_value())
        .list("input_shape", options.input_shape.value_or(shape_t{}))
        .require(*P_x.world_comm());
    auto spec = normalize_conv_options(layer, spatial_dims, in_channels, out_channels, options);
    require_conv_partitions(kind, layer, spatial_dims, P_x, P_y, P_w);
    this->set_partitions(&P_x, &P_y);
    state_ = std::unique_ptr<state>(new state(kind, layer, std::move(spec), P_x, P_y, P_w));
    state_->build(P_x, P_y, P_w);
    state_->relayout_by_data = !state_->spec.input_shape && state_->x_status_travels;
    if (state_->spec.input_shape && P_x.active()) {
        state_->shape_given = true;
        state_->plan_layout(*state_->spec.input_shape);
    }
}

template <class T>
general_conv<T>::~general_conv() = default;

template <class T>
std::vector<parameter<T>*> general_conv<T>::parameters() {
    std::vector<parameter<T>*> owned;
    if (state_->owns_weight) owned.push_back(&state_->weight);
    if (state_->owns_bias) owned.push_back(&state_->bias);
    return owned;
}

template <class T>
const std::string& general_conv<T>::name() const {
    return state_->layer;
}

template <class T>
conv_kind general_conv<T>::kind() const {
    return state_->kind;
}

template <class T>
const conv_spec& general_conv<T>::spec() const {
    return state_->spec;
}

template <class T>
void general_conv<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    auto& st = *state_;
    st.forward_done = false;
    const std::string own_problem = st.check_parameters(false);
    bool params_refused = !own_problem.empty();  // this worker knows of a wrong parameter shape

    // 1. Parameters from their owners to all of P_w.
    if (st.share_params) {
        const bool owner = st.owns_weight;
        if (owner && !params_refused) st.pack(st.weight.value, st.owns_bias ? &st.bias.value : nullptr);
        st.share_params->forward(owner ? (params_refused ? st.params_marker : st.packed) : st.empty, st.packed_in);
        if (st.P_w.active()) {
            if (st.packed_in.dimension() != 1) params_refused = true;
            else st.unpack(st.packed_in, st.w_use, st.uses_bias ? &st.b_use : nullptr);
        }
    }

    // 2. The windows on P_x (or an agreed refusal).
    std::string refusal;
    bool refused = false;
    const tensor<T>* window = &st.empty;
    if (st.P_x.active()) {
        refusal = st.prepare_window(x, refused);
        window = refused ? &st.marker : (st.any_halo || st.copies_x()) ? &st.x_hat : &x;
    }

    // 3. Windows along P_co (a worker that is the source of its own copy uses its window in
    // place when the kernel keeps its own copy for the backward pass). A worker that knows of a
    // wrong parameter shape spoils its broadcast: a marker as its window, or as a receiver an
    // input, which the broadcast refuses on every member.
    bool upstream_refused = false;
    if (params_refused) window = st.P_x.active() ? &st.marker : &st.poison;
    const tensor<T>* xin = window;
    if (st.share_x) {
        try {
            if (!st.kernel_keeps_x) st.share_x->forward(*window, st.x_piece);
            if (!st.kernel_keeps_x || st.share_x->forward_unless_own(*window, st.x_piece)) xin = &st.x_piece;
        } catch (const invalid_argument&) {
            if (!st.params_travel_forward) throw;
            upstream_refused = true;  // spoilt by a worker that knows of a wrong parameter shape
            xin = &st.marker;
        }
    }

    // 4. Local convolution; 5. sum along P_ci into P_y (straight into y when that is the identity).
    const tensor<T>* contribution = &st.empty;
    if (st.P_w.active()) {
        if (params_refused || st.is_marker(*xin)) {
            upstream_refused = true;
            contribution = &st.marker;
        } else {
            tensor<T>& out = st.y_identity || st.y_in_place ? y : st.y_partial;
            st.local_forward(*xin, x, out);
            contribution = &out;
        }
    }
    if (st.reduce_y) {
        try {
            if (contribution == &y) st.reduce_y->forward_in_place(y);
            else st.reduce_y->forward(*contribution, y);
        } catch (const invalid_argument&) {
            // Contributions of different shapes: a refusal on some P_x worker (x_status_travels)
            // or a wrong parameter shape
            if (!st.x_status_travels && !st.params_travel_forward) throw;
            upstream_refused = true;
        }
    } else if (!st.P_w.active() || upstream_refused) detail::prepare_output(y, shape_t{0});
    if (st.P_y.active() && st.is_marker(y)) upstream_refused = true;

    const bool failed = refused || upstream_refused || params_refused;
    if (failed && st.relayout_by_data && !st.relayout_running) {
        st.relayout(x);  // throws on every worker of the layer when the pieces do not fit
        st.relayout_running = true;
        try {
            do_forward(x, y);
        } catch (...) {
            st.relayout_running = false;
            throw;
        }
        st.relayout_running = false;
        return;
    }
    if (failed)
        st.refuse(own_problem.empty() ? refusal : own_problem,
                  st.layer + ": forward refused because the input on P_x is invalid");
    if (st.P_y.active()) st.y_shape = shape_of(y);
    else detail::prepare_output(y, shape_t{0});
    st.forward_done = true;
}

template <class T>
void general_conv<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    auto& st = *state_;
    const bool takes_part = st.P_x.active() || st.P_y.active() || st.P_w.active();
    DISTDL_REQUIRE(st.forward_done || !takes_part,
                   st.layer << ": adjoint() needs a successful forward() first (it uses that input)");
    const std::string own_problem = st.check_parameters(true);
    const bool params_refused = !own_problem.empty();  // this worker's parameters or gradients

    // The output gradient must have the shape of the last output (agreed over P_y when needed).
    std::string refusal;
    const tensor<T>* sent = &st.empty;
    if (st.P_y.active()) {
        if (!has_shape(dy, st.y_shape)) {
            std::ostringstream problem;
            problem << st.layer << ": dy on P_y " << st.P_y.worker_name() << " has shape "
                    << format_piece_shape(shape_of(dy)) << ", expected " << format_list(st.y_shape)
                    << " (the shape of its output in the last forward)";
            refusal = problem.str();
        }
        if (st.check_dy_on_P_y) {
            try {
                detail::agree_on_call(*st.P_y.comm(), refusal, false);
            } catch (const invalid_argument& e) {
                refusal = e.what();
            }
        }
        sent = refusal.empty() && !params_refused ? &dy : &st.marker;
    } else if (params_refused) {
        sent = &st.poison;  // a receiver's input: its broadcast of dy refuses on every member
    }

    // dy along P_ci (a worker that holds dy itself uses it in place: no copy).
    bool upstream_refused = false, own_part_placed = false;
    const tensor<T>* dyp = sent;
    try {
        if (st.reduce_y && st.reduce_y->adjoint_unless_own(*sent, st.y_partial)) dyp = &st.y_partial;
    } catch (const invalid_argument&) {
        if (!st.params_travel_adjoint) throw;
        upstream_refused = true;  // spoilt by a worker that knows of a wrong parameter shape
        dyp = &st.marker;
    }

    // Without a halo the window gradient is the piece's: it goes straight into dx (no copy, and
    // the caller's buffer is reused from call to call).
    const bool window_is_dx = !st.any_halo && st.P_x.active();

    // Local backward. With a halo and the window on this very worker, the part of the window
    // gradient that is this worker's own piece goes straight into dx (no copy in the halo's
    // adjoint).
    tensor<T>* dx_contribution = &st.empty;
    if (st.P_w.active()) {
        if (params_refused || st.is_marker(*dyp)) {
            upstream_refused = true;
            dx_contribution = &st.marker;
        } else {
            // The window gradient's own buffer: the received window's, when the kernel does not read it.
            tensor<T>& partial = st.share_x && st.kernel_keeps_x ? st.x_piece : st.dx_partial;
            if (!st.share_x) dx_contribution = window_is_dx ? &dx : &partial;
            else if (st.dx_in_place) dx_contribution = window_is_dx ? &dx : &st.dx_hat;  // summed in place
            else dx_contribution = &partial;
            kernels::dx_redirect<T> own;
            if (st.halo && !st.share_x && st.P_x.active() &&
                st.halo->own_part(own.start, own.target_start, own.extent)) {
                detail::prepare_output(dx, st.own_x_shape);
                own.target = dx.data();
                own.target_shape = st.own_x_shape;
                own_part_placed = true;
            }
            st.local_backward(st.kernel_keeps_x ? nullptr : st.share_x ? &st.x_piece : &st.x_hat, *dyp,
                              *dx_contribution, own_part_placed ? &own : nullptr);
        }
    }

    // Window gradients along P_co into P_x, then the halo exchange's adjoint.
    tensor<T>* dx_window = dx_contribution;
    if (st.share_x) {
        dx_window = window_is_dx ? &dx : &st.dx_hat;
        try {
            if (dx_contribution == dx_window) st.share_x->adjoint_in_place(*dx_window);
            else st.share_x->adjoint(*dx_contribution, *dx_window);
        } catch (const invalid_argument&) {
            // Window gradients and markers in one sum: a refused dy on some P_y worker (above)
            // or a wrong parameter shape
            if (st.check_dy_on_P_y && !st.params_travel_adjoint) throw;
            upstream_refused = true;
        }
    }
    if (st.P_x.active()) {
        if (st.is_marker(*dx_window)) upstream_refused = true;
        if (st.any_halo) {
            // Every P_x worker takes part; a marker is refused on all of them together.
            try {
                if (st.halo && own_part_placed && !upstream_refused) {
                    st.halo->adjoint_own_part_placed(*dx_window, dx);
                } else if (st.halo) {
                    st.halo->adjoint(upstream_refused ? st.marker : *dx_window, dx);
                } else {  // batch 0: no exchange, but the same agreement on a refusal
                    detail::agree_on_call(*st.P_x.comm(), upstream_refused ? "refused" : "", false);
                    detail::prepare_output(dx, st.own_x_shape);
                }
            } catch (const invalid_argument&) {
                upstream_refused = true;
            }
        }
    }

    // Parameter gradients to their owners; a worker that knows of a failure sends a marker, so
    // that every P_w worker knows the outcome after it (the workers away from spatial index 0
    // learn a wrong parameter shape only here).
    bool failed = !refusal.empty() || upstream_refused || params_refused;
    if (st.P_w.active() && st.share_params) {
        if (!failed) st.pack(st.dw_partial, st.uses_bias ? &st.db_partial : nullptr);
        try {
            st.share_params->adjoint(failed ? st.params_marker : st.packed, st.packed_in);
        } catch (const invalid_argument&) {
            failed = true;  // gradients and markers in one sum
        }
        if (st.owns_weight && !failed) {
            if (st.packed_in.dimension() != 1) failed = true;
            else st.unpack(st.packed_in, st.dw_partial, st.owns_bias ? &st.db_partial : nullptr);
        }
    }
    if (!failed && st.owns_weight) st.weight.grad += st.dw_partial;
    if (!failed && st.owns_bias) st.bias.grad += st.db_partial;

    if (failed)
        st.refuse(own_problem.empty() ? refusal : own_problem,
                  st.layer + ": adjoint refused because the output gradient on P_y is invalid");
    if (!st.P_x.active()) detail::prepare_output(dx, shape_t{0});
}

template class general_conv<float>;
template class general_conv<double>;

}  // namespace distdl
