// The layers' per-dimension options take a braced list or a plain number, the one entry for
// every spatial dimension (`.kernel_size = 3` is {3}, not std::vector's three zeros).
#include <gtest/gtest.h>

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
}

}  // namespace
