#include "core/repartition.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "core/box_copy.hpp"
#include "core/decomposition.hpp"
#include "core/error.hpp"
#include "core/detail/argument_agreement.hpp"

// How it works. Every worker of the world builds the module; only the workers of the union
// of P_x and P_y take part in a call. Each call first all-gathers the local input shapes over
// the union (one small record per worker), from which every union worker derives the same
// global shape, the box each P_x worker owns and the balanced box of each P_y worker. A P_x
// worker then sends each P_y worker the overlap of the two boxes (packed once into one buffer
// per call), and a worker in both partitions copies its own overlap locally. The plan is
// cached and rebuilt only when the gathered shapes change; buffers are reused across calls.

namespace distdl {

namespace {

// Tensors of higher rank are refused (the shape record has a fixed size so that one
// all-gather of fixed length carries every shape).
constexpr std::size_t max_rank = 16;

// What one union worker contributes to the shape exchange.
struct shape_record {
    std::uint64_t rank = 0;  // rank of its local input
    std::uint64_t extent[max_rank] = {};
};

bool same_records(const std::vector<shape_record>& a, const std::vector<shape_record>& b) {
    return a.size() == b.size() &&
           (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(shape_record)) == 0);
}

std::string record_shape(const shape_record& r) {
    std::ostringstream out;
    out << '[';
    for (std::size_t d = 0; d < std::min<std::uint64_t>(r.rank, max_rank); ++d) out << (d ? "," : "") << r.extent[d];
    if (r.rank > max_rank) out << ",...";
    out << ']';
    return out.str();
}

int index_of(const std::vector<int>& list, int value) {
    auto it = std::find(list.begin(), list.end(), value);
    return it == list.end() ? -1 : static_cast<int>(it - list.begin());
}

shape_t start_relative(const index_box& box, const index_box& origin) { return relative_to(box, origin).start; }

// Zero-volume result of a worker outside both partitions: it never learns the global shape,
// so it keeps the batch extent of its own (zero-volume) argument.
template <class T>
tensor<T> outside_result(const tensor<T>& arg, bool preserve_batch) {
    const bool keep = preserve_batch && arg.dimension() >= 2;
    return zero_volume<T>(keep ? arg.shape()[0] : 0, keep);
}

}  // namespace

template <class T>
struct repartition<T>::state {
    cartesian_partition P_x;
    cartesian_partition P_y;
    partition P_union;
    repartition_options options;
    std::vector<int> x_to_union;  // union rank of each P_x worker
    std::vector<int> y_to_union;  // union rank of each P_y worker
    int x_rank = -1;              // this worker in P_x / P_y (-1 when not a member)
    int y_rank = -1;

    // One overlap between this worker's box and a peer's box. `start` is relative to this
    // worker's own box (its input box for to_y, its output box for from_x), which is where
    // the region lives locally in both directions.
    struct transfer {
        int peer;  // union rank
        shape_t start;
        shape_t extent;
        std::size_t offset;  // into the buffer of its list
        std::size_t count;
    };

    // The plan of the last forward (also what adjoint reverses).
    bool planned = false;
    std::vector<shape_record> records;
    shape_t global_shape;
    index_box in_box, out_box;    // this worker's input and output boxes (when a member)
    shape_t in_shape, out_shape;
    std::vector<transfer> to_y;   // forward sends: my input box ∩ each other P_y worker's box
    std::vector<transfer> from_x; // forward receives: each other P_x worker's box ∩ my output box
    std::size_t to_y_volume = 0, from_x_volume = 0;
    bool self_overlap = false;
    shape_t self_in_start, self_out_start, self_extent;  // my own overlap, in both boxes

    std::vector<T> to_y_buffer, from_x_buffer;
    std::vector<request> requests;

    state(const cartesian_partition& px, const cartesian_partition& py, repartition_options opts)
        : P_x(px), P_y(py), P_union(px.create_partition_union(py)), options(opts) {}

    void exchange_and_plan(const tensor<T>& x);
    void build_plan();
    void move(bool forward, const T* src, T* dst);
};

template <class T>
void repartition<T>::state::exchange_and_plan(const tensor<T>& x) {
    shape_record mine;
    if (x_rank >= 0) {
        mine.rank = x.dimension();
        for (std::size_t d = 0; d < std::min(x.dimension(), max_rank); ++d) mine.extent[d] = x.shape()[d];
    }
    std::vector<shape_record> gathered;
    {
        // Metadata, labelled apart from the data so that traffic counts show what moved.
        traffic_scope scope(P_union.world_comm()->traffic(), "repartition.shapes");
        gathered = P_union.allgather_data(mine);
    }
    if (planned && same_records(gathered, records)) return;
    records = std::move(gathered);
    planned = false;
    build_plan();
    planned = true;
}

