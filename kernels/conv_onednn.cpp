#include "kernels/conv_onednn.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace distdl::kernels::detail {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

// oneDNN's gemm-based and reference convolutions are slower than our im2col path.
bool fast_implementation(const std::string& name) {
    return name.find("gemm") == std::string::npos && name.rfind("ref", 0) != 0;
}

// oneDNN 2.6.3's AVX-512 backward-weights kernel computes wrong weight gradients for 3-d
// convolutions whose depth (first spatial) padding exceeds a depth stride of 2 or more, and
// writes outside its buffers there (heap corruption): e.g. kernel 4, stride 2, padding 3 on a
// depth of 2-4. Found by a random case sweep; a scan of 3,000 geometries (kernels 2-8, strides
// 1-5, paddings 0-7, depths 1-16, 1 and 16 channels) failed exactly inside this rule and never
// outside it, nor along the other dimensions, in 1-d or 2-d, or with AVX2 only. Those passes
// run on im2col + BLAS instead.
bool weights_pass_is_broken(const conv_geometry& g) {
    return g.kernel_size.size() == 3 && g.stride[0] >= 2 && g.padding[0] > g.stride[0];
}

tag plain_tag(std::size_t rank) {
    return rank == 3 ? tag::abc : rank == 4 ? tag::abcd : tag::abcde;
}

memory::desc any_desc(const memory::dims& dims) { return memory::desc(dims, dt::f32, tag::any); }

tag channels_last_tag(std::size_t rank) {
    return rank == 3 ? tag::acb : rank == 4 ? tag::acdb : tag::acdeb;
}

// True when a layout rounds the channel dimension up (a blocked layout with fewer channels than
// its block: the padding lanes cost arithmetic and bandwidth).
bool pads_channels(const memory::desc& md) { return md.data.padded_dims[1] != md.data.dims[1]; }

dnnl::primitive_attr user_scratchpad() {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return attr;
}

void execute(dnnl::stream& s, const dnnl::primitive& p, std::unordered_map<int, memory> args,
             const memory& scratch) {
    if (scratch.get_desc().get_size() > 0) args.insert({DNNL_ARG_SCRATCHPAD, scratch});
    p.execute(s, args);
}

// A plain row-major buffer of the caller as seen by a primitive that may want another layout:
// `inner` is what the primitive reads or writes (the user memory itself when layouts agree).
struct staged {
    memory user, inner;
    dnnl::reorder convert;
    memory convert_scratch;
    bool reordered = false;

    void init(const dnnl::engine& eng, const memory::desc& user_md, const memory::desc& want, bool is_input) {
        user = memory(user_md, eng, DNNL_MEMORY_NONE);
        if (want == user_md) {
            inner = user;
            return;
        }
        inner = memory(want, eng);
        reordered = true;
        const auto pd = is_input ? dnnl::reorder::primitive_desc(eng, user_md, eng, want, user_scratchpad())
                                 : dnnl::reorder::primitive_desc(eng, want, eng, user_md, user_scratchpad());
        convert = dnnl::reorder(pd);
        convert_scratch = memory(pd.scratchpad_desc(), eng);
    }
    // Input: point at the caller's data and bring it into the primitive's layout.
    void pull(dnnl::stream& s, const float* data) {
        user.set_data_handle(const_cast<float*>(data));
        if (reordered) execute(s, convert, {{DNNL_ARG_SRC, user}, {DNNL_ARG_DST, inner}}, convert_scratch);
    }
    // Output: point at the caller's buffer (before the primitive runs), then push() after it.
    void bind(float* data) { user.set_data_handle(data); }
    void push(dnnl::stream& s) {
        if (reordered) execute(s, convert, {{DNNL_ARG_SRC, inner}, {DNNL_ARG_DST, user}}, convert_scratch);
    }
};

}  // namespace

struct onednn_convolution::runtime {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
};

struct onednn_convolution::plan {
    bool usable = false;  // the forward descriptor exists (also the hint for the backward passes)
    memory::desc src_md, wei_md, dst_md, bias_md;
    memory::desc src_act, dst_act;  // the activation layouts asked of every pass (`any` or channels-last)
    memory::dims strides, dilates, pad_l, pad_r;
    dnnl::convolution_forward::primitive_desc fwd_pd;
    std::string fwd_impl, bwd_data_impl, bwd_weights_impl;  // oneDNN's names, for diagnostics

