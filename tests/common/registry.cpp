#include "tests/common/checks.hpp"

namespace distdl::testing {

std::vector<registered_check>& check_registry() {
    static std::vector<registered_check> checks;
    return checks;
}

}  // namespace distdl::testing
