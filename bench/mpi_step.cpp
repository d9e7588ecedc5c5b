// A benchmark program is not library code: its baselines call MPI directly (in the library,
// only mpi_backend/ includes <mpi.h>, see DESIGN.md §1).
#include "bench/mpi_step.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/decomposition.hpp"
#include "mpi_backend/communicator.hpp"

namespace distdl::bench {

namespace {

void check(int code, const char* what) { DISTDL_REQUIRE(code == MPI_SUCCESS, "MPI baseline: " << what << " failed"); }

int as_int(std::size_t v) { return mpi::to_int(v, "MPI baseline count"); }

std::vector<double> concatenated(const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> out(a);
    out.insert(out.end(), b.begin(), b.end());
    return out;
}

// Broadcast: MPI_Bcast from rank 0 forward, MPI_Reduce to rank 0 back. SumReduce: the reverse.
class bcast_reduce_step final : public step {
  public:
    bcast_reduce_step(MPI_Comm comm, std::size_t count, bool broadcast_first)
        : comm_(comm), count_(as_int(count)), broadcast_first_(broadcast_first), x_(count), y_(count, 0.0) {
        MPI_Comm_rank(comm_, &rank_);
        for (std::size_t i = 0; i < count; ++i) x_[i] = input_value(i, rank_);
    }
    void run() override {
        if (broadcast_first_) {
            check(MPI_Bcast(x_.data(), count_, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
            reduce();
        } else {
            reduce();
            check(MPI_Bcast(y_.data(), count_, MPI_DOUBLE, 0, comm_), "MPI_Bcast");
        }
    }
    // Broadcast: the copy (x_, every rank), then the sum on the root. SumReduce: the sum on the
    // root, then its copy on every rank (y_).
    std::vector<double> outputs() const override {
        std::vector<double> out = broadcast_first_ ? x_ : std::vector<double>{};
        if (rank_ == 0) out.insert(out.end(), y_.begin(), y_.end());
        if (!broadcast_first_) out.insert(out.end(), y_.begin(), y_.end());
        return out;
    }

  private:
    void reduce() {
        check(MPI_Reduce(x_.data(), rank_ == 0 ? y_.data() : nullptr, count_, MPI_DOUBLE, MPI_SUM, 0, comm_),
              "MPI_Reduce");
    }
    MPI_Comm comm_;
    int count_;
    bool broadcast_first_;
    int rank_ = 0;
    std::vector<double> x_, y_;
};

// AllSumReduce over all workers: MPI_Allreduce forward and again for the (self-)adjoint.
class allreduce_step final : public step {
  public:
    allreduce_step(MPI_Comm comm, std::size_t count) : comm_(comm), count_(as_int(count)), x_(count), y_(count), dx_(count) {
        int rank = 0;
        MPI_Comm_rank(comm_, &rank);
        for (std::size_t i = 0; i < count; ++i) x_[i] = input_value(i, rank);
    }
    void run() override {
        check(MPI_Allreduce(x_.data(), y_.data(), count_, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
        check(MPI_Allreduce(y_.data(), dx_.data(), count_, MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
    }
    std::vector<double> outputs() const override { return concatenated(y_, dx_); }

  private:
    MPI_Comm comm_;
    int count_;
    std::vector<double> x_, y_, dx_;
};

// Repartition of an n x m matrix from column blocks ([1,P]) to row blocks ([P,1]) with
// MPI_Alltoallv: the pieces a column block sends are contiguous row ranges; the row block
// receives them contiguously and unpacks each into its columns (rows copied one by one).
// The adjoint packs and sends back.
class alltoallv_step final : public step {
  public:
    alltoallv_step(MPI_Comm comm, std::size_t n, std::size_t m) : comm_(comm), m_(m) {
        int rank = 0, size = 0;
        MPI_Comm_rank(comm_, &rank);
        MPI_Comm_size(comm_, &size);
        const auto P = static_cast<std::size_t>(size), r = static_cast<std::size_t>(rank);
        width_ = balanced_size(m, P, r);
        height_ = balanced_size(n, P, r);
        x_.resize(n * width_);
        const std::size_t first_col = balanced_start(m, P, r);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < width_; ++j) x_[i * width_ + j] = input_value(i * m + first_col + j, 0);
        y_.assign(height_ * m, 0.0);
        buffer_.assign(height_ * m, 0.0);
        dx_.assign(n * width_, 0.0);
        for (std::size_t s = 0; s < P; ++s) {
            // To row block s: its rows of my columns. From column block s: my rows of its columns.
            send_counts_.push_back(as_int(balanced_size(n, P, s) * width_));
            send_displs_.push_back(as_int(balanced_start(n, P, s) * width_));
            col_start_.push_back(balanced_start(m, P, s));
            col_width_.push_back(balanced_size(m, P, s));
            recv_counts_.push_back(as_int(height_ * col_width_.back()));
            recv_displs_.push_back(as_int(height_ * col_start_.back()));
        }
    }
    void run() override {
        check(MPI_Alltoallv(x_.data(), send_counts_.data(), send_displs_.data(), MPI_DOUBLE, buffer_.data(),
                            recv_counts_.data(), recv_displs_.data(), MPI_DOUBLE, comm_),
              "MPI_Alltoallv");
        for (std::size_t s = 0; s < col_start_.size(); ++s)
            for (std::size_t i = 0; i < height_; ++i)
                std::memcpy(&y_[i * m_ + col_start_[s]], &buffer_[height_ * col_start_[s] + i * col_width_[s]],
                            col_width_[s] * sizeof(double));
        // Adjoint: pack dy (= y) into column pieces, send them back.
        for (std::size_t s = 0; s < col_start_.size(); ++s)
            for (std::size_t i = 0; i < height_; ++i)
                std::memcpy(&buffer_[height_ * col_start_[s] + i * col_width_[s]], &y_[i * m_ + col_start_[s]],
                            col_width_[s] * sizeof(double));
        check(MPI_Alltoallv(buffer_.data(), recv_counts_.data(), recv_displs_.data(), MPI_DOUBLE, dx_.data(),
                            send_counts_.data(), send_displs_.data(), MPI_DOUBLE, comm_),
              "MPI_Alltoallv");
    }
    std::vector<double> outputs() const override { return concatenated(y_, dx_); }

  private:
    MPI_Comm comm_;
    std::size_t m_, width_ = 0, height_ = 0;
    std::vector<double> x_, y_, buffer_, dx_;
    std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
    std::vector<std::size_t> col_start_, col_width_;
};

// Halo exchange of width 1 on a 2-d grid of workers (3x3 kernel, padding 1, stride 1): the
// output is the (h+2) x (w+2) window; up to 8 neighbours (faces and corners) exchange packed
// edges with MPI_Isend/MPI_Irecv. Ghosts at the global edge are zero padding. The adjoint
// sends ghost values back and adds them into the owned edges.
class halo_step final : public step {
  public:
    halo_step(MPI_Comm comm, const shape_t& global, const shape_t& grid) : comm_(comm) {
        int rank = 0;
        MPI_Comm_rank(comm_, &rank);
        const std::array<std::size_t, 2> index{static_cast<std::size_t>(rank) / grid[1], static_cast<std::size_t>(rank) % grid[1]};
        h_ = balanced_size(global[0], grid[0], index[0]);
        w_ = balanced_size(global[1], grid[1], index[1]);
        const std::size_t row0 = balanced_start(global[0], grid[0], index[0]);
        const std::size_t col0 = balanced_start(global[1], grid[1], index[1]);
        x_.resize(h_ * w_);
        for (std::size_t i = 0; i < h_; ++i)
            for (std::size_t j = 0; j < w_; ++j) x_[i * w_ + j] = input_value((row0 + i) * global[1] + col0 + j, 0);
        y_.assign((h_ + 2) * (w_ + 2), 0.0);
        dx_.assign(h_ * w_, 0.0);
        for (int di = -1; di <= 1; ++di)
            for (int dj = -1; dj <= 1; ++dj) {
                if (di == 0 && dj == 0) continue;
                const long ni = static_cast<long>(index[0]) + di, nj = static_cast<long>(index[1]) + dj;
                if (ni < 0 || nj < 0 || ni >= static_cast<long>(grid[0]) || nj >= static_cast<long>(grid[1])) continue;
                neighbour n;
                n.rank = static_cast<int>(ni * static_cast<long>(grid[1]) + nj);
                n.di = di;
                n.dj = dj;
                n.rows = di == 0 ? h_ : 1;
                n.cols = dj == 0 ? w_ : 1;
                n.send.assign(n.rows * n.cols, 0.0);
                n.recv.assign(n.rows * n.cols, 0.0);
                neighbours_.push_back(std::move(n));
            }
        requests_.resize(2 * neighbours_.size());
    }
    void run() override {
        // Forward: interior copy, edges out, ghosts in.
        for (std::size_t i = 0; i < h_; ++i) std::memcpy(&y_[(i + 1) * (w_ + 2) + 1], &x_[i * w_], w_ * sizeof(double));
        for (auto& n : neighbours_) copy_box(x_.data(), w_, edge_row(n.di), edge_col(n.dj), n, n.send.data(), true);
        exchange();
        for (auto& n : neighbours_) copy_box(y_.data(), w_ + 2, ghost_row(n.di), ghost_col(n.dj), n, n.recv.data(), false);
        // Adjoint (dy = y): interior copy, ghosts out, added into the owned edges.
        for (std::size_t i = 0; i < h_; ++i) std::memcpy(&dx_[i * w_], &y_[(i + 1) * (w_ + 2) + 1], w_ * sizeof(double));
        for (auto& n : neighbours_) copy_box(y_.data(), w_ + 2, ghost_row(n.di), ghost_col(n.dj), n, n.send.data(), true);
        exchange();
        for (auto& n : neighbours_) {
            const std::size_t r0 = edge_row(n.di), c0 = edge_col(n.dj);
            for (std::size_t i = 0; i < n.rows; ++i)
                for (std::size_t j = 0; j < n.cols; ++j) dx_[(r0 + i) * w_ + c0 + j] += n.recv[i * n.cols + j];
        }
    }
    std::vector<double> outputs() const override { return concatenated(y_, dx_); }

  private:
    struct neighbour {
        int rank = 0, di = 0, dj = 0;
        std::size_t rows = 0, cols = 0;
        std::vector<double> send, recv;
    };
    std::size_t edge_row(int di) const { return di == 1 ? h_ - 1 : 0; }
    std::size_t edge_col(int dj) const { return dj == 1 ? w_ - 1 : 0; }
    std::size_t ghost_row(int di) const { return di == -1 ? 0 : di == 0 ? 1 : h_ + 1; }
    std::size_t ghost_col(int dj) const { return dj == -1 ? 0 : dj == 0 ? 1 : w_ + 1; }
    // Copies the neighbour-sized box at (r0, c0) of a matrix with `stride` columns to (pack) or
    // from (unpack) a contiguous buffer, row by row.
    static void copy_box(double* m, std::size_t stride, std::size_t r0, std::size_t c0, const neighbour& n, double* buf,
                         bool pack) {
        for (std::size_t i = 0; i < n.rows; ++i) {
            double* row = m + (r0 + i) * stride + c0;
            if (pack) std::memcpy(buf + i * n.cols, row, n.cols * sizeof(double));
            else std::memcpy(row, buf + i * n.cols, n.cols * sizeof(double));
        }
    }
    void exchange() {
        std::size_t k = 0;
        // The message to the neighbour at (di, dj) carries tag of that direction; it receives it
        // as coming from (-di, -dj).
        for (auto& n : neighbours_)
            check(MPI_Irecv(n.recv.data(), as_int(n.recv.size()), MPI_DOUBLE, n.rank, tag(-n.di, -n.dj), comm_, &requests_[k++]),
                  "MPI_Irecv");
        for (auto& n : neighbours_)
            check(MPI_Isend(n.send.data(), as_int(n.send.size()), MPI_DOUBLE, n.rank, tag(n.di, n.dj), comm_, &requests_[k++]),
                  "MPI_Isend");
        check(MPI_Waitall(static_cast<int>(k), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
    static int tag(int di, int dj) { return (di + 1) * 3 + (dj + 1); }

    MPI_Comm comm_;
    std::size_t h_ = 0, w_ = 0;
    std::vector<double> x_, y_, dx_;
    std::vector<neighbour> neighbours_;
    std::vector<MPI_Request> requests_;
};


// Halo exchange of any rank, kernel, stride and padding (the layers' halos, pool_halo and conv_halo), f32,
// written as an MPI programmer would: every worker's window is the input its block of the
// output reads (balanced split of the output, unpadded indices, may reach into the zero
// padding); from every other worker q arrives the overlap of q's piece with my window, to q
// goes the overlap of my piece with q's window. Boxes are packed into buffers with memcpy of
// their innermost runs, moved with MPI_Isend/MPI_Irecv + MPI_Waitall and unpacked. The zero
// padding of y is written once (y is reused, and nothing else writes there). The adjoint sends
// the ghost boxes back and adds them into the owner's dx.
class box_halo_step final : public step {
  public:
    box_halo_step(MPI_Comm comm, const shape_t& global, const shape_t& grid, const layer_halo_geometry& g)
        : comm_(comm) {
        int rank = 0, size = 0;
        MPI_Comm_rank(comm_, &rank);
        MPI_Comm_size(comm_, &size);
        const std::size_t dims = global.size();
        std::vector<box> owned(static_cast<std::size_t>(size)), window(static_cast<std::size_t>(size));
        for (int q = 0; q < size; ++q) {
            // Row-major index of worker q in the grid.
            shape_t index(dims);
            std::size_t rest = static_cast<std::size_t>(q);
            for (std::size_t d = dims; d-- > 0;) {
                index[d] = rest % grid[d];
                rest /= grid[d];
            }
            box& o = owned[static_cast<std::size_t>(q)];
            box& w = window[static_cast<std::size_t>(q)];
            for (std::size_t d = 0; d < dims; ++d) {
                o.lo.push_back(static_cast<long>(balanced_start(global[d], grid[d], index[d])));
                o.hi.push_back(static_cast<long>(balanced_stop(global[d], grid[d], index[d])));
                const long k = static_cast<long>(g.kernel_size[d]), s = static_cast<long>(g.stride[d]);
                const long p = static_cast<long>(g.padding[d]);
                const std::size_t m = (global[d] + 2 * g.padding[d] - g.kernel_size[d]) / g.stride[d] + 1;
                const long a = static_cast<long>(balanced_start(m, grid[d], index[d]));
                const long b = static_cast<long>(balanced_stop(m, grid[d], index[d]));
                w.lo.push_back(s * a - p);
                w.hi.push_back(b > a ? s * (b - 1) + k - p : s * a - p);
            }
        }
        const box& mine = owned[static_cast<std::size_t>(rank)];
        const box& view = window[static_cast<std::size_t>(rank)];
        owned_shape_ = mine.extent();
        window_shape_ = view.extent();
        x_.resize(volume(owned_shape_));
        for (std::size_t i = 0; i < x_.size(); ++i) {
            std::size_t rest = i, flat = 0, scale = 1;
            for (std::size_t d = dims; d-- > 0;) {
                flat += (static_cast<std::size_t>(mine.lo[d]) + rest % owned_shape_[d]) * scale;
                rest /= owned_shape_[d];
                scale *= global[d];
            }
            x_[i] = layer_halo_input_value(flat);
        }
        y_.assign(volume(window_shape_), 0.0f);  // the padding stays zero
        dx_.assign(x_.size(), 0.0f);
        self_ = mine.intersect(view);
        self_covers_owned_ = self_.extent() == owned_shape_;
        for (int q = 0; q < size; ++q) {
            if (q == rank) continue;
            peer n;
            n.rank = q;
            n.send = mine.intersect(window[static_cast<std::size_t>(q)]);     // my piece they read
            n.recv = owned[static_cast<std::size_t>(q)].intersect(view);       // their piece I read
            if (n.send.empty() && n.recv.empty()) continue;
            n.send_buffer.resize(volume(n.send.extent()));
            n.recv_buffer.resize(volume(n.recv.extent()));
            peers_.push_back(std::move(n));
        }
        requests_.reserve(2 * peers_.size());
        owned_lo_ = mine.lo;
        window_lo_ = view.lo;
    }
    void run() override {
        // Forward: my piece's part of each peer's window out, their parts of mine in.
        post_receives(1, false);
        for (auto& n : peers_)
            if (!n.send.empty()) {
                walk(x_.data(), owned_shape_, n.send, owned_lo_, n.send_buffer.data(), true);
                post_send(n.send_buffer, n.rank, 1);
            }
        copy_self(x_.data(), owned_shape_, owned_lo_, y_.data(), window_shape_, window_lo_);
        check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        for (auto& n : peers_)
            if (!n.recv.empty()) walk(y_.data(), window_shape_, n.recv, window_lo_, n.recv_buffer.data(), false);
        // Adjoint (dy = y): ghost boxes back to their owners, added there.
        post_receives(2, true);
        for (auto& n : peers_)
            if (!n.recv.empty()) {
                walk(y_.data(), window_shape_, n.recv, window_lo_, n.recv_buffer.data(), true);
                post_send(n.recv_buffer, n.rank, 2);
            }
        if (!self_covers_owned_) std::fill(dx_.begin(), dx_.end(), 0.0f);
        copy_self(y_.data(), window_shape_, window_lo_, dx_.data(), owned_shape_, owned_lo_);
        check(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
        for (auto& n : peers_)
            if (!n.send.empty()) add_into(n.send_buffer.data(), n.send);
    }
    std::vector<double> outputs() const override {
        std::vector<double> out(y_.begin(), y_.end());
        out.insert(out.end(), dx_.begin(), dx_.end());
        return out;
    }

  private:
    // [lo, hi) in global indices.
    struct box {
        std::vector<long> lo, hi;
        shape_t extent() const {
            shape_t e(lo.size());
            for (std::size_t d = 0; d < lo.size(); ++d) e[d] = hi[d] > lo[d] ? static_cast<std::size_t>(hi[d] - lo[d]) : 0;
            return e;
        }
        bool empty() const { return volume(extent()) == 0; }
        box intersect(const box& o) const {
            box r;
            for (std::size_t d = 0; d < lo.size(); ++d) {
                r.lo.push_back(std::max(lo[d], o.lo[d]));
                r.hi.push_back(std::max(r.lo[d], std::min(hi[d], o.hi[d])));
            }
            return r;
        }
    };
    struct peer {
        int rank = 0;
        box send, recv;
        std::vector<float> send_buffer, recv_buffer;
    };
    // Calls f(offset, run) for every innermost run of box b inside an array of `shape` whose
    // first element has global index `origin`.
    template <class F>
    static void runs(const shape_t& shape, const std::vector<long>& origin, const box& b, F f) {
        const std::size_t dims = shape.size();
        const shape_t e = b.extent();
        std::vector<std::size_t> counter(dims, 0);
        const std::size_t run = e[dims - 1];
        while (true) {
            std::size_t offset = 0;
            for (std::size_t d = 0; d < dims; ++d)
                offset = offset * shape[d] + static_cast<std::size_t>(b.lo[d] - origin[d]) + counter[d];
            f(offset, run);
            std::size_t d = dims - 1;
            while (d-- > 0) {
                if (++counter[d] < e[d]) break;
                counter[d] = 0;
            }
            if (d == static_cast<std::size_t>(-1)) return;
        }
    }
    // Packs (or unpacks) box b of the array into the contiguous buffer.
    static void walk(float* array, const shape_t& shape, const box& b, const std::vector<long>& origin, float* buffer,
                     bool pack) {
        std::size_t at = 0;
        runs(shape, origin, b, [&](std::size_t offset, std::size_t run) {
            if (pack) std::memcpy(buffer + at, array + offset, run * sizeof(float));
            else std::memcpy(array + offset, buffer + at, run * sizeof(float));
            at += run;
        });
    }
    void copy_self(const float* from, const shape_t& from_shape, const std::vector<long>& from_origin, float* to,
                   const shape_t& to_shape, const std::vector<long>& to_origin) {
        if (self_.empty()) return;
        // The same box in both arrays: one odometer, two offsets per innermost run.
        const std::size_t dims = self_.lo.size();
        const shape_t e = self_.extent();
        std::vector<std::size_t> counter(dims, 0);
        while (true) {
            std::size_t a = 0, b = 0;
            for (std::size_t d = 0; d < dims; ++d) {
                a = a * from_shape[d] + static_cast<std::size_t>(self_.lo[d] - from_origin[d]) + counter[d];
                b = b * to_shape[d] + static_cast<std::size_t>(self_.lo[d] - to_origin[d]) + counter[d];
            }
            std::memcpy(to + b, from + a, e[dims - 1] * sizeof(float));
            std::size_t d = dims - 1;
            while (d-- > 0) {
                if (++counter[d] < e[d]) break;
                counter[d] = 0;
            }
            if (d == static_cast<std::size_t>(-1)) return;
        }
    }
    void add_into(const float* buffer, const box& b) {
        std::size_t at = 0;
        runs(owned_shape_, owned_lo_, b, [&](std::size_t offset, std::size_t run) {
            for (std::size_t i = 0; i < run; ++i) dx_[offset + i] += buffer[at + i];
            at += run;
        });
    }
    void post_receives(int tag, bool adjoint) {
        requests_.clear();
        for (auto& n : peers_) {
            std::vector<float>& into = adjoint ? n.send_buffer : n.recv_buffer;
            if (into.empty()) continue;
            requests_.emplace_back();
            check(MPI_Irecv(into.data(), as_int(into.size()), MPI_FLOAT, n.rank, tag, comm_, &requests_.back()), "MPI_Irecv");
        }
    }
    void post_send(std::vector<float>& from, int dest, int tag) {
        requests_.emplace_back();
        check(MPI_Isend(from.data(), as_int(from.size()), MPI_FLOAT, dest, tag, comm_, &requests_.back()), "MPI_Isend");
    }

    MPI_Comm comm_;
    shape_t owned_shape_, window_shape_;
    std::vector<long> owned_lo_, window_lo_;
    std::vector<float> x_, y_, dx_;
    box self_;
    bool self_covers_owned_ = false;
    std::vector<peer> peers_;
    std::vector<MPI_Request> requests_;
};


// MPI_Allreduce of a copy's words (uint64) and of a sum's elements plus status (double).
class fused_allreduce_step final : public step {
  public:
    fused_allreduce_step(MPI_Comm comm, std::size_t count)
        : comm_(comm), bits_in_((count * sizeof(double) + 7) / 8 + 1, 0), bits_out_(bits_in_.size()),
          sum_in_(count + 2, 1.0), sum_out_(count + 2) {}
    void run() override {
        check(MPI_Allreduce(bits_in_.data(), bits_out_.data(), as_int(bits_in_.size()), MPI_UINT64_T, MPI_SUM, comm_),
              "MPI_Allreduce");
        check(MPI_Allreduce(sum_in_.data(), sum_out_.data(), as_int(sum_in_.size()), MPI_DOUBLE, MPI_SUM, comm_),
              "MPI_Allreduce");
    }
    std::vector<double> outputs() const override { return {}; }

  private:
    MPI_Comm comm_;
    std::vector<std::uint64_t> bits_in_, bits_out_;
    std::vector<double> sum_in_, sum_out_;
};

}  // namespace

std::unique_ptr<step> make_mpi_allreduce_step(const workload& w, const std::shared_ptr<communicator>& world) {
    const auto* transport = dynamic_cast<const mpi::mpi_communicator*>(world.get());
    DISTDL_REQUIRE(transport != nullptr, "make_mpi_allreduce_step: the world is not an MPI transport communicator");
    return std::make_unique<fused_allreduce_step>(transport->native(), volume(w.shape));
}

std::unique_ptr<step> make_mpi_step(const workload& w, const std::shared_ptr<communicator>& world) {
    const auto* transport = dynamic_cast<const mpi::mpi_communicator*>(world.get());
    DISTDL_REQUIRE(transport != nullptr, "make_mpi_step: the world is not an MPI transport communicator");
    DISTDL_REQUIRE(world->size() == w.workers,
                   "make_mpi_step: workload for " << w.workers << " workers on a world of " << world->size());
    const MPI_Comm comm = transport->native();
    switch (w.kind) {
        case primitive_kind::broadcast: return std::make_unique<bcast_reduce_step>(comm, volume(w.shape), true);
        case primitive_kind::sum_reduce: return std::make_unique<bcast_reduce_step>(comm, volume(w.shape), false);
        case primitive_kind::all_sum_reduce: return std::make_unique<allreduce_step>(comm, volume(w.shape));
        case primitive_kind::repartition: return std::make_unique<alltoallv_step>(comm, w.shape[0], w.shape[1]);
        case primitive_kind::halo_exchange: return std::make_unique<halo_step>(comm, w.shape, w.worker_grid());
        case primitive_kind::pool_halo:
        case primitive_kind::conv_halo:
            return std::make_unique<box_halo_step>(comm, w.shape, w.worker_grid(), layer_halo_geometry_of(w.kind));
    }
    DISTDL_REQUIRE(false, "make_mpi_step: unknown primitive");
    return nullptr;
}

}  // namespace distdl::bench
