#include "verify/random_cases.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "verify/random.hpp"
#include "verify/random_draws.hpp"
#include "verify/random_refusals.hpp"
#include "verify/random_sequential.hpp"

namespace distdl::verify {

namespace {

using namespace random_draws;

// The spatial geometry of a convolution or pooling: per dimension a length, kernel, stride,
// padding (up to beyond the kernel: windows of padding only) and dilation, with the kernel
// fitting the padded length.
struct spatial_geometry {
    sizes length, kernel, stride, padding, dilation;
};

spatial_geometry draw_geometry(draws& d, std::size_t dims, bool dilated) {
    spatial_geometry g;
    for (std::size_t e = 0; e < dims; ++e) {
        const std::size_t k = d.between(1, dims == 3 ? 5 : 6), dil = dilated ? d.between(1, 3) : 1;
        const std::size_t p = d.between(0, 5), span = dil * (k - 1) + 1;
        const std::size_t shortest = span > 2 * p ? span - 2 * p : 1;
        g.length.push_back(shortest + d.between(0, dims == 3 ? 5 : 10));
        g.kernel.push_back(k);
        g.stride.push_back(d.between(1, 4));
        g.padding.push_back(p);
        g.dilation.push_back(dil);
    }
    return g;
}

// A world of at least `needed` workers, sometimes a few idle ones more (within max_world).
std::size_t draw_world(draws& d, std::size_t needed, std::size_t max_world) {
    return std::max(needed, std::min(max_world, needed + d.between(0, 2)));
}

void add_linear(json& c, draws& d, std::size_t max_world, std::size_t batch) {
    const auto [p_in, p_out] = draw_in_out(d, max_world);
    const std::size_t in = d.between(1, 9), out = d.between(1, 9), world = draw_world(d, p_in * p_out, max_world);
    c["layer"] = "Linear";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(p_in, world), {1, p_in})},
                       {"P_y", partition(d.workers(p_out, world), {1, p_out})},
                       {"P_w", partition(d.workers(p_in * p_out, world), {p_out, p_in})}};
    c["options"] = {{"in_features", in}, {"out_features", out}, {"bias", !d.one_in(4)}};
    c["x_shape"] = sizes{batch, in};
}

void add_pool(json& c, draws& d, std::size_t max_world, std::size_t batch, std::size_t dims, bool max) {
    const spatial_geometry g = draw_geometry(d, dims, max);
    const sizes split = draw_grid(d, dims, max_world);
    const std::size_t channels = d.between(1, 4), world = draw_world(d, product(split), max_world);
    c["layer"] = std::string(max ? "MaxPool" : "AvgPool") + std::to_string(dims) + "d";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(product(split), world), concat({1, 1}, split))}};
    c["options"] = {{"kernel_size", g.kernel}, {"stride", g.stride}, {"padding", g.padding}};
    if (max) c["options"]["dilation"] = g.dilation;
    c["x_shape"] = concat({batch, channels}, g.length);
    if (d.one_in(2)) c["input_shape"] = "learnt";
}

// kind: "Feature", "Channel", "General" or "" (the Conv selector: feature or general layout).
void add_conv(json& c, draws& d, std::size_t max_world, std::size_t batch, std::size_t dims, const std::string& kind) {
    const spatial_geometry g = draw_geometry(d, dims, true);
    const std::size_t in = d.pick<std::size_t>({1, 2, 3, 5, 8, 16, 17}), out = d.pick<std::size_t>({1, 2, 3, 5, 8, 16, 20});
    const bool feature = kind == "Feature" || (kind.empty() && d.one_in(3));
    const sizes split = kind == "Channel" ? sizes(dims, 1) : draw_grid(d, dims, max_world);
    const std::size_t spatial = product(split);
    json parts;
    std::size_t world = 0;
    if (feature) {
        world = draw_world(d, spatial, max_world);
        parts = {{"P_x", partition(d.workers(spatial, world), concat({1, 1}, split))}};
    } else {
        const auto [p_in, p_out] = draw_in_out(d, max_world / spatial);
        world = draw_world(d, p_in * p_out * spatial, max_world);
        parts = {{"P_x", partition(d.workers(p_in * spatial, world), concat({1, p_in}, split))},
                 {"P_y", partition(d.workers(p_out * spatial, world), concat({1, p_out}, split))},
                 {"P_w", partition(d.workers(p_in * p_out * spatial, world), concat({p_out, p_in}, split))}};
    }
    c["layer"] = kind + "Conv" + std::to_string(dims) + "d";
    c["world_size"] = world;
    c["partitions"] = parts;
    c["options"] = {{"in_channels", in},    {"out_channels", out},  {"kernel_size", g.kernel}, {"stride", g.stride},
                    {"padding", g.padding}, {"dilation", g.dilation}, {"bias", !d.one_in(4)}};
    c["x_shape"] = concat({batch, in}, g.length);
    if (d.one_in(2)) c["input_shape"] = "learnt";
}