    bool fwd_ok = false;
    dnnl::convolution_forward fwd;
    memory fwd_scratch, fwd_bias;
    staged fwd_src, fwd_wei, fwd_dst;
    const float* fwd_x = nullptr;  // the input of the last forward on this plan

    bool bwd_data_planned = false, bwd_data_ok = false;
    dnnl::convolution_backward_data bwd_data;
    memory bwd_data_scratch;
    staged bd_dy, bd_wei, bd_dx;
    const float* bd_dy_data = nullptr;  // the output gradient of the last backward_data on this plan

    bool bwd_weights_planned = false, bwd_weights_ok = false;
    dnnl::convolution_backward_weights bwd_weights;
    memory bwd_weights_scratch, bw_db;
    staged bw_x, bw_dy, bw_dw;
    std::vector<float> dw_buffer, db_buffer;  // this pass's gradients, added into the caller's
};

onednn_convolution::onednn_convolution(const conv_geometry& g) : g_(g), rt_(std::make_unique<runtime>()) {}
onednn_convolution::~onednn_convolution() = default;

onednn_convolution::plan& onednn_convolution::plan_for(const shape_t& x_shape) {
    auto found = plans_.find(x_shape);
    if (found != plans_.end()) return *found->second;
    auto p = std::make_unique<plan>();
    const std::size_t dims = g_.kernel_size.size();
    const shape_t y_shape = conv_output_shape(g_, x_shape);
    memory::dims src(x_shape.begin(), x_shape.end()), dst(y_shape.begin(), y_shape.end());
    memory::dims wei{memory::dim(g_.out_channels), memory::dim(g_.in_channels)};
    for (std::size_t e = 0; e < dims; ++e) {
        wei.push_back(memory::dim(g_.kernel_size[e]));
        p->strides.push_back(memory::dim(g_.stride[e]));
        p->dilates.push_back(memory::dim(g_.dilation[e]) - 1);  // oneDNN counts dilation from 0
        p->pad_l.push_back(memory::dim(g_.padding[e]));
        p->pad_r.push_back(memory::dim(g_.padding[e]));
    }
    p->src_md = memory::desc(src, dt::f32, plain_tag(src.size()));
    p->wei_md = memory::desc(wei, dt::f32, plain_tag(wei.size()));
    p->dst_md = memory::desc(dst, dt::f32, plain_tag(dst.size()));
    p->bias_md = memory::desc({memory::dim(g_.out_channels)}, dt::f32, tag::a);
    try {
        const auto algo = dnnl::algorithm::convolution_direct;
        const auto pk = dnnl::prop_kind::forward_training;
        auto forward_pd = [&](const memory::desc& src_act, const memory::desc& dst_act) {
            const auto desc = g_.bias ? dnnl::convolution_forward::desc(pk, algo, src_act, any_desc(wei), p->bias_md,
                                                                        dst_act, p->strides, p->dilates, p->pad_l,
                                                                        p->pad_r)
                                      : dnnl::convolution_forward::desc(pk, algo, src_act, any_desc(wei), dst_act,
                                                                        p->strides, p->dilates, p->pad_l, p->pad_r);
            return dnnl::convolution_forward::primitive_desc(desc, user_scratchpad(), rt_->engine);
        };
        // Layout rule: oneDNN's own choice (blocked by 16 channels on AVX-512, 8 on AVX2) when
        // both channel counts are multiples of 16 and it pads nothing; otherwise channels-last,
        // which pads nothing and keeps the AVX-512 kernels, when oneDNN has a fast kernel for it.
        // Otherwise a worker holding a slice of the channels gets either padded blocks (8 -> 8:
        // twice the lanes) or AVX2 kernels with 8-channel blocks. Measured (conv_bench conv_local,
        // 3x3, batch 8, all three passes): 8 -> 8 on 256x256 ~1.5x faster channels-last, 8 -> 16
        // on 130x256 ~1.35x, while 16 -> 16 is ~1.1x faster blocked.
        p->src_act = any_desc(src);
        p->dst_act = any_desc(dst);
        p->fwd_pd = forward_pd(p->src_act, p->dst_act);
        if (g_.in_channels % 16 != 0 || g_.out_channels % 16 != 0 || pads_channels(p->fwd_pd.src_desc()) ||
            pads_channels(p->fwd_pd.dst_desc())) {
            const memory::desc src_last(src, dt::f32, channels_last_tag(src.size()));
            const memory::desc dst_last(dst, dt::f32, channels_last_tag(dst.size()));
            try {
                auto last_pd = forward_pd(src_last, dst_last);
                if (fast_implementation(last_pd.impl_info_str())) {
                    p->fwd_pd = last_pd;
                    p->src_act = src_last;
                    p->dst_act = dst_last;
                }
            } catch (const dnnl::error&) {
                // no channels-last kernel: keep the blocked one
            }
        }
        p->usable = true;
        p->fwd_impl = p->fwd_pd.impl_info_str();
        if (fast_implementation(p->fwd_impl)) {
            auto& eng = rt_->engine;
            p->fwd = dnnl::convolution_forward(p->fwd_pd);
            p->fwd_scratch = memory(p->fwd_pd.scratchpad_desc(), eng);
            p->fwd_src.init(eng, p->src_md, p->fwd_pd.src_desc(), true);
            p->fwd_wei.init(eng, p->wei_md, p->fwd_pd.weights_desc(), true);
            p->fwd_dst.init(eng, p->dst_md, p->fwd_pd.dst_desc(), false);
            if (g_.bias) p->fwd_bias = memory(p->bias_md, eng, DNNL_MEMORY_NONE);
            p->fwd_ok = true;
        }
    } catch (const dnnl::error&) {
        // oneDNN cannot express this problem: every pass falls back
    }
    return *plans_.emplace(x_shape, std::move(p)).first->second;
}

