#include "verify/random_sequential.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "verify/random_refusals.hpp"

namespace distdl::verify {

namespace {

using namespace random_draws;

enum class stage_kind { feature, channel, general, select, max_pool, avg_pool };

// The chain as it is drawn: the global tensor between stages and the partition it lies on.
class chain_draw {
  public:
    chain_draw(draws& d, std::size_t world, sizes shape) : d_(d), world_(world), shape_(std::move(shape)) {}

    void add(stage_kind kind) {
        const std::size_t dims = shape_.size() - 2;
        const bool max = kind == stage_kind::max_pool, pool = max || kind == stage_kind::avg_pool;
        const fitted g = fit(sizes(shape_.begin() + 2, shape_.end()), max, !pool || max);
        json options = {{"kernel_size", g.kernel}, {"stride", g.stride}, {"padding", g.padding}};
        if (!pool || max) options["dilation"] = g.dilation;
        std::size_t out_channels = shape_[1];
        if (!pool) {
            out_channels = d_.pick<std::size_t>({1, 2, 3, 5, 8});
            options["in_channels"] = shape_[1];
            options["out_channels"] = out_channels;
            options["bias"] = !d_.one_in(4);
        }
        const bool feature = pool || kind == stage_kind::feature || (kind == stage_kind::select && d_.one_in(2));
        json stage = {{"options", options}};
        if (feature) {
            const std::string P_x = input_partition(1, spatial_split(dims, world_), true, false);
            stage["partitions"] = {{"P_x", P_x}};
            out_ = P_x;
        } else {
            const bool channel = kind == stage_kind::channel;
            const std::size_t p_in = shape_[1] == 1 ? 1 : d_.between(1, std::min<std::size_t>(3, world_));
            const sizes split = channel ? sizes(dims, 1) : spatial_split(dims, world_ / p_in);
            const std::string P_x = input_partition(p_in, split, false, channel);
            const sizes in_shape = shapes_[P_x];  // a reused partition may split otherwise than drawn
            const sizes grid(in_shape.begin() + 2, in_shape.end());
            const std::size_t room = std::max<std::size_t>(1, world_ / (in_shape[1] * product(grid)));
            const std::size_t p_out = d_.between(1, std::min<std::size_t>(3, room));
            const std::string P_y = add_partition(concat({1, p_out}, grid));
            stage["partitions"] = {{"P_x", P_x}, {"P_y", P_y},
                                   {"P_w", add_partition(concat({p_out, in_shape[1]}, grid))}};
            out_ = P_y;
        }
        stage["layer"] = layer_name(kind, dims);
        layers_.push_back({stages_.size(), shape_, pool, false});
        stages_.push_back(stage);
        shape_ = concat({shape_[0], out_channels}, g.length);
    }

    // A Linear stage: x [batch, features] on P_x = 1 x p_in (half the time the partition the stage
    // before left its output on, else a new one after a Repartition to it, which never splits one
    // feature), W on P_w = p_out x p_in and y on P_y = 1 x p_out, each on its own random workers.
    void add_linear() {
        std::string P_x = out_;
        if (out_.empty() || shapes_[out_][0] != 1 || !d_.one_in(2)) {  // a Flatten's [b, 1] is no P_x for b > 1
            const std::size_t most = out_.empty() || shape_[1] > 1 ? std::min<std::size_t>(3, world_) : 1;
            P_x = repartitioned_to({1, d_.between(1, most)});
        }
        const std::size_t p_in = shapes_[P_x][1];
        const std::size_t p_out = d_.between(1, std::clamp<std::size_t>(world_ / p_in, 1, 3));
        const std::size_t out_features = d_.between(1, 9);
        const std::string P_y = add_partition({1, p_out}), P_w = add_partition({p_out, p_in});
        const json options = {{"in_features", shape_[1]}, {"out_features", out_features}, {"bias", !d_.one_in(4)}};
        stages_.push_back(
            {{"layer", "Linear"}, {"partitions", {{"P_x", P_x}, {"P_y", P_y}, {"P_w", P_w}}}, {"options", options}});
        out_ = P_y;
        shape_ = {shape_[0], out_features};
    }