// A tensor shape of `rank` extents 0-7 (now and then an empty one).
sizes draw_shape(draws& d, std::size_t rank) {
    sizes shape(rank);
    for (auto& n : shape) n = d.one_in(12) ? 0 : d.between(1, 7);
    return shape;
}

// Broadcast (P_x -> P_y) or SumReduce (P_x -> P_y): the smaller partition has 1 or the larger's
// extent in each dimension and may leave out leading ones (padded back on the left); a
// transpose flag gives its partition's shape reversed (DESIGN §3).
void add_broadcast_family(json& c, draws& d, std::size_t max_world, bool broadcast) {
    const std::size_t rank = d.between(1, 4);
    const sizes large = draw_grid(d, rank, max_world);
    sizes small = large;
    for (auto& e : small)
        if (d.one_in(2)) e = 1;
    while (small.size() > 1 && small.front() == 1 && d.one_in(2)) small.erase(small.begin());
    const bool transpose_src = d.one_in(4), transpose_dest = d.one_in(4);
    sizes from = broadcast ? small : large, to = broadcast ? large : small;
    if (transpose_src) std::reverse(from.begin(), from.end());
    if (transpose_dest) std::reverse(to.begin(), to.end());
    const std::size_t world = draw_world(d, product(large), max_world);
    c["layer"] = broadcast ? "Broadcast" : "SumReduce";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(product(from), world), from)},
                       {"P_y", partition(d.workers(product(to), world), to)}};
    c["options"] = {{"transpose_src", transpose_src}, {"transpose_dest", transpose_dest},
                    {"preserve_batch", !d.one_in(3)}};
    c["x_shape"] = draw_shape(d, rank);
}

void add_all_sum_reduce(json& c, draws& d, std::size_t max_world) {
    const std::size_t rank = d.between(1, 4);
    const sizes grid = draw_grid(d, rank, max_world);
    sizes axes;
    for (std::size_t t = 0; t < rank; ++t)
        if (d.one_in(2)) axes.push_back(t);
    const std::size_t world = draw_world(d, product(grid), max_world);
    c["layer"] = "AllSumReduce";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(product(grid), world), grid)}};
    c["options"] = {{"axes_reduce", axes}};
    c["x_shape"] = draw_shape(d, rank);
}

void add_repartition(json& c, draws& d, std::size_t max_world) {
    const std::size_t rank = d.between(1, 4);
    const sizes from = draw_grid(d, rank, max_world), to = draw_grid(d, rank, max_world);
    const std::size_t world = draw_world(d, std::max(product(from), product(to)), max_world);
    c["layer"] = "Repartition";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(product(from), world), from)},
                       {"P_y", partition(d.workers(product(to), world), to)}};
    sizes shape = draw_shape(d, rank);
    for (std::size_t t = 0; t < rank; ++t)
        if (shape[t] == 1 && to[t] > 1) shape[t] = 2;  // a size-1 dimension is never split (DESIGN §3)
    c["x_shape"] = shape;
    if (d.one_in(3)) c["input_split"] = "unbalanced";
    if (d.one_in(3)) c["options"] = {{"preserve_batch", false}};
}