bool onednn_convolution::forward(const shape_t& x_shape, const float* x, const float* w, const float* b, float* y) {
    last_forward_ = nullptr;  // set again below when this forward runs here
    plan& p = plan_for(x_shape);
    if (!p.fwd_ok) return false;
    last_impl_ = p.fwd_impl;
    auto& s = rt_->stream;
    p.fwd_src.pull(s, x);
    p.fwd_wei.pull(s, w);
    p.fwd_dst.bind(y);
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, p.fwd_src.inner}, {DNNL_ARG_WEIGHTS, p.fwd_wei.inner}, {DNNL_ARG_DST, p.fwd_dst.inner}};
    if (g_.bias) {
        p.fwd_bias.set_data_handle(const_cast<float*>(b));
        args.insert({DNNL_ARG_BIAS, p.fwd_bias});
    }
    execute(s, p.fwd, args, p.fwd_scratch);
    p.fwd_dst.push(s);
    s.wait();
    p.fwd_x = x;
    last_forward_ = &p;
    return true;
}

bool onednn_convolution::backward_data(const shape_t& x_shape, const float* dy, const float* w, float* dx) {
    last_backward_data_ = nullptr;
    plan& p = plan_for(x_shape);
    if (!p.usable) return false;
    auto& eng = rt_->engine;
    if (!p.bwd_data_planned) {
        p.bwd_data_planned = true;
        try {
            const dnnl::convolution_backward_data::desc desc(dnnl::algorithm::convolution_direct,
                                                             p.src_act, any_desc(p.wei_md.dims()), p.dst_act,
                                                             p.strides, p.dilates, p.pad_l,
                                                             p.pad_r);
            const dnnl::convolution_backward_data::primitive_desc pd(desc, user_scratchpad(), eng, p.fwd_pd);
            p.bwd_data_impl = pd.impl_info_str();
            if (fast_implementation(p.bwd_data_impl)) {
                p.bwd_data = dnnl::convolution_backward_data(pd);
                p.bwd_data_scratch = memory(pd.scratchpad_desc(), eng);
                p.bd_dy.init(eng, p.dst_md, pd.diff_dst_desc(), true);
                p.bd_wei.init(eng, p.wei_md, pd.weights_desc(), true);
                p.bd_dx.init(eng, p.src_md, pd.diff_src_desc(), false);
                p.bwd_data_ok = true;
            }
        } catch (const dnnl::error&) {
        }
    }
    if (!p.bwd_data_ok) return false;
    last_impl_ = p.bwd_data_impl;
    auto& s = rt_->stream;
    p.bd_dy.pull(s, dy);
    p.bd_wei.pull(s, w);
    p.bd_dx.bind(dx);
    execute(s, p.bwd_data,
            {{DNNL_ARG_DIFF_DST, p.bd_dy.inner}, {DNNL_ARG_WEIGHTS, p.bd_wei.inner},
             {DNNL_ARG_DIFF_SRC, p.bd_dx.inner}},
            p.bwd_data_scratch);
    p.bd_dx.push(s);
    s.wait();
    p.bd_dy_data = dy;
    last_backward_data_ = &p;
    return true;
}

