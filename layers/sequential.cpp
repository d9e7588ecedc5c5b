#include "layers/sequential.hpp"

#include <bit>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "core/detail/argument_agreement.hpp"
#include "core/error.hpp"

namespace distdl {

namespace {

// Why a module cannot read what the one before it leaves, as the end of a sentence about the
// module (empty: it can, or one of them does not say, or a partition names no members on this
// worker: a per-team one outside its team).
std::string link_problem(const cartesian_partition* left, const cartesian_partition* read) {
    auto known = [](const cartesian_partition* p) { return p && p->members().size() == volume(p->shape()); };
    if (!known(left) || !known(read) || left->world_comm() != read->world_comm()) return {};
    shape_t a = left->shape(), b = read->shape();
    if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
    if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
    if (a == b && left->members() == read->members()) return {};
    // A grid of more dimensions read as a 2-d one: likely a convolution's or pooling's N x C x L..
    // output feeding Linear, whose rank no Repartition changes (Flatten makes N x features).
    const std::string remedy =
        left->shape().size() > 2 && read->shape().size() == 2
            ? "a Repartition between them moves the data; to make N x C x L.. into N x features, Flatten it on a "
              "partition that splits only the batch: Repartition, Flatten, Repartition"
            : "a Repartition between them moves the data";
    return " takes its input on a partition of shape " + format_list(read->shape()) + " over world ranks " +
           detail::format_rank_set(read->members()) + ", but the module before it leaves its output on one of shape " +
           format_list(left->shape()) + " over world ranks " + detail::format_rank_set(left->members()) +
           ": its workers would read other blocks than they hold (" + remedy + ")";
}

// An empty chain (or one of empty chains): the identity, transparent to the links around it.
template <class T>
bool is_identity_chain(const module<T>& m) {
    const auto* chain = dynamic_cast<const sequential<T>*>(&m);
    return chain != nullptr && chain->is_identity();
}

}  // namespace

template <class T>
sequential<T>::sequential(std::vector<std::unique_ptr<module<T>>> modules) {
    for (auto& m : modules) append(std::move(m));
}

template <class T>
module<T>& sequential<T>::append(std::unique_ptr<module<T>> m) {
    DISTDL_REQUIRE(m != nullptr, "sequential: module " << modules_.size() << " is null");
    modules_.push_back(std::move(m));
    links_.resize(modules_.size());
    activations_.resize(modules_.size());
    gradients_.resize(modules_.size());
    return *modules_.back();
}

template <class T>
module<T>& sequential<T>::operator[](std::size_t i) {
    DISTDL_REQUIRE(i < modules_.size(), "sequential: module [" << i << "] asked for, the chain has " << modules_.size()
                                                               << " (indices 0 to size() - 1)");
    return *modules_[i];
}

template <class T>
bool sequential<T>::is_identity() const {
    for (const auto& m : modules_)
        if (!is_identity_chain(*m)) return false;
    return true;
}

template <class T>
const std::string& sequential<T>::link_problem_into(std::size_t k) {
    // The module before k that is not the identity (whose output k reads); none: no link to judge.
    std::size_t before = k;
    while (before > 0 && is_identity_chain(*modules_[before - 1])) --before;
    const bool judged = before > 0 && !is_identity_chain(*modules_[k]);
    const cartesian_partition* left = judged ? modules_[before - 1]->output_partition() : nullptr;
    const cartesian_partition* read = judged ? modules_[k]->input_partition() : nullptr;
    link& l = links_[k];
    if (l.left != left || l.read != read) l = {left, read, link_problem(left, read)};
    return l.problem;
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
std::vector<std::pair<std::string, parameter<T>*>> sequential<T>::named_parameters() {
    std::vector<std::pair<std::string, parameter<T>*>> all;
    for (std::size_t i = 0; i < modules_.size(); ++i)
        for (auto& [path, p] : modules_[i]->named_parameters()) all.emplace_back(std::to_string(i) + "." + path, p);
    return all;
}

template <class T>
const cartesian_partition* sequential<T>::input_partition() const {
    for (const auto& m : modules_)
        if (!is_identity_chain(*m)) return m->input_partition();
    return nullptr;
}

template <class T>
const cartesian_partition* sequential<T>::output_partition() const {
    for (auto m = modules_.rbegin(); m != modules_.rend(); ++m)
        if (!is_identity_chain(**m)) return (*m)->output_partition();
    return nullptr;
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

// The mark's bits: a quiet NaN with the payload 0xD15D. Copies keep them, and so do sums, where
// a NaN operand's payload passes to the result (as IEEE 754 recommends and x86 and ARM do).
template <class T>
using mark_bits_t = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;

template <class T>
constexpr mark_bits_t<T> mark_bits() {
    if constexpr (sizeof(T) == 8) return 0x7ff800000000d15dull;
    else return 0x7fc0d15du;
}

// What a module that moves or sums data makes of the failure mark (sequential.hpp, Errors):
// zero-dimensional, the mark's NaN (either sign). No module makes a zero-dimensional tensor of
// valid input, nor that NaN of its own.
template <class T>
bool is_failure_mark(const tensor<T>& t) {
    constexpr mark_bits_t<T> sign = mark_bits_t<T>(1) << (8 * sizeof(T) - 1);
    return t.dimension() == 0 && (std::bit_cast<mark_bits_t<T>>(t.data()[0]) & ~sign) == mark_bits<T>();
}

}  // namespace

template <class T>
T sequential<T>::failure_mark_value() {
    return std::bit_cast<T>(mark_bits<T>());
}

template <class T>
void sequential<T>::run_chain(const tensor<T>& in, tensor<T>& out, bool adjoint) {
    const std::size_t n = modules_.size();
    if (n == 0) {
        out = in;
        return;
    }
    // "sequential: module [m] of n", which every refusal of the chain starts with (built only
    // for one: a call that succeeds makes no string).
    const auto place = [n](std::size_t m) {
        return "sequential: module [" + std::to_string(m) + "] of " + std::to_string(n);
    };
    std::exception_ptr failure;
    const tensor<T>* arg = &in;
    for (std::size_t step = 0; step < n; ++step) {
        const std::size_t i = adjoint ? n - 1 - step : step;
        tensor<T>& result = step + 1 == n ? out : adjoint ? gradients_[i] : activations_[i];
        const std::size_t k = adjoint ? i + 1 : i;  // the link between modules k - 1 and k (step > 0)
        if (step > 0 && !failure && !link_problem_into(k).empty())  // refused like a failure's mark
            failure = std::make_exception_ptr(invalid_argument(place(k) + link_problem_into(k)));
        try {
            if (adjoint) modules_[i]->adjoint(failure ? failure_mark_ : *arg, result);
            else modules_[i]->forward(failure ? failure_mark_ : *arg, result);
        } catch (const invalid_argument& e) {
            // A module's refusal, named by its place (two Linear layers would say alike); a
            // subclass, which a caller may catch by its type, as it is.
            if (!failure)
                failure = typeid(e) == typeid(invalid_argument)
                              ? std::make_exception_ptr(invalid_argument(place(i) + ": " + e.what()))
                              : std::current_exception();
        } catch (...) {
            if (!failure) failure = std::current_exception();
        }
        if (!failure && is_failure_mark(result))
            failure = std::make_exception_ptr(invalid_argument(
                place(i) + " delivered the mark of a failure in " + (adjoint ? "adjoint" : "forward") +
                ": an earlier module refused its input on another worker of the chain, whose error says why"));
        arg = &result;
    }
    if (failure) std::rethrow_exception(failure);
}

template class sequential<float>;
template class sequential<double>;

}  // namespace distdl