// Everything here is computed from the gathered records only, so every union worker reaches
// the same verdict: an error is thrown identically on all of them.
template <class T>
void repartition<T>::state::build_plan() {
    const std::size_t dim = P_x.dim();
    const shape_t& px = P_x.shape();
    const shape_t& py = P_y.shape();
    const auto describe = [&]() {
        return "Repartition from P_x shape " + format_list(px) + " to P_y shape " + format_list(py);
    };

    // Per dimension, the extent held at each P_x index along it (consistent across the
    // workers sharing that index, or the pieces do not tile a global tensor).
    std::vector<std::vector<std::uint64_t>> extent(dim);
    std::vector<std::vector<int>> owner(dim);
    for (std::size_t d = 0; d < dim; ++d) {
        extent[d].assign(px[d], 0);
        owner[d].assign(px[d], -1);
    }
    for (int r = 0; r < P_x.size(); ++r) {
        const shape_record& rec = records[static_cast<std::size_t>(x_to_union[static_cast<std::size_t>(r)])];
        DISTDL_REQUIRE(rec.rank == dim, describe() << ": the tensor must have rank " << dim << ", but worker " << r
                                                   << " of P_x holds local shape " << record_shape(rec)
                                                   << " (rank " << rec.rank << ")");
        const shape_t c = unravel_index(static_cast<std::size_t>(r), px);  // row-major, as the partition
        for (std::size_t d = 0; d < dim; ++d) {
            int& first = owner[d][c[d]];
            if (first < 0) {
                first = r;
                extent[d][c[d]] = rec.extent[d];
                continue;
            }
            const shape_record& other = records[static_cast<std::size_t>(x_to_union[static_cast<std::size_t>(first)])];
            DISTDL_REQUIRE(rec.extent[d] == extent[d][c[d]],
                           describe() << ": local input shapes do not assemble into a global tensor: workers "
                                      << first << " and " << r << " of P_x share index " << c[d]
                                      << " in dimension " << d << " but hold local shapes " << record_shape(other)
                                      << " and " << record_shape(rec) << " (dimension " << d << ": "
                                      << other.extent[d] << " vs " << rec.extent[d] << ")");
        }
    }

    std::vector<shape_t> offset(dim);
    global_shape.assign(dim, 0);
    for (std::size_t d = 0; d < dim; ++d) {
        offset[d].assign(px[d] + 1, 0);
        for (std::size_t i = 0; i < px[d]; ++i) offset[d][i + 1] = offset[d][i] + extent[d][i];
        global_shape[d] = offset[d][px[d]];
    }
    for (std::size_t d = 0; d < dim; ++d)
        DISTDL_REQUIRE(!(global_shape[d] == 1 && py[d] > 1),
                       describe() << ": global tensor shape " << format_list(global_shape)
                                  << " has extent 1 in dimension " << d << ", which cannot be split over "
                                  << py[d] << " workers of P_y");

    const auto x_box = [&](int r) {
        const shape_t c = unravel_index(static_cast<std::size_t>(r), px);
        index_box b{shape_t(dim), shape_t(dim)};
        for (std::size_t d = 0; d < dim; ++d) {
            b.start[d] = offset[d][c[d]];
            b.stop[d] = offset[d][c[d] + 1];
        }
        return b;
    };
    const auto y_box = [&](int r) { return balanced_box(global_shape, py, unravel_index(static_cast<std::size_t>(r), py)); };

    to_y.clear();
    from_x.clear();
    to_y_volume = from_x_volume = 0;
    self_overlap = false;
    const int me = P_union.rank();
    if (x_rank >= 0) {
        in_box = x_box(x_rank);
        in_shape = in_box.extent();
        for (int r = 0; r < P_y.size(); ++r) {
            const int peer = y_to_union[static_cast<std::size_t>(r)];
            const index_box overlap = intersect(in_box, y_box(r));
            if (overlap.empty()) continue;
            if (peer == me) {
                self_overlap = true;
                self_in_start = start_relative(overlap, in_box);
                self_extent = overlap.extent();
                continue;
            }
            to_y.push_back({peer, start_relative(overlap, in_box), overlap.extent(), to_y_volume, overlap.volume()});
            to_y_volume += overlap.volume();
        }
    }
    if (y_rank >= 0) {
        out_box = y_box(y_rank);
        out_shape = out_box.extent();
        if (self_overlap) self_out_start = start_relative(intersect(in_box, out_box), out_box);
        for (int r = 0; r < P_x.size(); ++r) {
            const int peer = x_to_union[static_cast<std::size_t>(r)];
            if (peer == me) continue;  // already found above
            const index_box overlap = intersect(x_box(r), out_box);
            if (overlap.empty()) continue;
            from_x.push_back({peer, start_relative(overlap, out_box), overlap.extent(), from_x_volume, overlap.volume()});
            from_x_volume += overlap.volume();
        }
    }
    to_y_buffer.resize(to_y_volume);
    from_x_buffer.resize(from_x_volume);
}

