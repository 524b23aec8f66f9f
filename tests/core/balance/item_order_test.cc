// The order listed items are dealt in (core/balance/item_order.h).
#include "core/balance/item_order.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ballast::balance {
namespace {

TEST(ItemOrderTest, LargestFirstIsAStableSortByDecreasingCost) {
  const std::vector<double> costs = {3, 9, 1, 9, 3};
  EXPECT_EQ(DealOrder(costs, ItemOrder::kLargestFirst), (std::vector<size_t>{1, 3, 0, 4, 2}));
  EXPECT_EQ(DealOrder(costs, ItemOrder::kListed), (std::vector<size_t>{0, 1, 2, 3, 4}));
  const std::vector<std::string> values = {"a", "b", "c", "d", "e"};
  EXPECT_EQ(Dealt(values, DealOrder(costs, ItemOrder::kLargestFirst)),
            (std::vector<std::string>{"b", "d", "a", "e", "c"}));
  // Dealing again what was dealt changes nothing (a worker reads the
  // coordinator's list as it was sent).
  const std::vector<double> dealt = Dealt(costs, DealOrder(costs, ItemOrder::kLargestFirst));
  EXPECT_EQ(DealOrder(dealt, ItemOrder::kLargestFirst), (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_TRUE(DealOrder({}, ItemOrder::kLargestFirst).empty());
}

TEST(ItemOrderTest, EachPolicyDealsInItsOwnOrderUnlessTheJobSays) {
  for (const char* policy : {"weighted", "selfsched", "mms", "adaptive"}) {
    EXPECT_EQ(PolicyItemOrder(policy), ItemOrder::kLargestFirst) << policy;
  }
  for (const char* policy : {"equal", "guided", "factoring"}) {
    EXPECT_EQ(PolicyItemOrder(policy), ItemOrder::kListed) << policy;
  }
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kPolicy, "guided"), ItemOrder::kListed);
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kLargestFirst, "guided"), ItemOrder::kLargestFirst);
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kListed, "adaptive"), ItemOrder::kListed);
}

TEST(ItemOrderTest, NamesReadBack) {
  for (ItemOrder order : {ItemOrder::kPolicy, ItemOrder::kLargestFirst, ItemOrder::kListed}) {
    EXPECT_EQ(ParseItemOrder(ItemOrderName(order)), order);
  }
  EXPECT_FALSE(ParseItemOrder("largest"));
}

}  // namespace
}  // namespace ballast::balance
