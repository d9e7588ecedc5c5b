#include <gtest/gtest.h>

#include <thread>

#include "core/detail/shared_members.hpp"

using namespace distdl;

TEST(shared_members, equal_lists_are_one_object_while_alive) {
    const auto a = detail::shared_members({4, 1, 7});
    const auto b = detail::shared_members({4, 1, 7});
    const auto c = detail::shared_members({4, 7, 1});
    EXPECT_EQ(a.get(), b.get());
    EXPECT_NE(a.get(), c.get());
    EXPECT_EQ(*c, (std::vector<int>{4, 7, 1}));
    EXPECT_EQ(*detail::shared_members({}), std::vector<int>{});
}

TEST(shared_members, iota_is_shared_and_equals_the_plain_list) {
    const auto w = detail::shared_iota(5);
    EXPECT_EQ(*w, (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(detail::shared_iota(5).get(), w.get());
    EXPECT_EQ(detail::shared_members({0, 1, 2, 3, 4}).get(), w.get());
    EXPECT_NE(detail::shared_iota(6).get(), w.get());
}

TEST(shared_members, a_list_no_one_holds_is_made_again) {
    std::vector<int> big(1000);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int>(3 * i);
    std::weak_ptr<const std::vector<int>> gone = detail::shared_members(big);
    EXPECT_TRUE(gone.expired());
    EXPECT_EQ(*detail::shared_members(big), big);
}

TEST(shared_members, threads_interning_the_same_list_share_one_copy) {
    std::vector<int> list(4096);
    for (std::size_t i = 0; i < list.size(); ++i) list[i] = static_cast<int>(list.size() - i);
    const auto held = detail::shared_members(list);
    std::vector<const std::vector<int>*> got(16, nullptr);
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < got.size(); ++t)
        threads.emplace_back([&, t] {
            for (int round = 0; round < 50; ++round) {
                const auto mine = detail::shared_members(list);
                detail::shared_members({static_cast<int>(t), round});  // other lists come and go
                got[t] = mine.get();
            }
        });
    for (auto& t : threads) t.join();
    for (const auto* p : got) EXPECT_EQ(p, held.get());
}
