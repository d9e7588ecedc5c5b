// The layers' per-dimension options take a braced list or a plain number, the one entry for
// every spatial dimension (`.kernel_size = 3` is {3}, not std::vector's three zeros).
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "layers/conv_options.hpp"
#include "layers/pool_options.hpp"

namespace {

using sizes = std::vector<std::size_t>;

TEST(options, a_plain_number_is_the_entry_for_every_dimension) {
    const distdl::conv_options conv{.kernel_size = 3, .stride = 2, .padding = 1, .dilation = {1, 2}};
    EXPECT_EQ(conv.kernel_size, sizes{3});
    EXPECT_EQ(conv.stride, sizes{2});
    EXPECT_EQ(conv.dilation, (sizes{1, 2}));
    const distdl::conv_spec spec = distdl::normalize_conv_options("Conv2d", 2, 4, 5, conv);
    EXPECT_EQ(spec.kernel_size, (sizes{3, 3}));
    EXPECT_EQ(spec.padding, (sizes{1, 1}));
    EXPECT_EQ(spec.dilation, (sizes{1, 2}));

    const distdl::pool_options pool{.kernel_size = 2, .padding = 0};
    EXPECT_EQ(pool.kernel_size, sizes{2});
    EXPECT_EQ(pool.padding, sizes{0});
    EXPECT_TRUE(pool.stride.empty());
    distdl::pool_options assigned;
    assigned.stride = sizes{1, 2, 3};  // a std::vector as well
    EXPECT_EQ(assigned.stride, (sizes{1, 2, 3}));
    assigned.stride = std::size_t{4};
    EXPECT_EQ(assigned.stride, sizes{4});
}

// A negative number would wrap to a huge count: refused, naming it. A fraction or a bool is not
// a count at all: no conversion.
TEST(options, a_negative_number_is_refused_and_a_fraction_does_not_convert) {
    EXPECT_THROW((distdl::conv_options{.kernel_size = 3, .padding = -1}), distdl::invalid_argument);
    try {
        distdl::pool_options pool{.kernel_size = -2};
        ADD_FAILURE() << "accepted " << pool.kernel_size[0];
    } catch (const distdl::invalid_argument& e) {
        EXPECT_EQ(std::string(e.what()),
                  "a per-dimension option (kernel_size, stride, padding, dilation) counts elements, got -2");
    }
    static_assert(!std::is_convertible_v<double, distdl::per_dimension_list>);
    static_assert(!std::is_convertible_v<bool, distdl::per_dimension_list>);
    static_assert(std::is_convertible_v<int, distdl::per_dimension_list>);
}

}  // namespace
