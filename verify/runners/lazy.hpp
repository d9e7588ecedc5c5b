#pragma once
// A value made on first use. Every worker's runner builds a case problem, but only the worker
// that computes the shared reference (case_runner.cpp) uses the serial model: made eagerly,
// thousands of simulated workers each made a whole model, which took seconds.
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

namespace distdl::verify::runners {

template <class V>
class lazy {
  public:
    explicit lazy(std::function<V()> make) : make_(std::move(make)) {}

    const V& get() const {
        std::call_once(made_, [this] { value_.emplace(make_()); });
        return *value_;
    }

  private:
    std::function<V()> make_;
    mutable std::once_flag made_;
    mutable std::optional<V> value_;
};

}  // namespace distdl::verify::runners
