#include "verify/random_cases.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "verify/random.hpp"

namespace distdl::verify {

namespace {

using json = nlohmann::json;
using sizes = std::vector<std::size_t>;

// Uniform draws from one SplitMix64 stream (the same on every platform).
class draws {
  public:
    explicit draws(std::uint64_t seed) : state_(seed) {}
    std::size_t between(std::size_t lo, std::size_t hi) {  // lo..hi inclusive
        state_ = mix_seed(state_);
        return lo + std::size_t(state_ % (hi - lo + 1));
    }
    bool one_in(std::size_t n) { return between(1, n) == 1; }
    template <class T>
    T pick(const std::vector<T>& values) {
        return values[between(0, values.size() - 1)];
    }
    // `n` distinct world ranks of 0..world-1, in random order.
    std::vector<int> workers(std::size_t n, std::size_t world) {
        std::vector<int> all(world);
        for (std::size_t r = 0; r < world; ++r) all[r] = int(r);
        for (std::size_t i = 0; i < n; ++i) std::swap(all[i], all[between(i, world - 1)]);
        all.resize(n);
        return all;
    }

  private:
    std::uint64_t state_;
};

std::size_t product(const sizes& v) {
    std::size_t p = 1;
    for (const std::size_t e : v) p *= e;
    return p;
}

sizes concat(sizes head, const sizes& tail) {
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
}

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

// A partition shape of `rank` dimensions of 1-3 workers each (1 more often), at most `budget`
// workers in all.
sizes draw_grid(draws& d, std::size_t rank, std::size_t budget) {
    sizes grid(rank, 1);
    for (std::size_t t = 0; t < rank; ++t) {
        const std::size_t parts = d.pick<std::size_t>({1, 1, 2, 3});
        if (product(grid) * parts <= budget) grid[t] = parts;
    }
    return grid;
}

json partition(const std::vector<int>& workers, const sizes& shape) { return {{"workers", workers}, {"shape", shape}}; }

// The input and output splits of P_w (1-3 each), at most `budget` workers together.
std::pair<std::size_t, std::size_t> draw_in_out(draws& d, std::size_t budget) {
    std::size_t p_in = 1, p_out = 1;
    do {
        p_in = d.between(1, 3), p_out = d.between(1, 3);
    } while (p_in * p_out > budget);
    return {p_in, p_out};
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

// ---- Refusals: a valid case spoilt in one way its layer must refuse on every worker.

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Whether every world rank is a worker of some partition of the case: only then does a refusal
// found at the first forward (by the layer's workers) reach every rank of the world.
bool no_idle_worker(const json& c) {
    std::set<int> members;
    for (const auto& [name, p] : c["partitions"].items())
        for (const int r : p["workers"]) members.insert(r);
    return members.size() == c["world_size"].get<std::size_t>();
}

std::string kernel_fit_text(const std::string& layer, std::size_t e, std::size_t length, std::size_t k,
                            std::size_t p, std::size_t dil) {
    const std::string n = std::to_string(dil * (k - 1) + 1);
    if (starts_with(layer, "MaxPool") || starts_with(layer, "AvgPool"))
        return "kernel " + std::to_string(k) + " (dilation " + std::to_string(dil) + ", extent " + n +
               ") does not fit in spatial dimension " + std::to_string(e) + " of length " + std::to_string(length) +
               " with padding " + std::to_string(p);
    const bool halo = layer == "HaloExchange";
    return std::string(halo ? "kernel does not fit in dimension " : "in spatial dimension ") + std::to_string(e) +
           ": extent " + std::to_string(length) + " + 2*padding " + std::to_string(p) + " < dilation " +
           std::to_string(dil) + (halo ? " * (kernel size " : " * (kernel_size ") + std::to_string(k) +
           " - 1) + 1 = " + n;
}

// A kernel longer than the padded input in one spatial dimension (the others keep theirs).
std::string spoil_kernel_fit(json& c, draws& d) {
    const std::string layer = c["layer"];
    json& o = c["options"];
    const std::size_t dims = o["kernel_size"].size(), e = d.between(0, dims - 1);
    const std::size_t lead = layer == "HaloExchange" ? 0 : 2, length = c["x_shape"][lead + e];
    const std::size_t p = o["padding"][e], dil = o.contains("dilation") ? std::size_t(o["dilation"][e]) : 1;
    const std::size_t k = (length + 2 * p) / dil + 2;
    o["kernel_size"][e] = k;
    return kernel_fit_text(layer, e, length, k, p, dil);
}

// A stride of 0 in one spatial dimension.
std::string spoil_stride(json& c, draws& d) {
    json& o = c["options"];
    const std::size_t dims = o["kernel_size"].size(), e = d.between(0, dims - 1);
    o["stride"][e] = 0;
    const sizes dilation = o.contains("dilation") ? o["dilation"].get<sizes>() : sizes(dims, 1);
    if (c["layer"] == "HaloExchange")
        return "dimension " + std::to_string(e) + ": kernel size " + o["kernel_size"][e].dump() +
               ", stride 0 and dilation " + std::to_string(dilation[e]) + " must be at least 1";
    return "kernel_size " + format_list(o["kernel_size"].get<sizes>()) + ", stride " +
           format_list(o["stride"].get<sizes>()) + " and dilation " + format_list(dilation) + " must all be at least 1";
}

// P_w with its two leading dimensions swapped: the same workers, split against P_x and P_y.
// `named`: how the refusal names it.
std::optional<std::string> spoil_weight_partition(json& c, const std::string& named) {
    json& shape = c["partitions"]["P_w"]["shape"];
    if (shape[0] == shape[1]) return std::nullopt;
    std::swap(shape[0], shape[1]);
    return named + " shape " + format_list(shape.get<sizes>()) + " does not match";
}

// A part of the balanced split of n over `parts` (DESIGN §3: the first n % parts get one more).
std::size_t balanced_part(std::size_t n, std::size_t parts, std::size_t i) { return n / parts + (i < n % parts); }

// in_channels one more than x has. Given the input shape, refused at construction. Learnt, at the
// first forward, naming the first piece of P_x (in partition order) of other channels than
// expected: input-channel block (x's channels) mod P_ci, where the split of one channel more
// differs, at spatial index 0.
std::string spoil_channels(json& c) {
    const sizes x = c["x_shape"], grid = c["partitions"]["P_x"]["shape"];
    const std::size_t dims = x.size() - 2, in = x[1] + 1;
    c["options"]["in_channels"] = in;
    const std::string extents = std::to_string(dims) + " spatial extent" + (dims == 1 ? "]" : "s]");
    if (!c.contains("input_shape"))
        return "input_shape " + format_list(x) + ", expected [batch, " + std::to_string(in) + ", " + extents;
    const std::size_t block = x[1] % grid[1];
    sizes piece{x[0], balanced_part(x[1], grid[1], block)};
    for (std::size_t e = 0; e < dims; ++e) piece.push_back(balanced_part(x[2 + e], grid[2 + e], 0));
    const std::size_t w = block * product(grid) / grid[1];
    return "x on P_x worker " + std::to_string(w) + " (world rank " +
           std::to_string(c["partitions"]["P_x"]["workers"][w].get<int>()) + ") has shape " + format_list(piece) +
           ", expected [batch, " + std::to_string(balanced_part(in, grid[1], block)) + ", " + extents;
}

std::optional<std::string> spoil_convolution(json& c, draws& d) {
    const std::string layer = c["layer"];
    const bool three = c["partitions"].contains("P_w");
    switch (d.between(0, 3)) {  // a spoiling that does not apply falls back to a kernel that does not fit
        case 0: return spoil_stride(c, d);
        case 1:  // the selector given P_y without P_w, or P_w without P_y
            if (!three || !starts_with(layer, "Conv")) break;
            if (d.one_in(2)) {
                c["partitions"].erase("P_w");
                return layer + ": P_y is given but P_w is missing";
            }
            c["partitions"].erase("P_y");
            return layer + ": P_w is given but P_y is missing";
        case 2:
            if (three) return spoil_weight_partition(c, "P_w");
            break;
        case 3: return spoil_channels(c);
    }
    return spoil_kernel_fit(c, d);
}

// Broadcast's P_x or SumReduce's P_y (the side of one worker per team) with more dimensions than
// the other side: trailing 1s, the same workers.
std::string spoil_team_side(json& c) {
    const bool broadcast = c["layer"] == "Broadcast";
    json& parts = c["partitions"];
    json& one = parts[broadcast ? "P_x" : "P_y"]["shape"];
    const std::size_t many = parts[broadcast ? "P_y" : "P_x"]["shape"].size();
    while (one.size() <= many) one.push_back(1);
    const auto side = [&](const char* name, const char* flag) {
        return std::string(name) + " shape " + format_list(parts[name]["shape"].get<sizes>()) +
               (c["options"][flag].get<bool>() ? " (transposed)" : "");
    };
    return c["layer"].get<std::string>() + ": " + side("P_x", "transpose_src") + " cannot " +
           (broadcast ? "broadcast" : "reduce") + " to " + side("P_y", "transpose_dest") + " (" +
           (broadcast ? "P_x" : "P_y") + " has dimension " + std::to_string(one.size()) + " > " +
           std::to_string(many) + ")";
}

// The refusal text `c`, spoilt, must give; none for layers without a spoiling here.
std::optional<std::string> spoil(json& c, draws& d) {
    const std::string layer = c["layer"];
    // A refusal at the first forward (a learnt input shape) reaches the layer's workers only.
    if (c.contains("input_shape") && !no_idle_worker(c)) c.erase("input_shape");
    std::optional<std::string> text;
    if (layer == "Broadcast" || layer == "SumReduce") {
        text = spoil_team_side(c);
    } else if (layer == "Linear") {
        text = spoil_weight_partition(c, "Linear: P_W");
    } else if (layer == "AllSumReduce") {
        const json& grid = c["partitions"]["P_x"]["shape"];
        c["options"]["axes_reduce"].push_back(grid.size());
        text = "AllSumReduce: axis " + std::to_string(grid.size()) + " out of range for P_x shape " +
               format_list(grid.get<sizes>());
    } else if (layer == "Repartition") {
        json& to = c["partitions"]["P_y"]["shape"];
        const std::string from = format_list(c["partitions"]["P_x"]["shape"].get<sizes>());
        to.push_back(1);
        text = "Repartition: P_x shape " + from + " and P_y shape " + format_list(to.get<sizes>()) +
               " differ in dimension";
    } else if (layer.find("Conv") != std::string::npos) {
        text = spoil_convolution(c, d);
    } else if (layer.find("Pool") != std::string::npos || layer == "HaloExchange") {
        text = d.one_in(2) ? spoil_stride(c, d) : spoil_kernel_fit(c, d);
    }
    return text;
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
        if (d.one_in(2)) c["dtype"] = "float32";
        c["seed"] = derive_seed(seed, 0x64617461ull, i);
        c["name"] = "random/" + std::to_string(seed) + "/" + std::to_string(i) + "_" + c["layer"].get<std::string>();
        c["expect"] = "pass";
        if (d.one_in(6))
            if (const auto refusal = spoil(c, d)) {
                c["expect"] = {{"error", *refusal}};
                c["name"] = c["name"].get<std::string>() + "_refused";
            }
        write_compactly(c, d);
        cases.push_back(std::move(c));
    }
    return cases;
}

}  // namespace distdl::verify