    // A classifier's head after the convolutions and poolings: a Repartition to a partition that
    // splits the batch only (a batch of 1 stays whole), Flatten there onto [b, 1] on the same
    // workers, then 1 or 2 Linear layers (half the time a ReLU between). `spoil`: where the last
    // stage's partition splits a feature dimension, Flatten straight on it (the Repartition
    // missing), which it refuses at construction: returns the refusal's text.
    std::optional<std::string> add_head(bool spoil) {
        std::optional<std::string> refusal;
        const sizes last = shapes_[out_];
        const auto split = std::find_if(last.begin() + 1, last.end(), [](std::size_t g) { return g > 1; });
        std::string P_x, P_y;
        if (spoil && split != last.end()) {
            P_x = out_;
            P_y = add_partition({last[0], 1});
            refusal = "Flatten: P_x " + format_list(last) + " splits dimension " +
                      std::to_string(split - last.begin()) + " into " + std::to_string(*split);
        } else {
            const std::size_t b = shape_[0] == 1 ? 1 : d_.between(1, std::min<std::size_t>(3, world_));
            P_x = repartitioned_to(concat({b}, sizes(shape_.size() - 1, 1)));
            P_y = add_partition({b, 1}, partitions_[P_x]["workers"].get<std::vector<int>>());
        }
        stages_.push_back({{"layer", "Flatten"}, {"partitions", {{"P_x", P_x}, {"P_y", P_y}}}});
        out_ = P_y;
        shape_ = {shape_[0], product(sizes(shape_.begin() + 1, shape_.end()))};
        const std::size_t linears = d_.between(1, 2);
        for (std::size_t i = 0; i < linears; ++i) {
            if (i > 0 && d_.one_in(2))  // a ReLU between the two, where the first left its output
                stages_.push_back({{"layer", "ReLU"}, {"partitions", {{"P_x", out_}}}});
            add_linear();
        }
        return refusal;
    }

    // One convolution or pooling refuses the input shape the chain gives it, at construction: a
    // convolution given one input channel more, or a kernel longer than the padded input in one
    // dimension. Returns the refusal's text.
    std::string spoil(draws& s) {
        drawn_layer& l = layers_[s.between(0, layers_.size() - 1)];
        l.spoilt = true;
        json& stage = stages_[l.index];
        json& o = stage["options"];
        if (!l.pool && s.one_in(2)) {
            o["in_channels"] = l.input[1] + 1;
            return channels_refusal(l.input, l.input[1] + 1);
        }
        const std::size_t e = s.between(0, l.input.size() - 3), length = l.input[2 + e];
        const std::size_t p = o["padding"][e], dil = o.contains("dilation") ? std::size_t(o["dilation"][e]) : 1;
        const std::size_t k = (length + 2 * p) / dil + 2;
        o["kernel_size"][e] = k;
        return kernel_fit_refusal(stage["layer"], e, length, k, p, dil);
    }

    // Half the convolutions and poolings learn their input shape at the first forward, as a model
    // built without the input's shape does; a spoilt one keeps it given, so that it refuses at
    // construction on every worker (a refusal at the first forward reaches only its own workers).
    void learn_shapes(draws& s) {
        for (const auto& l : layers_)
            if (!l.spoilt && s.one_in(2)) stages_[l.index]["input_shape"] = "learnt";
    }

    // A ReLU after each convolution half the time, as `s` draws it, on the convolution's output
    // partition (the next stage's input is unchanged). (The ties its zeros give a max pooling after
    // it do not test the first-maximum rule: ReLU's adjoint zeroes those gradients; the pooling
    // tests' small-integer inputs do.)
    void add_relus(draws& s) {
        json with = json::array();
        for (const auto& stage : stages_) {
            with.push_back(stage);
            const std::string layer = stage["layer"];
            if (layer.find("Conv") == std::string::npos || !s.one_in(2)) continue;
            const json& parts = stage["partitions"];
            const json& output = parts.contains("P_y") ? parts["P_y"] : parts["P_x"];
            with.push_back({{"layer", "ReLU"}, {"partitions", {{"P_x", output}}}});
        }
        stages_ = with;
    }

    json partitions() const { return partitions_; }
    json stages() const { return stages_; }

  private:
    // A stage's spatial geometry and output lengths.
    struct fitted {
        sizes kernel, stride, padding, dilation, length;
    };

    // A kernel that fits each input length n (shrunk where the draw does not), and for max pooling
    // no window of padding only (whose -inf a later convolution would make NaN): then no padding,
    // so that every window starts on an input.
    fitted fit(const sizes& lengths, bool max, bool dilated) {
        fitted g;
        for (const std::size_t n : lengths) {
            std::size_t k = d_.between(1, lengths.size() == 3 ? 4 : 5), dil = dilated ? d_.between(1, 2) : 1;
            std::size_t p = d_.between(0, 3);
            const std::size_t s = d_.between(1, 3);
            if (dil * (k - 1) + 1 > n + 2 * p) dil = 1, k = std::min(k, n + 2 * p);
            if (max && !every_window_reads_input(n, k, s, p, dil)) {
                p = 0;
                if (dil * (k - 1) + 1 > n) dil = 1, k = std::min(k, n);
            }
            g.kernel.push_back(k), g.stride.push_back(s), g.padding.push_back(p), g.dilation.push_back(dil);
            g.length.push_back(kernel_output_length(n, k, s, p, dil));
        }
        return g;
    }

