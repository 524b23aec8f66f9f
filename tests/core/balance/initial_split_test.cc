// Tests of the adaptive policy's first split (core/balance/initial_split.h):
// shares in proportion to the priors, the normal quantile against tabled
// values, and the hedge of a small bursty worker with a credible prior.
#include "core/balance/initial_split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ballast::balance {
namespace {

TEST(InitialSplitTest, NormalQuantileMatchesTheTable) {
  EXPECT_NEAR(NormalQuantile(0.5), 0, 1e-12);
  EXPECT_NEAR(NormalQuantile(0.975), 1.959963984540054, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.025), -1.959963984540054, 1e-9);
  EXPECT_NEAR(NormalQuantile(0.001), -3.090232306167814, 1e-9);
  // Outside (0, 1) it is clamped into [1e-12, 1 - 1e-12]: finite.
  EXPECT_NEAR(NormalQuantile(0), -7.034483825301131, 1e-6);
  EXPECT_TRUE(std::isfinite(NormalQuantile(1)));
}

TEST(InitialSplitTest, OnlyASmallBurstyWorkerWithACrediblePriorIsHedged) {
  const WorkerPrior bursty{"bursty", 1, 1, 0.5};
  // exp(Z · 0.1 · (1 - d) · Φ⁻¹(q)) = exp(0.05 · Φ⁻¹(0.025)).
  EXPECT_NEAR(HedgeFactor(bursty, 0.025, true), std::exp(0.05 * -1.959963984540054), 1e-9);
  EXPECT_DOUBLE_EQ(HedgeFactor(bursty, 0.025, false), 1);  // hedge off
  EXPECT_DOUBLE_EQ(HedgeFactor(bursty, 0.1, true), 1);     // a tenth of the speed or more
  EXPECT_DOUBLE_EQ(HedgeFactor({"fuzzy", 1, 0, 0.5}, 0.025, true), 1);  // Z = 0
  EXPECT_DOUBLE_EQ(HedgeFactor({"steady", 1, 1, 1}, 0.025, true), 1);   // d = 1
  // Credibility above 1 counts as 1.
  EXPECT_DOUBLE_EQ(HedgeFactor({"sure", 1, 7, 0.5}, 0.025, true), HedgeFactor(bursty, 0.025, true));
}

TEST(InitialSplitTest, SharesFollowThePriorsAndTheReserveTheHedge) {
  const std::vector<WorkerPrior> workers = {
      {"big", 18, 1, 1}, {"bursty", 1, 1, 0.5}, {"zero", 0, 0, 1}};
  const InitialSplit split = SplitByPriors(workers, 190, true);
  ASSERT_EQ(split.planned_cost.size(), 3u);
  // By the priors (a prior of 0 counts as 1e-9): 180 and 10 of 190.
  EXPECT_NEAR(split.planned_cost[0], 180, 1e-6);
  EXPECT_NEAR(split.planned_cost[1], 10, 1e-6);
  EXPECT_NEAR(split.planned_cost[2], 0, 1e-6);
  // The reserve hedges the bursty worker's share of 1/19 only.
  EXPECT_DOUBLE_EQ(split.reserve[0], 18);
  EXPECT_NEAR(split.reserve[1], std::exp(0.05 * NormalQuantile(1 / (19 + 1e-9))), 1e-12);
  EXPECT_LT(split.reserve[1], 1);
  EXPECT_DOUBLE_EQ(split.reserve[2], 1e-9);
  // Without the hedge the reserve is the priors.
  EXPECT_DOUBLE_EQ(SplitByPriors(workers, 190, false).reserve[1], 1);
}

}  // namespace
}  // namespace ballast::balance
