// Tests of where a policy's items are (core/balance/item_ledger.h) and how
// the pool is cut into planned shares (core/balance/reserved_shares.h): the
// running cost sums follow every move, a finished item never goes back to
// the pool or out of a reserve, and the shares hold the whole pool.
#include "core/balance/item_ledger.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "core/balance/reserved_shares.h"

namespace ballast::balance {
namespace {

TEST(ItemLedgerTest, EveryItemStartsInThePool) {
  ItemLedger items;
  items.Reset(10, CostModel(10, CostShape::kUniform), 2);
  EXPECT_EQ(items.pool().size(), 10u);
  EXPECT_DOUBLE_EQ(items.pool_cost(), 10);
  EXPECT_TRUE(items.done().empty());
  EXPECT_DOUBLE_EQ(items.reserved_cost(), 0);
}

TEST(ItemLedgerTest, AFinishedItemLeavesThePoolAndNeverComesBack) {
  ItemLedger items;
  items.Reset(10, CostModel(10, CostShape::kUniform), 1);
  EXPECT_EQ(items.Finish({2, 5}), 3u);
  EXPECT_EQ(items.Finish({4, 6}), 1u);  // 4 was finished already
  EXPECT_EQ(items.pool().size(), 6u);
  EXPECT_DOUBLE_EQ(items.pool_cost(), 6);
  // Taken out and handed back whole: only the unfinished items return.
  const Range taken = items.TakeFromPool(2);
  EXPECT_EQ(taken, (Range{0, 2}));
  EXPECT_TRUE(items.ReturnToPool({0, 8}));
  EXPECT_EQ(items.pool().size(), 6u);
  EXPECT_DOUBLE_EQ(items.pool_cost(), 6);
  EXPECT_FALSE(items.ReturnToPool({2, 6}));  // all finished
  EXPECT_EQ(items.SkipFinished({2, 9}), (Range{6, 9}));
  EXPECT_EQ(items.FirstOpenPart({0, 9}), (Range{0, 2}));
  EXPECT_EQ(items.LastOpenPart({0, 9}), (Range{6, 9}));
}

// From inside the pool: what the cost covers from that item on, at least
// the item, never past the end of the pool's range that holds it.
TEST(ItemLedgerTest, TakingFromAnItemInsideThePoolStaysInItsRange) {
  ItemLedger items;
  items.Reset(10,
              CostModel(std::make_shared<const std::vector<double>>(
                  std::vector<double>{5, 4, 3, 2, 1, 1, 1, 1, 1, 1})),
              1);
  EXPECT_EQ(items.Finish({6, 7}), 1u);            // the pool is [0, 6) and [7, 10)
  const double unit = items.cost().Cost({4, 5});  // an item of declared cost 1
  EXPECT_EQ(items.TakeCostFromPoolAt(2, 5 * unit), (Range{2, 4}));
  EXPECT_EQ(items.TakeCostFromPoolAt(4, 0), (Range{4, 5})) << "at least the item";
  EXPECT_EQ(items.TakeCostFromPoolAt(5, 9 * unit), (Range{5, 6})) << "not across item 6";
  EXPECT_TRUE(items.TakeCostFromPoolAt(6, unit).empty()) << "item 6 is not in the pool";
  EXPECT_EQ(items.pool().size(), 5u);
  EXPECT_NEAR(items.pool_cost(), 12 * unit, 1e-9);
}

TEST(ItemLedgerTest, AReserveKeepsItsCostAndSkipsWhatWasFinished) {
  ItemLedger items;
  items.Reset(10, CostModel(10, CostShape::kUniform), 2);
  std::vector<IntervalSet> shares(2);
  shares[0].Add({0, 4});
  shares[1].Add({4, 10});
  items.Reserve(shares);
  EXPECT_TRUE(items.pool().empty());
  EXPECT_DOUBLE_EQ(items.reserved_cost(0), 4);
  EXPECT_DOUBLE_EQ(items.reserved_cost(), 10);
  items.Unreserve(1, {8, 10});
  EXPECT_DOUBLE_EQ(items.reserved_cost(1), 4);
  EXPECT_DOUBLE_EQ(items.reserved_cost(), 8);
  // Finished by another worker meanwhile: not leased from the reserve.
  items.Finish({0, 2});
  EXPECT_EQ(items.TakeReserved(0), (Range{2, 4}));
  EXPECT_TRUE(items.reserved(0).empty());
  EXPECT_DOUBLE_EQ(items.reserved_cost(0), 0);
  const IntervalSet dropped = items.DropReserved(1);
  EXPECT_EQ(dropped.size(), 4u);
  EXPECT_DOUBLE_EQ(items.reserved_cost(), 0);
}

TEST(ItemLedgerTest, ANewCostModelBringsEverySumToIt) {
  ItemLedger items;
  items.Reset(10, CostModel(10, CostShape::kLinear), 1);
  items.Finish({0, 5});
  items.SetAside(0, items.TakeFromPool(2));  // [5, 7)
  const CostModel learned = CostModel(10, CostShape::kLinear).WithStartCost(1);
  items.SetCost(learned);
  EXPECT_NEAR(items.pool_cost(), learned.Cost({7, 10}), 1e-9);
  EXPECT_NEAR(items.reserved_cost(0), learned.Cost({5, 7}), 1e-9);
  EXPECT_NEAR(items.reserved_cost(), learned.Cost({5, 7}), 1e-9);
}

TEST(PlanSharesTest, SharesFollowTheWeightsAndHoldTheWholePool) {
  const CostModel cost(12, CostShape::kUniform);
  const std::vector<IntervalSet> shares = PlanShares({{0, 12}}, 12, cost, {1, 2, 3});
  ASSERT_EQ(shares.size(), 3u);
  EXPECT_EQ(shares[0].Ranges(), (std::vector<Range>{{0, 2}}));
  EXPECT_EQ(shares[1].Ranges(), (std::vector<Range>{{2, 6}}));
  EXPECT_EQ(shares[2].Ranges(), (std::vector<Range>{{6, 12}}));
}

TEST(PlanSharesTest, WithoutWeightsTheSharesAreEqual) {
  const CostModel cost(9, CostShape::kUniform);
  const std::vector<IntervalSet> shares = PlanShares({{0, 3}, {6, 9}}, 6, cost, {0, 0});
  EXPECT_EQ(shares[0].size() + shares[1].size(), 6u);
  EXPECT_EQ(shares[0].size(), 3u);
}

TEST(PlanSharesTest, WithPerItemCostsTheLargestWeightIsWalkedFirst) {
  const CostModel cost(
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(ReserveOrder(cost, {1, 3, 2}), (std::vector<WorkerId>{1, 2, 0}));
  EXPECT_EQ(ReserveOrder(CostModel(4, CostShape::kUniform), {1, 3, 2}),
            (std::vector<WorkerId>{0, 1, 2}));
}

}  // namespace
}  // namespace ballast::balance