    static std::string layer_name(stage_kind kind, std::size_t dims) {
        static const char* const names[] = {"FeatureConv", "ChannelConv", "GeneralConv", "Conv", "MaxPool", "AvgPool"};
        return names[int(kind)] + std::to_string(dims) + "d";
    }

    // A split of the spatial dimensions that a Repartition may make: an extent of 1 stays whole.
    sizes spatial_split(std::size_t dims, std::size_t budget) {
        sizes split = draw_grid(d_, dims, budget);
        for (std::size_t e = 0; e < dims; ++e)
            if (shape_[2 + e] == 1) split[e] = 1;
        return split;
    }

    // A new partition of `shape` on random workers, or on the given ones (in that order).
    std::string add_partition(const sizes& shape) { return add_partition(shape, d_.workers(product(shape), world_)); }
    std::string add_partition(const sizes& shape, const std::vector<int>& workers) {
        const std::string name = "P_" + std::to_string(partitions_.size());
        partitions_[name] = partition(workers, shape);
        shapes_[name] = shape;
        return name;
    }

    // The stage's input partition, 1 x channels x split (channels 1: a feature layout; split all
    // 1: a channel layout; else general): half the time the partition the last stage's output
    // lies on, where that fits the layout; else a new one, after a Repartition to it.
    std::string input_partition(std::size_t channels, const sizes& split, bool feature, bool channel) {
        if (!out_.empty() && d_.one_in(2)) {
            const sizes& last = shapes_[out_];
            const bool whole_space = std::all_of(last.begin() + 2, last.end(), [](std::size_t e) { return e == 1; });
            if ((feature && last[1] == 1) || (channel && whole_space) || (!feature && !channel)) return out_;
        }
        return repartitioned_to(concat({1, channels}, split));
    }

    // A new partition of `shape` for the next stage's input, after a Repartition to it from the
    // partition the stage before left its output on (none before the first stage).
    std::string repartitioned_to(const sizes& shape) {
        const std::string name = add_partition(shape);
        if (!out_.empty())
            stages_.push_back({{"layer", "Repartition"}, {"partitions", {{"P_x", out_}, {"P_y", name}}}});
        return name;
    }

    draws& d_;
    std::size_t world_;
    sizes shape_;      // the global tensor the next stage takes
    std::string out_;  // the partition it lies on (empty: the case's input, not yet placed)
    json partitions_ = json::object(), stages_ = json::array();
    // The convolutions and poolings: where in stages_, the global input they are built with.
    struct drawn_layer {
        std::size_t index;
        sizes input;
        bool pool;
        bool spoilt = false;
    };
    std::vector<drawn_layer> layers_;
    std::map<std::string, sizes> shapes_;
};

}  // namespace

std::optional<std::string> add_sequential(json& c, draws& d, draws& spoiler, std::size_t max_world, std::size_t batch,
                                          std::size_t dims) {
    const bool linear = spoiler.one_in(4);
    const std::size_t world = d.between(std::max<std::size_t>(1, max_world / 2), std::max<std::size_t>(1, max_world));
    sizes shape{batch, d.between(1, linear ? 9 : 4)};
    if (!linear)
        for (std::size_t e = 0; e < dims; ++e) shape.push_back(d.between(1, dims == 3 ? 6 : 12));
    chain_draw chain(d, world, shape);
    const std::size_t stages = d.between(2, 4);
    for (std::size_t i = 0; i < stages; ++i) {
        if (linear) chain.add_linear();
        else chain.add(static_cast<stage_kind>(d.between(0, 5)));
    }
    std::optional<std::string> refusal;
    if (!linear && spoiler.one_in(6)) refusal = chain.spoil(spoiler);
    // Drawn last, so that the chains drawn before the heads were added stayed as they were. A
    // head of an unspoilt chain is spoilt one time in 4.
    if (!linear && spoiler.one_in(3)) {
        const auto missing_repartition = chain.add_head(!refusal && spoiler.one_in(4));
        if (missing_repartition) refusal = missing_repartition;
    }
    if (!linear) {
        chain.learn_shapes(spoiler);
        chain.add_relus(spoiler);
    }
    c["layer"] = "Sequential";
    c["world_size"] = world;
    c["partitions"] = chain.partitions();
    c["stages"] = chain.stages();
    c["x_shape"] = shape;
    return refusal;
}

}  // namespace distdl::verify
