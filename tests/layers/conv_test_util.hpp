#pragma once
// The parameters a worker holds of a distributed convolution, against the global model.
#include <algorithm>
#include <string>
#include <vector>

#include "core/module.hpp"
#include "layers/conv_initial.hpp"
#include "tests/layers/layer_test_util.hpp"

namespace distdl::testing {

// `params`: what worker `pw` of P_w (shape `P_w`, P_x's for a feature-distributed convolution;
// -1: not a member) holds. Owners are the workers (co, ci, 0..0), holding their weight block,
// and those of ci = 0 also their bias block: values bit-exact (the initialisation does not
// depend on the partitions), gradients against the accumulated dw_sum and db_sum, within rounding
// of the largest value of the block or of the given scale when larger (check_close).
template <class T>
void check_conv_parameters(const std::vector<parameter<T>*>& params, const shape_t& P_w, int pw,
                           const conv_spec& spec, const conv_parameters<T>& model, const tensor<T>& dw_sum,
                           const tensor<T>& db_sum, double weight_scale = 0, double bias_scale = 0) {
    const shape_t at = pw >= 0 ? unravel_index(std::size_t(pw), P_w) : shape_t{};
    const bool owner = pw >= 0 && std::all_of(at.begin() + 2, at.end(), [](std::size_t i) { return i == 0; });
    if (!owner) {
        DCHECK(params.empty());
        return;
    }
    const bool with_bias = spec.bias && at[1] == 0;
    DCHECK_EQ(params.size(), std::size_t(with_bias ? 2 : 1));
    const std::size_t o0 = balanced_start(spec.out_channels, P_w[0], at[0]);
    const std::size_t o1 = balanced_stop(spec.out_channels, P_w[0], at[0]);
    const std::size_t i0 = balanced_start(spec.in_channels, P_w[1], at[1]);
    const std::size_t i1 = balanced_stop(spec.in_channels, P_w[1], at[1]);
    auto block = [&](const tensor<T>& w) {
        xt::xstrided_slice_vector sv{xt::range(o0, o1), xt::range(i0, i1), xt::ellipsis()};
        return tensor<T>(xt::strided_view(w, sv));
    };
    auto segment = [&](const tensor<T>& b) { return tensor<T>(xt::view(b, xt::range(o0, o1))); };
    DCHECK_EQ(params[0]->name, std::string("weight"));
    DCHECK(same_bits(params[0]->value, block(model.weight)));
    check_close(params[0]->grad, block(dw_sum), "weight gradient", weight_scale);
    if (with_bias) {
        DCHECK_EQ(params[1]->name, std::string("bias"));
        DCHECK(same_bits(params[1]->value, segment(model.bias)));
        check_close(params[1]->grad, segment(db_sum), "bias gradient", bias_scale);
    }
}

}  // namespace distdl::testing