// Forward: src is the input piece, dst the output piece. Adjoint: the reverse, along the same
// overlaps. Receives are posted first, each outgoing region is packed once, and the local
// overlap is copied while messages are in flight.
template <class T>
void repartition<T>::state::move(bool forward, const T* src, T* dst) {
    const auto& outgoing = forward ? to_y : from_x;
    const auto& incoming = forward ? from_x : to_y;
    auto& out_buffer = forward ? to_y_buffer : from_x_buffer;
    auto& in_buffer = forward ? from_x_buffer : to_y_buffer;
    const shape_t& src_shape = forward ? in_shape : out_shape;
    const shape_t& dst_shape = forward ? out_shape : in_shape;
    const int tag = forward ? 1 : 2;
    communicator& comm = *P_union.comm();

    requests.clear();
    for (const auto& t : incoming) requests.push_back(comm.irecv(in_buffer.data() + t.offset, t.count, t.peer, tag));
    for (const auto& t : outgoing) {
        detail::pack_box(src, src_shape, t.start, t.extent, out_buffer.data() + t.offset);
        requests.push_back(comm.isend(out_buffer.data() + t.offset, t.count, t.peer, tag));
    }
    if (self_overlap)
        detail::copy_box(src, src_shape, forward ? self_in_start : self_out_start, dst, dst_shape,
                         forward ? self_out_start : self_in_start, self_extent, detail::box_op::assign);
    if (!requests.empty()) comm.wait_all(requests);
    for (const auto& t : incoming)
        detail::unpack_box(in_buffer.data() + t.offset, dst, dst_shape, t.start, t.extent, detail::box_op::assign);
}

template <class T>
repartition<T>::repartition(const cartesian_partition& P_x, const cartesian_partition& P_y,
                            repartition_options options) {
    detail::argument_agreement("Repartition")
        .element_type(dtype_of<T>())
        .list("P_x shape", P_x.shape())
        .list("P_y shape", P_y.shape())
        .flag("preserve_batch", options.preserve_batch)
        .require(*P_x.world_comm());
    DISTDL_REQUIRE_AS(P_x.dim() == P_y.dim(), partition_error,
                      "Repartition: P_x shape " << format_list(P_x.shape()) << " and P_y shape "
                                                << format_list(P_y.shape()) << " differ in dimension ("
                                                << P_x.dim() << " vs " << P_y.dim() << ")");
    DISTDL_REQUIRE_AS(P_x.dim() >= 1 && P_x.dim() <= max_rank, partition_error,
                      "Repartition: P_x shape " << format_list(P_x.shape()) << " and P_y shape "
                                                << format_list(P_y.shape()) << " must have between 1 and "
                                                << max_rank << " dimensions");
    state_ = std::make_unique<state>(P_x, P_y, options);
    auto& st = *state_;
    const auto& union_members = st.P_union.members();
    for (int w : P_x.members()) st.x_to_union.push_back(index_of(union_members, w));
    for (int w : P_y.members()) st.y_to_union.push_back(index_of(union_members, w));
    if (st.P_union.active()) {
        const int world_rank = union_members[static_cast<std::size_t>(st.P_union.rank())];
        st.x_rank = index_of(P_x.members(), world_rank);
        st.y_rank = index_of(P_y.members(), world_rank);
    }
}

template <class T>
repartition<T>::~repartition() = default;

template <class T>
tensor<T> repartition<T>::forward_value(const tensor<T>& x) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "repartition");
    if (!st.P_union.active()) return outside_result(x, st.options.preserve_batch);
    st.exchange_and_plan(x);
    tensor<T> y = st.y_rank >= 0 ? tensor<T>(st.out_shape)
                                 : zero_volume<T>(st.global_shape[0], st.options.preserve_batch);
    // Only P_x workers have a source; the others pass an unused pointer.
    st.move(true, st.x_rank >= 0 ? x.data() : nullptr, y.data());
    return y;
}

template <class T>
tensor<T> repartition<T>::adjoint_value(const tensor<T>& dy) {
    auto& st = *state_;
    traffic_scope scope(st.P_x.world_comm()->traffic(), "repartition");
    if (!st.P_union.active()) return outside_result(dy, st.options.preserve_batch);
    DISTDL_REQUIRE(st.planned, "Repartition: adjoint called before forward (the input layout is not known yet)");
    if (st.y_rank >= 0) {
        const shape_t given = shape_of(dy);
        DISTDL_REQUIRE(given == st.out_shape, "Repartition adjoint: worker " << st.y_rank << " of P_y shape "
                                                                             << format_list(st.P_y.shape())
                                                                             << " expects dy of shape "
                                                                             << format_list(st.out_shape)
                                                                             << ", got " << format_list(given));
    }
    tensor<T> dx = st.x_rank >= 0 ? tensor<T>(st.in_shape)
                                  : zero_volume<T>(st.global_shape[0], st.options.preserve_batch);
    st.move(false, st.y_rank >= 0 ? dy.data() : nullptr, dx.data());
    return dx;
}

template class repartition<float>;
template class repartition<double>;

}  // namespace distdl
