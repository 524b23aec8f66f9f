// The order listed items are dealt in (core/balance/item_order.h).
#include "core/balance/item_order.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/balance/policy_options.h"
#include "tests/support/policy_spec.h"

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

using testing_support::PolicyNamed;

TEST(ItemOrderTest, EachPolicyDealsInItsOwnOrderUnlessTheJobSays) {
  for (const char* policy : {"weighted", "selfsched", "mms", "adaptive"}) {
    EXPECT_EQ(PolicyItemOrder(PolicyNamed(policy)), ItemOrder::kLargestFirst) << policy;
  }
  for (const char* policy : {"equal", "guided", "factoring"}) {
    EXPECT_EQ(PolicyItemOrder(PolicyNamed(policy)), ItemOrder::kListed) << policy;
  }
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kPolicy, PolicyNamed("guided")), ItemOrder::kListed);
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kLargestFirst, PolicyNamed("guided")),
            ItemOrder::kLargestFirst);
  EXPECT_EQ(EffectiveItemOrder(ItemOrder::kListed, PolicyNamed("adaptive")), ItemOrder::kListed);
}

// The order is the options' (each options type's kItemOrder), not read from
// a name: whatever the policy is labelled, and with options set or not.
TEST(ItemOrderTest, ThePolicysOrderComesFromItsOptions) {
  EXPECT_EQ(PolicyItemOrder(PolicySpec{GuidedOptions{4}, "adaptive"}), ItemOrder::kListed);
  EXPECT_EQ(PolicyItemOrder(PolicySpec{FactoringOptions{}, "weighted"}), ItemOrder::kListed);
  EXPECT_EQ(PolicyItemOrder(PolicySpec{EqualOptions{}, ""}), ItemOrder::kListed);
  EXPECT_EQ(PolicyItemOrder(PolicySpec{WeightedOptions{}, "equal"}), ItemOrder::kLargestFirst);
  EXPECT_EQ(PolicyItemOrder(PolicySpec{SelfSchedOptions{8}, ""}), ItemOrder::kLargestFirst);
  EXPECT_EQ(PolicyItemOrder(PolicySpec{MmsOptions{}, "guided"}), ItemOrder::kLargestFirst);
  AdaptiveOptions plain;
  plain.stealing = plain.rebalance = plain.learn_costs = false;
  EXPECT_EQ(PolicyItemOrder(PolicySpec{plain, "no-steal"}), ItemOrder::kLargestFirst);
  EXPECT_EQ(PolicyItemOrder(PolicyNamed("selfsched", {{"chunk", "8"}}, "listed")),
            ItemOrder::kLargestFirst);
  // Every policy has an order of its own: kPolicy is never one.
  for (const std::string& name : PolicyNames()) {
    EXPECT_NE(PolicyItemOrder(PolicyNamed(name)), ItemOrder::kPolicy) << name;
  }
}

TEST(ItemOrderTest, NamesReadBack) {
  for (ItemOrder order : {ItemOrder::kPolicy, ItemOrder::kLargestFirst, ItemOrder::kListed}) {
    EXPECT_EQ(ParseItemOrder(ItemOrderName(order)), order);
  }
  EXPECT_FALSE(ParseItemOrder("largest"));
}

}  // namespace
}  // namespace ballast::balance
