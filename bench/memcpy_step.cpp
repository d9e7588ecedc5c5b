#include <cstring>
#include <vector>

#include "bench/step.hpp"

namespace distdl::bench {

namespace {

class memcpy_step final : public step {
  public:
    explicit memcpy_step(std::size_t bytes) : a_(bytes, 1), b_(bytes, 0) {}
    void run() override {
        std::memcpy(b_.data(), a_.data(), a_.size());  // forward
        std::memcpy(a_.data(), b_.data(), b_.size());  // adjoint
    }
    std::vector<double> outputs() const override { return {}; }  // moves bytes, computes nothing

  private:
    std::vector<unsigned char> a_, b_;
};

}  // namespace

std::unique_ptr<step> make_memcpy_step(const workload& w) { return std::make_unique<memcpy_step>(w.bytes_per_worker()); }

}  // namespace distdl::bench
