#pragma once
// The serial side of one case (every worker's input piece, the reference output and adjoint,
// the parameters' reference, a Sequential chain's shapes), each part computed by the first
// worker that needs it and shared by every worker of the case in this process. The simulator
// runs all workers in one process: without sharing, n workers would each evaluate the whole
// world's reference (n times the serial work and memory; at 4,096 workers, out of memory).
// Under MPI each process has its own.
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace distdl::verify {

class serial_memo {
  public:
    // The value of `key`, made by `make` on the first call of any worker, the others waiting
    // (`make` must not call once() itself); a failure of `make` is kept and rethrown to every
    // caller. Every call of a key asks for the same type V.
    template <class V>
    const V& once(const std::string& key, const std::function<V()>& make) {
        std::lock_guard<std::mutex> held(mutex_);
        auto [at, first] = entries_.try_emplace(key);
        entry& e = at->second;
        if (first) {
            try {
                e.value = std::make_shared<V>(make());
            } catch (...) {
                e.failure = std::current_exception();
            }
        }
        if (e.failure) std::rethrow_exception(e.failure);
        return *std::static_pointer_cast<V>(e.value);
    }

  private:
    struct entry {
        std::shared_ptr<void> value;
        std::exception_ptr failure;
    };
    std::mutex mutex_;
    std::map<std::string, entry> entries_;
};

}  // namespace distdl::verify
