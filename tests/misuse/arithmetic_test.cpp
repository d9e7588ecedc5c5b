// Checked size arithmetic (issue 11.3) in core and in the reference oracle, and the pieces of
// the argument agreement that need no communication.
#include <limits>

#include <gtest/gtest.h>

#include "core/checked_arithmetic.hpp"
#include "core/detail/argument_agreement.hpp"
#include "core/halo_exchange.hpp"
#include "reference/halo_exchange.hpp"

namespace {

using namespace distdl;
constexpr std::size_t all_ones = std::numeric_limits<std::size_t>::max();
constexpr std::size_t two_to(int e) { return std::size_t{1} << e; }

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const invalid_argument& e) {
        return e.what();
    }
    return "(no invalid_argument)";
}

TEST(checked_arithmetic, refuses_what_wraps_and_names_the_quantity) {
    EXPECT_EQ(checked_add(2, 3, "x"), 5u);
    EXPECT_EQ(checked_mul(all_ones, 1, "x"), all_ones);
    EXPECT_EQ(error_of([] { checked_add(all_ones, 1, "the sum"); }),
              "the sum: 18446744073709551615 + 1 does not fit in a 64-bit size (overflow)");
    EXPECT_EQ(error_of([] { checked_mul(two_to(32), two_to(32), "the area"); }),
              "the area: 4294967296 * 4294967296 does not fit in a 64-bit size (overflow)");
    EXPECT_EQ(checked_signed(two_to(63) - 1, "x"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(error_of([] { checked_signed(two_to(63), "the offset"); }),
              "the offset: 9223372036854775808 exceeds the largest signed 64-bit offset");
    EXPECT_EQ(checked_volume({3, 0, all_ones}, "v"), 0u);
    EXPECT_EQ(error_of([] { checked_volume({two_to(40), two_to(30)}, "the volume"); }),
              "the volume [1099511627776,1073741824]: 1099511627776 * 1073741824 does not fit in a 64-bit size (overflow)");
}

TEST(checked_arithmetic, core_kernel_output_length) {
    EXPECT_EQ(kernel_output_length(10, 3, 1, 0, 1), 8u);
    EXPECT_EQ(kernel_output_length(10, 3, 2, 1, 2), 4u);  // (10 + 2 - 4 - 1) / 2 + 1
    EXPECT_NE(error_of([] { kernel_output_length(32, 2, 1, 0, all_ones); }).find("kernel extent"), std::string::npos);
    EXPECT_NE(error_of([] { kernel_output_length(32, 3, 1, two_to(63), 1); }).find("padded length"), std::string::npos);
}

TEST(checked_arithmetic, reference_refuses_instead_of_wrapping) {
    EXPECT_EQ(ref::kernel_output_length(10, 3, 2, 1, 2), 4u);
    EXPECT_NE(error_of([] { ref::kernel_output_length(32, 2, 1, 0, all_ones); }).find("ref: kernel extent"),
              std::string::npos);
    EXPECT_NE(error_of([] { ref::kernel_output_length(32, 3, 1, two_to(63), 1); }).find("ref: 2*padding"),
              std::string::npos);
    // Fits 64 bits but is more than the oracle counts one by one.
    EXPECT_NE(error_of([] { ref::kernel_output_length(32, 3, 1, two_to(40), 1); }).find("exceeds the oracle's limit"),
              std::string::npos);
    const tensor<double> x = xt::zeros<double>({4});
    EXPECT_NE(error_of([&] { ref::halo_exchange(x, {1}, {2}, {1}, {0}, {all_ones}); }).find("ref: kernel extent"),
              std::string::npos);
}

TEST(argument_agreement, rank_sets_are_compact) {
    EXPECT_EQ(detail::format_rank_set({}), "[]");
    EXPECT_EQ(detail::format_rank_set({3}), "[3]");
    EXPECT_EQ(detail::format_rank_set({0, 1}), "[0,1]");
    EXPECT_EQ(detail::format_rank_set({0, 1, 2, 3, 5, 7, 8, 9}), "[0-3,5,7-9]");
    std::vector<int> big(4095);
    for (int r = 0; r < 4095; ++r) big[static_cast<std::size_t>(r)] = r;
    EXPECT_EQ(detail::format_rank_set(big), "[0-4094]");
}

TEST(argument_agreement, digests_tell_records_apart) {
    using detail::argument_agreement;
    const auto a = argument_agreement("L").list("shape", {16}).flag("f", false);
    const auto b = argument_agreement("L").list("shape", {17}).flag("f", false);
    const auto c = argument_agreement("L").list("shape", {16}).flag("f", true);
    // A list [16, 0] against [16] followed by a flag: the field lengths are part of the record.
    const auto d = argument_agreement("L").list("shape", {16, 0}).flag("f", false);
    const auto same = argument_agreement("L").list("shape", {16}).flag("f", false);
    const auto digest = [](const argument_agreement& x) { return argument_agreement::digest(x.record()); };
    EXPECT_EQ(digest(a), digest(same));
    EXPECT_NE(digest(a), digest(b));
    EXPECT_NE(digest(a), digest(c));
    EXPECT_NE(digest(a), digest(d));
    EXPECT_EQ(digest(a).size(), 2u);
}

}  // namespace
