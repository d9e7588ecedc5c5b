#include "verify/random_refusals.hpp"

#include <optional>
#include <set>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "core/tensor.hpp"

namespace distdl::verify {

namespace {

using namespace random_draws;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Whether every world rank is a worker of some partition of the case: only then does a refusal
// found at the first forward (by the layer's workers) reach every rank of the world.
bool no_idle_worker(const json& c) {
    std::set<int> members;
    for (const auto& [name, p] : c["partitions"].items())
        for (const int r : p["workers"]) members.insert(r);
    return members.size() == c["world_size"].get<std::size_t>();
}

// How a convolution says what shape it expected: "expected [batch, 3, 2 spatial extents]".
std::string expected_channels(std::size_t in_channels, std::size_t dims) {
    return "expected [batch, " + std::to_string(in_channels) + ", " + std::to_string(dims) + " spatial extent" +
           (dims == 1 ? "]" : "s]");
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
    return kernel_fit_refusal(layer, e, length, k, p, dil);
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
    if (!c.contains("input_shape")) return channels_refusal(x, in);
    const std::size_t block = x[1] % grid[1];
    sizes piece{x[0], balanced_part(x[1], grid[1], block)};
    for (std::size_t e = 0; e < dims; ++e) piece.push_back(balanced_part(x[2 + e], grid[2 + e], 0));
    const std::size_t w = block * volume(grid) / grid[1];
    return "x on P_x worker " + std::to_string(w) + " (world rank " +
           std::to_string(c["partitions"]["P_x"]["workers"][w].get<int>()) + ") has shape " + format_list(piece) +
           ", " + expected_channels(balanced_part(in, grid[1], block), dims);
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

}  // namespace

std::string kernel_fit_refusal(const std::string& layer, std::size_t e, std::size_t length, std::size_t k,
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

std::string channels_refusal(const random_draws::sizes& x_shape, std::size_t in_channels) {
    return "input_shape " + format_list(x_shape) + ", " + expected_channels(in_channels, x_shape.size() - 2);
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

}  // namespace distdl::verify
