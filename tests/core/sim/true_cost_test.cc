// Tests of TrueCost and ParetoCosts (core/sim/true_cost.h): the simulator's
// true item costs from a shape or from one cost per item, and the seeded
// Pareto costs a scenario's `itemsFrom.pareto` draws.
#include "core/sim/true_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <vector>

namespace ballast::sim {
namespace {

TEST(TrueCostTest, ItemCostsAreTheTruthScaledToAMeanOfOne) {
  const auto costs = std::make_shared<const std::vector<double>>(std::vector<double>{1, 1, 4});
  const TrueCost truth(balance::CostModel(costs), 0, 1);
  EXPECT_NEAR(truth.Total(), 3.0, 1e-12);
  EXPECT_NEAR(truth.Cost({2, 3}), 2.0, 1e-12);
  EXPECT_NEAR(truth.MaxItem(), 2.0, 1e-12) << "the costliest item, wherever it is";
  EXPECT_EQ(truth.Advance(0, 3, 1.0), 2u);
}

TEST(TrueCostTest, JitterMultipliesTheItemCosts) {
  const auto costs = std::make_shared<const std::vector<double>>(std::vector<double>(100, 1.0));
  const TrueCost plain(balance::CostModel(costs), 0, 3);
  const TrueCost jittered(balance::CostModel(costs), 0.5, 3);
  EXPECT_NEAR(plain.Total(), 100, 1e-9);
  EXPECT_NE(jittered.Total(), plain.Total());
  for (uint64_t i = 0; i < 100; ++i) {
    EXPECT_GE(jittered.Cost({i, i + 1}), 0.5 - 1e-12);
    EXPECT_LE(jittered.Cost({i, i + 1}), 1.5 + 1e-12);
  }
}

TEST(ParetoCostsTest, AreDeterministicPerSeedAndAtLeastTheMinimum) {
  const std::vector<double> a = ParetoCosts(1000, 1.16, 2.5, 7);
  EXPECT_EQ(a, ParetoCosts(1000, 1.16, 2.5, 7));
  EXPECT_NE(a, ParetoCosts(1000, 1.16, 2.5, 8));
  ASSERT_EQ(a.size(), 1000u);
  for (double cost : a) {
    EXPECT_GE(cost, 2.5);
    EXPECT_TRUE(std::isfinite(cost));
  }
  EXPECT_TRUE(ParetoCosts(0, 1.16, 1, 7).empty());
}

// Alpha 1.16 is the 80/20 law: the costliest fifth of the items holds about
// four fifths of the cost (less in a finite sample, whose tail is cut).
TEST(ParetoCostsTest, AlphaOnePointOneSixIsTheEightyTwentyLaw) {
  std::vector<double> costs = ParetoCosts(100000, 1.16, 1, 7);
  std::sort(costs.begin(), costs.end(), std::greater<>());
  const double total = std::accumulate(costs.begin(), costs.end(), 0.0);
  const double top = std::accumulate(costs.begin(), costs.begin() + 20000, 0.0);
  EXPECT_GT(top / total, 0.6);
  EXPECT_LT(top / total, 0.95);
  // The median of Pareto(alpha, 1) is 2^(1/alpha).
  EXPECT_NEAR(costs[50000], std::pow(2.0, 1 / 1.16), 0.02);
}

}  // namespace
}  // namespace ballast::sim