bool onednn_convolution::backward_weights(const shape_t& x_shape, const float* x, const float* dy, float* dw,
                                          float* db, bool reuse_converted) {
    plan& p = plan_for(x_shape);
    if (!p.usable) return false;
    auto& eng = rt_->engine;
    if (!p.bwd_weights_planned) {
        p.bwd_weights_planned = true;
        if (!weights_pass_is_broken(g_)) try {
            const auto algo = dnnl::algorithm::convolution_direct;
            const auto src = p.src_act, wei = any_desc(p.wei_md.dims()), dst = p.dst_act;
            const auto desc = g_.bias ? dnnl::convolution_backward_weights::desc(algo, src, wei, p.bias_md, dst,
                                                                                 p.strides, p.dilates, p.pad_l,
                                                                                 p.pad_r)
                                      : dnnl::convolution_backward_weights::desc(algo, src, wei, dst, p.strides,
                                                                                 p.dilates, p.pad_l, p.pad_r);
            const dnnl::convolution_backward_weights::primitive_desc pd(desc, user_scratchpad(), eng, p.fwd_pd);
            p.bwd_weights_impl = pd.impl_info_str();
            if (fast_implementation(p.bwd_weights_impl)) {
                p.bwd_weights = dnnl::convolution_backward_weights(pd);
                p.bwd_weights_scratch = memory(pd.scratchpad_desc(), eng);
                p.bw_x.init(eng, p.src_md, pd.src_desc(), true);
                p.bw_dy.init(eng, p.dst_md, pd.diff_dst_desc(), true);
                p.bw_dw.init(eng, p.wei_md, pd.diff_weights_desc(), false);
                p.dw_buffer.resize(p.wei_md.get_size() / sizeof(float));
                if (g_.bias) {
                    p.db_buffer.resize(g_.out_channels);
                    p.bw_db = memory(p.bias_md, eng, p.db_buffer.data());
                }
                p.bwd_weights_ok = true;
            }
        } catch (const dnnl::error&) {
        }
    }
    if (!p.bwd_weights_ok) return false;
    last_impl_ = p.bwd_weights_impl;
    auto& s = rt_->stream;
    // x and dy as the forward and backward-data passes converted them, when the layouts agree
    // and the caller vouches that they are those passes' (unchanged) tensors.
    const bool x_converted = reuse_converted && last_forward_ == &p && p.fwd_x == x && p.fwd_src.reordered &&
                             p.bw_x.reordered && p.fwd_src.inner.get_desc() == p.bw_x.inner.get_desc();
    const bool dy_converted = reuse_converted && last_backward_data_ == &p && p.bd_dy_data == dy &&
                              p.bd_dy.reordered && p.bw_dy.reordered &&
                              p.bd_dy.inner.get_desc() == p.bw_dy.inner.get_desc();
    if (!x_converted) p.bw_x.pull(s, x);
    if (!dy_converted) p.bw_dy.pull(s, dy);
    p.bw_dw.bind(p.dw_buffer.data());  // oneDNN overwrites; we accumulate below
    std::unordered_map<int, memory> args{{DNNL_ARG_SRC, x_converted ? p.fwd_src.inner : p.bw_x.inner},
                                         {DNNL_ARG_DIFF_DST, dy_converted ? p.bd_dy.inner : p.bw_dy.inner},
                                         {DNNL_ARG_DIFF_WEIGHTS, p.bw_dw.inner}};
    if (g_.bias) args.insert({DNNL_ARG_DIFF_BIAS, p.bw_db});
    execute(s, p.bwd_weights, args, p.bwd_weights_scratch);
    p.bw_dw.push(s);
    s.wait();
    for (std::size_t i = 0; i < p.dw_buffer.size(); ++i) dw[i] += p.dw_buffer[i];
    if (g_.bias)
        for (std::size_t i = 0; i < p.db_buffer.size(); ++i) db[i] += p.db_buffer[i];
    return true;
}

}  // namespace distdl::kernels::detail
