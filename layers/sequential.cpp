#include "layers/sequential.hpp"

#include <cmath>
#include <exception>
#include <string>

#include "core/error.hpp"

namespace distdl {

template <class T>
sequential<T>::sequential(std::vector<std::unique_ptr<module<T>>> modules) {
    for (auto& m : modules) append(std::move(m));
}

template <class T>
module<T>& sequential<T>::append(std::unique_ptr<module<T>> m) {
    DISTDL_REQUIRE(m != nullptr, "sequential: module " << modules_.size() << " is null");
    modules_.push_back(std::move(m));
    activations_.resize(modules_.size());
    gradients_.resize(modules_.size());
    return *modules_.back();
}

template <class T>
std::vector<parameter<T>*> sequential<T>::parameters() {
    std::vector<parameter<T>*> all;
    for (auto& m : modules_) {
        auto mine = m->parameters();
        all.insert(all.end(), mine.begin(), mine.end());
    }
    return all;
}

template <class T>
void sequential<T>::zero_grad() {
    for (auto* p : parameters()) p->grad.fill(T(0));
}

template <class T>
void sequential<T>::do_forward(const tensor<T>& x, tensor<T>& y) {
    run_chain(x, y, false);
}

template <class T>
void sequential<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    run_chain(dy, dx, true);
}

namespace {

// What a module that moves or sums data makes of the failure mark (sequential.hpp, Errors):
// zero-dimensional, NaN (a sum of marks stays NaN). No module makes a zero-dimensional tensor
// of valid input.
template <class T>
bool is_failure_mark(const tensor<T>& t) {
    return t.dimension() == 0 && std::isnan(t.data()[0]);
}

}  // namespace

template <class T>
void sequential<T>::run_chain(const tensor<T>& in, tensor<T>& out, bool adjoint) {
    const std::size_t n = modules_.size();
    if (n == 0) {
        out = in;
        return;
    }
    std::exception_ptr failure;
    const tensor<T>* arg = &in;
    for (std::size_t step = 0; step < n; ++step) {
        const std::size_t i = adjoint ? n - 1 - step : step;
        tensor<T>& result = step + 1 == n ? out : adjoint ? gradients_[i] : activations_[i];
        try {
            if (adjoint) modules_[i]->adjoint(failure ? failure_mark_ : *arg, result);
            else modules_[i]->forward(failure ? failure_mark_ : *arg, result);
            if (!failure && is_failure_mark(result))
                throw invalid_argument("sequential: module [" + std::to_string(i) + "] of " + std::to_string(n) +
                                       " delivered the mark of a failure in " + (adjoint ? "adjoint" : "forward") +
                                       ": an earlier module refused its input on another worker of the chain, "
                                       "whose error says why");
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
        arg = &result;
    }
    if (failure) std::rethrow_exception(failure);
}

template class sequential<float>;
template class sequential<double>;

}  // namespace distdl