// HaloExchange over every dimension of x (rank 1-3) with a kernel that fits.
void add_halo_exchange(json& c, draws& d, std::size_t max_world) {
    const std::size_t rank = d.between(1, 3);
    const spatial_geometry g = draw_geometry(d, rank, true);
    const sizes grid = draw_grid(d, rank, max_world);
    const std::size_t world = draw_world(d, product(grid), max_world);
    c["layer"] = "HaloExchange";
    c["world_size"] = world;
    c["partitions"] = {{"P_x", partition(d.workers(product(grid), world), grid)}};
    c["options"] = {{"kernel_size", g.kernel}, {"stride", g.stride}, {"padding", g.padding}, {"dilation", g.dilation}};
    c["x_shape"] = g.length;
}

// The per-dimension options as a case writer may give them (DESIGN §6): a list, one number for
// every dimension when they agree, or nothing where the default applies (stride: the kernel
// size for pooling, 1 otherwise; padding 0; dilation 1; bias true), so that the scalar form
// and the defaults are drawn too. The same configuration either way.
void write_compactly(json& c, draws& d) {
    if (!c.contains("options") || !c["options"].contains("kernel_size")) return;
    json& o = c["options"];
    const bool pool = c["layer"].get<std::string>().find("Pool") != std::string::npos;
    const sizes kernel = o["kernel_size"];
    for (const char* key : {"kernel_size", "stride", "padding", "dilation"}) {
        if (!o.contains(key)) continue;
        const sizes v = o[key];
        const std::string name = key;
        const sizes fallback = name == "stride" && pool ? kernel : sizes(v.size(), name == "padding" ? 0 : 1);
        const bool uniform = std::all_of(v.begin(), v.end(), [&](std::size_t e) { return e == v[0]; });
        if (name != "kernel_size" && v == fallback && d.one_in(2)) o.erase(key);
        else if (uniform && d.one_in(2)) o[key] = v[0];
    }
    if (o.value("bias", false) && d.one_in(2)) o.erase("bias");
}

}  // namespace

std::vector<json> random_case_documents(std::size_t count, std::uint64_t seed, int max_world) {
    const std::size_t budget = std::size_t(std::max(max_world, 1));
    std::vector<json> cases;
    for (std::size_t i = 0; i < count; ++i) {
        draws d(derive_seed(seed, 0x72616e646f6dull, i));  // one stream per case: case i never depends on the others
        json c = {{"schema", 1}, {"description", "random case " + std::to_string(i) + " of seed " + std::to_string(seed)}};
        const std::size_t batch = d.between(0, 3), dims = d.between(1, 3);
        // One case in 13 a chain, decided apart from d: the other cases stay as they were drawn.
        draws chains(derive_seed(seed, 0x636861696eull, i));
        std::optional<std::string> refusal;
        if (chains.one_in(13)) {
            refusal = add_sequential(c, d, chains, budget, batch, dims);
        } else {
            switch (d.between(0, 11)) {
                case 0: add_linear(c, d, budget, batch); break;
                case 1: add_pool(c, d, budget, batch, dims, true); break;
                case 2: add_pool(c, d, budget, batch, dims, false); break;
                case 3: add_conv(c, d, budget, batch, dims, "Feature"); break;
                case 4: add_conv(c, d, budget, batch, dims, "Channel"); break;
                case 5: add_conv(c, d, budget, batch, dims, "General"); break;
                case 6: add_conv(c, d, budget, batch, dims, ""); break;
                case 7: add_broadcast_family(c, d, budget, true); break;
                case 8: add_broadcast_family(c, d, budget, false); break;
                case 9: add_all_sum_reduce(c, d, budget); break;
                case 10: add_repartition(c, d, budget); break;
                default: add_halo_exchange(c, d, budget); break;
            }
        }
        if (d.one_in(2)) c["dtype"] = "float32";
        c["seed"] = derive_seed(seed, 0x64617461ull, i);
        c["name"] = "random/" + std::to_string(seed) + "/" + std::to_string(i) + "_" + c["layer"].get<std::string>();
        c["expect"] = "pass";
        if (c["layer"] != "Sequential" && d.one_in(6)) refusal = spoil(c, d);
        if (refusal) {
            c["expect"] = {{"error", *refusal}};
            c["name"] = c["name"].get<std::string>() + "_refused";
        }
        write_compactly(c, d);
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace distdl::verify
