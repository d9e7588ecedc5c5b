// Runs every registered check under the simulator, once per accepted world size.
#include <gtest/gtest.h>

#include "simulator/run.hpp"
#include "tests/common/checks.hpp"

namespace {

class sim_check_test : public ::testing::Test {
  public:
    sim_check_test(const distdl::testing::registered_check& check, int world_size)
        : check_(check), world_size_(world_size) {}
    void TestBody() override {
        try {
            distdl::sim::run(world_size_, check_.body);
        } catch (const std::exception& e) {
            FAIL() << check_.name << " on " << world_size_ << " simulated ranks: " << e.what();
        }
    }

  private:
    const distdl::testing::registered_check& check_;
    int world_size_;
};

}  // namespace

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    for (const auto& check : distdl::testing::check_registry()) {
        for (int n = 1; n <= distdl::testing::max_sim_world; ++n) {
            if (!check.accepts_world_size(n)) continue;
            ::testing::RegisterTest("sim", (check.name + "/" + std::to_string(n)).c_str(), nullptr, nullptr,
                                    __FILE__, __LINE__,
                                    [&check, n]() -> ::testing::Test* { return new sim_check_test(check, n); });
        }
    }
    return RUN_ALL_TESTS();
}
