#include "layers/sequential.hpp"

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
    const std::size_t n = modules_.size();
    if (n == 0) {
        y = x;
        return;
    }
    const tensor<T>* in = &x;
    for (std::size_t i = 0; i + 1 < n; ++i) {
        modules_[i]->forward(*in, activations_[i]);
        in = &activations_[i];
    }
    modules_[n - 1]->forward(*in, y);
}

template <class T>
void sequential<T>::do_adjoint(const tensor<T>& dy, tensor<T>& dx) {
    const std::size_t n = modules_.size();
    if (n == 0) {
        dx = dy;
        return;
    }
    const tensor<T>* in = &dy;
    for (std::size_t i = n - 1; i > 0; --i) {
        modules_[i]->adjoint(*in, gradients_[i]);
        in = &gradients_[i];
    }
    modules_[0]->adjoint(*in, dx);
}

template class sequential<float>;
template class sequential<double>;

}  // namespace distdl
