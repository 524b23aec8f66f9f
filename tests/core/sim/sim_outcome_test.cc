// Tests of the accounting of a simulation's outcome (core/sim/sim_outcome.h):
// whose items are whose, and the bounds the makespan is measured against.
#include "core/sim/sim_outcome.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace ballast::sim {
namespace {

using balance::Range;

balance::Report Handing(std::vector<Range> completed, std::vector<Range> failed = {}) {
  balance::Report report;
  report.completed = std::move(completed);
  report.failed = std::move(failed);
  return report;
}

TEST(OutcomeLedgerTest, AnItemCountsForTheWorkerThatHandedItInFirst) {
  OutcomeLedger ledger(2, balance::CostModel(10, balance::CostShape::kUniform));
  ledger.Account(0, Handing({{0, 4}}));
  ledger.Account(1, Handing({{2, 6}}));  // a backup's copy of 2 and 3
  EXPECT_EQ(ledger.items(0), 4u);
  EXPECT_EQ(ledger.items(1), 2u);
  EXPECT_DOUBLE_EQ(ledger.cost(0), 4);
  EXPECT_DOUBLE_EQ(ledger.cost(1), 2);
  ledger.Account(1, Handing({{0, 6}}));  // nothing new
  EXPECT_EQ(ledger.items(1), 2u);
}

TEST(OutcomeLedgerTest, CostsAreTheDeclaredOnesAndFailedItemsAreCounted) {
  OutcomeLedger ledger(1, balance::CostModel(std::make_shared<const std::vector<double>>(
                              std::vector<double>{1, 3, 2, 2})));
  ledger.Account(0, Handing({{1, 3}}, {{2, 3}}));
  ledger.Account(0, Handing({{2, 3}}, {{2, 3}}));  // the same failure again
  // In mean items: the costs 1, 3, 2, 2 average 2, so items 1 and 2 cost
  // 1.5 and 1; the second report brings nothing new.
  EXPECT_DOUBLE_EQ(ledger.cost(0), 1.5 + 1);
  EXPECT_EQ(ledger.failed_items(), 1u);
}

Scenario TwoNodes() {
  Scenario scenario;
  scenario.workload.items = 4;
  scenario.workload.item_seconds = 1;
  scenario.workload.item_costs =
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 1, 1, 9});
  EmulatedNode fast;
  fast.name = "fast";
  fast.speed = 2;
  EmulatedNode slow;
  slow.name = "slow";
  slow.speed = 1;
  scenario.nodes = {fast, slow};
  return scenario;
}

TEST(ScenarioLimitTest, TheLargestItemOnTheFastestNodeBoundsTheLimit) {
  const Scenario scenario = TwoNodes();
  const TrueCost cost(balance::CostModel(scenario.workload.items, scenario.workload.cost,
                                         scenario.workload.item_costs),
                      0, 1);
  // 4 s of work (costs relative to the mean item) over a speed of 3 is
  // 1.33 s; the costliest item, 3 mean items, takes 1.5 s on the node of
  // speed 2.
  const balance::Limit limit = ScenarioLimit(scenario, cost);
  EXPECT_EQ(limit.bound, balance::LimitBound::kLargestItem);
  EXPECT_DOUBLE_EQ(cost.MaxItem(), 3);
  EXPECT_DOUBLE_EQ(limit.seconds, 1.5);
  EXPECT_DOUBLE_EQ(IdealMakespan(scenario, cost.Total()), 4 / 3.0);
}

TEST(PackingSecondsTest, PacksOntoTheNodesThereFromTheStart) {
  Scenario scenario = TwoNodes();
  scenario.workload.item_costs.reset();  // four items of 1 s
  const TrueCost cost(scenario.workload.items, balance::CostShape::kUniform, 0, 1);
  // Three on the node of speed 2 (0.5 s each), one on the other: 1.5 s.
  EXPECT_DOUBLE_EQ(PackingSeconds(scenario, cost), 1.5);
  scenario.nodes[1].join_at = 1;  // the slow one joins late: all on the fast one
  EXPECT_DOUBLE_EQ(PackingSeconds(scenario, cost), 2);
}

}  // namespace
}  // namespace ballast::sim
