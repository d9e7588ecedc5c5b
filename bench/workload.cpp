#include "bench/workload.hpp"

#include <sstream>

#include "core/decomposition.hpp"

namespace distdl::bench {

namespace {

std::string join(const shape_t& s, const char* sep) {
    std::ostringstream out;
    for (std::size_t i = 0; i < s.size(); ++i) out << (i ? sep : "") << s[i];
    return out.str();
}

// Square grid for 4 and 16 workers ({2,2}, {4,4}); {workers, 1} otherwise.
shape_t square_grid(int workers) {
    std::size_t side = 1;
    while ((side + 1) * (side + 1) <= static_cast<std::size_t>(workers)) ++side;
    if (side * side == static_cast<std::size_t>(workers)) return {side, side};
    return {static_cast<std::size_t>(workers), 1};
}

}  // namespace

std::string workload::primitive_name() const {
    switch (kind) {
        case primitive_kind::broadcast: return "broadcast";
        case primitive_kind::sum_reduce: return "sum_reduce";
        case primitive_kind::all_sum_reduce: return "all_sum_reduce";
        case primitive_kind::repartition: return "repartition";
        case primitive_kind::halo_exchange: return "halo_exchange";
        case primitive_kind::pool_halo: return "pool_halo";
        case primitive_kind::conv_halo: return "conv_halo";
    }
    return "unknown";
}

std::string workload::name(const std::string& transport) const {
    return primitive_name() + "/" + transport + "/w" + std::to_string(workers) + "/" + size;
}

shape_t workload::worker_grid() const {
    const auto n = static_cast<std::size_t>(workers);
    switch (kind) {
        case primitive_kind::broadcast:
        case primitive_kind::sum_reduce:
        case primitive_kind::halo_exchange: return square_grid(workers);
        case primitive_kind::all_sum_reduce: return {n};
        case primitive_kind::repartition: return {1, n};  // to {n, 1}
        case primitive_kind::pool_halo:
        case primitive_kind::conv_halo: {
            const shape_t spatial = square_grid(workers);
            return {1, 1, spatial[0], spatial[1]};
        }
    }
    return {n};
}

bool is_layer_halo(primitive_kind kind) { return kind == primitive_kind::pool_halo || kind == primitive_kind::conv_halo; }

layer_halo_geometry layer_halo_geometry_of(primitive_kind kind) {
    layer_halo_geometry g;
    if (kind == primitive_kind::pool_halo) g.stride = {1, 1, 2, 2};
    return g;
}

std::size_t workload::element_bytes() const { return is_layer_halo(kind) ? sizeof(float) : sizeof(double); }

std::string workload::describe() const {
    const std::string grid = "[" + join(worker_grid(), ",") + "]";
    const std::string tensor = join(shape, "x") + (is_layer_halo(kind) ? " f32" : " f64");
    switch (kind) {
        case primitive_kind::broadcast: return "1 -> " + grid + ", " + tensor;
        case primitive_kind::sum_reduce: return grid + " -> 1, " + tensor;
        case primitive_kind::all_sum_reduce: return grid + " over axis 0, " + tensor;
        case primitive_kind::repartition:
            return "[1," + std::to_string(workers) + "] -> [" + std::to_string(workers) + ",1], " + tensor;
        case primitive_kind::halo_exchange: return grid + ", " + tensor + ", 3x3 kernel, padding 1";
        case primitive_kind::pool_halo: return grid + ", " + tensor + ", 3x3 kernel, stride 2, padding 1 (pooling)";
        case primitive_kind::conv_halo: return grid + ", " + tensor + ", 3x3 kernel, padding 1 (convolution)";
    }
    return tensor;
}

std::size_t workload::bytes_per_worker() const {
    switch (kind) {
        case primitive_kind::broadcast:
        case primitive_kind::sum_reduce:
        case primitive_kind::all_sum_reduce: return volume(shape) * sizeof(double);
        case primitive_kind::repartition:
        case primitive_kind::halo_exchange:
        case primitive_kind::pool_halo:
        case primitive_kind::conv_halo: {
            // The first worker's piece (the largest under the balanced split).
            const shape_t grid = worker_grid();
            std::size_t v = 1;
            for (std::size_t d = 0; d < shape.size(); ++d) v *= balanced_size(shape[d], grid[d], 0);
            return v * element_bytes();
        }
    }
    return 0;
}

std::vector<workload> all_workloads() {
    std::vector<workload> all;
    for (int w : {4, 16}) {
        const std::size_t side = w == 4 ? 2 : 4;  // halo grid side
        using k = primitive_kind;
        // ~1 KiB per worker.
        all.push_back({k::broadcast, w, "small", {16, 8}});
        all.push_back({k::sum_reduce, w, "small", {16, 8}});
        all.push_back({k::all_sum_reduce, w, "small", {16, 8}});
        all.push_back({k::repartition, w, "small", {static_cast<std::size_t>(8 * w), 16}});
        all.push_back({k::halo_exchange, w, "small", {8 * side, 16 * side}});
        // The small shapes issue 7 measured.
        all.push_back({k::broadcast, w, "issue", {4, 4}});
        all.push_back({k::sum_reduce, w, "issue", {4, 4}});
        all.push_back({k::all_sum_reduce, w, "issue", {4, 4}});
        all.push_back({k::repartition, w, "issue", {64, 64}});
        // 8 MiB per worker.
        all.push_back({k::broadcast, w, "large", {1024, 1024}});
        all.push_back({k::sum_reduce, w, "large", {1024, 1024}});
        all.push_back({k::all_sum_reduce, w, "large", {1024, 1024}});
        const std::size_t n = w == 4 ? 2048 : 4096;
        all.push_back({k::repartition, w, "large", {n, n}});
        all.push_back({k::halo_exchange, w, "large", {1024 * side, 1024 * side}});
        // The halos of the pooling and convolution benchmarks (issue 10): 8 MiB of f32 per
        // worker, 4 workers only.
        if (w == 4) all.push_back({k::pool_halo, w, "large", {8, 16, 256, 256}});
        if (w == 4) all.push_back({k::conv_halo, w, "large", {8, 16, 256, 256}});
    }
    return all;
}

}  // namespace distdl::bench
