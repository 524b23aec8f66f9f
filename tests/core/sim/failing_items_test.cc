// Tests of the failing items of a simulated job (core/sim/failing_items.h):
// where they are once dealt, what they cost, and how a report names them.
#include "core/sim/failing_items.h"

#include <gtest/gtest.h>

#include <vector>

namespace ballast::sim {
namespace {

using balance::Range;

Workload WorkloadFailing(uint64_t items, std::vector<FailingItem> failing) {
  Workload workload;
  workload.items = items;
  workload.item_seconds = 2;
  workload.retries = 2;
  workload.failing_items = std::move(failing);
  return workload;
}

TEST(FailingItemsTest, AReportNamesTheFailingItemsItHandsIn) {
  const FailingItems failing(WorkloadFailing(10, {{2, 1}, {3, 1}, {7, 1}}), {});
  balance::Report report;
  report.completed = {{0, 4}, {6, 9}};
  failing.Mark(report);
  EXPECT_EQ(report.failed, (std::vector<Range>{{2, 4}, {7, 8}}));
  balance::Report clean;
  clean.completed = {{4, 7}};
  failing.Mark(clean);
  EXPECT_TRUE(clean.failed.empty());
}

TEST(FailingItemsTest, ADealtItemFailsWhereItWasDealt) {
  // Listed item 1 is dealt first.
  const FailingItems failing(WorkloadFailing(3, {{1, 1}}), {1, 2, 0});
  EXPECT_EQ(failing.items().Ranges(), (std::vector<Range>{{0, 1}}));
}

TEST(FailingItemsTest, AnItemPastTheEndIsDropped) {
  const FailingItems failing(WorkloadFailing(3, {{5, 1}}), {});
  EXPECT_TRUE(failing.items().empty());
}

TEST(FailingItemsTest, AFailingItemCostsItsAttemptsInMeanItems) {
  // Three attempts of 1 s, an item of mean cost taking 2 s.
  const auto costs = FailingItems::Costs(WorkloadFailing(10, {{4, 1}}));
  ASSERT_EQ(costs.size(), 1u);
  EXPECT_EQ(costs[0].first, 4u);
  EXPECT_DOUBLE_EQ(costs[0].second, 1.5);
}

}  // namespace
}  // namespace ballast::sim
