// The worker's step sizing (worker/step_size.h): a step aims at step_seconds
// by the last step's measurement, but never holds more than kMaxStepGrowth
// times the last step's items, so one misleading measurement cannot make a
// step the whole lease.
#include "worker/step_size.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace ballast::worker {
namespace {

using balance::CostModel;
using balance::CostShape;
using balance::Range;

TEST(StepSizeTest, BeforeAnyMeasurementAStepIsOneItemPerThread) {
  const CostModel cost(1000, CostShape::kUniform);
  EXPECT_EQ(NextStepEnd(cost, {10, 1000}, 1, 0.05, {}), 11u);
  EXPECT_EQ(NextStepEnd(cost, {10, 1000}, 4, 0.05, {}), 14u);
  EXPECT_EQ(NextStepEnd(cost, {998, 1000}, 4, 0.05, {}), 1000u) << "never past the lease";
}

TEST(StepSizeTest, AStepAimsAtStepSecondsPerThread) {
  const CostModel cost(1000000, CostShape::kUniform);
  // 0.01 s per item: 0.05 s is 5 items, on 2 threads 10 (the last step was large).
  EXPECT_EQ(NextStepEnd(cost, {0, 1000000}, 1, 0.05, {0.01, 100}), 5u);
  EXPECT_EQ(NextStepEnd(cost, {0, 1000000}, 2, 0.05, {0.01, 100}), 10u);
}

TEST(StepSizeTest, OneCheapItemDoesNotMakeTheNextStepTheWholeLease) {
  // The Pi 3B's case on primes below 10^6 by trial division: its lease is the
  // last 15,878 items; the first item, a composite with a small factor, took
  // 50 ns for a declared cost of 1.94 — as if the whole lease took 1.5 ms.
  const CostModel cost(500000, CostShape::kLinear);
  const Range lease{484122, 500000};
  const double first_cost = cost.Cost({lease.begin, lease.begin + 1});
  const StepMeasure misleading{50e-9 / first_cost, 1};
  const uint64_t end = NextStepEnd(cost, lease, 1, 0.05, misleading);
  EXPECT_EQ(end - lease.begin, kMaxStepGrowth);
}

TEST(StepSizeTest, StepsGrowWhenEachItemCostsMoreThanTheLast) {
  // Primes' declared cost grows with the item: twice a one-item step's cost
  // is less than two items. Bounded by cost, steps stayed one item long for
  // good (tens of thousands of steps per report); bounded by items they
  // double to their aim.
  const CostModel cost(150000, CostShape::kLinear);
  const Range lease{0, 100000};
  uint64_t position = lease.begin;
  StepMeasure last{};
  int steps = 0;
  const double seconds_per_cost = 0.05 / cost.Cost({50000, 51000});  // aim: about 1000 items
  while (position < lease.end && steps < 1000) {
    const uint64_t end = NextStepEnd(cost, {position, lease.end}, 1, 0.05, last);
    ASSERT_GT(end, position);
    if (last.items > 0) {
      EXPECT_LE(end - position, kMaxStepGrowth * last.items);
    }
    last = {seconds_per_cost, end - position};
    position = end;
    ++steps;
  }
  EXPECT_EQ(position, lease.end);
  EXPECT_LT(steps, 200) << "steps stuck at a few items";
}

TEST(StepSizeTest, StepsGrowGeometricallyToTheirAim) {
  const CostModel cost(1u << 20, CostShape::kUniform);
  StepMeasure last{1e-6, 1};  // 1 us per item: the aim is 50,000 items
  uint64_t position = 0;
  int steps = 0;
  while (position < (1u << 20) && steps < 100) {
    const uint64_t end = NextStepEnd(cost, {position, 1u << 20}, 1, 0.05, last);
    EXPECT_LE(end - position, kMaxStepGrowth * last.items);
    EXPECT_LE(end - position, 50000u);
    last = {1e-6, end - position};
    position = end;
    ++steps;
  }
  EXPECT_EQ(position, 1u << 20);
  // 16 doublings from 1 to 50,000 items, then about 20 full steps.
  EXPECT_GE(steps, 30);
  EXPECT_LE(steps, 40);
}

TEST(StepSizeTest, AMeasurementThatIsNotAPositiveNumberCountsAsNone) {
  const CostModel cost(1000, CostShape::kUniform);
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(NextStepEnd(cost, {0, 1000}, 1, 0.05, {bad, 10}), 1u) << bad;
  }
}

}  // namespace
}  // namespace ballast::worker
