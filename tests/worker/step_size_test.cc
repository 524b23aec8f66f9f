// The worker's step sizing (worker/step_size.h): a step aims at step_seconds
// by the last step's measurement, but never grows more than kMaxStepGrowth
// times the last step's cost, so one misleading measurement cannot make a
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
  const StepMeasure misleading{50e-9 / first_cost, first_cost};
  const uint64_t end = NextStepEnd(cost, lease, 1, 0.05, misleading);
  EXPECT_LE(cost.Cost({lease.begin, end}), kMaxStepGrowth * first_cost + 1e-9);
  EXPECT_LE(end - lease.begin, 2u);
}

TEST(StepSizeTest, StepsGrowGeometricallyToTheirAim) {
  const CostModel cost(1u << 20, CostShape::kUniform);
  StepMeasure last{1e-6, 1};  // 1 us per item: the aim is 50,000 items
  uint64_t position = 0;
  int steps = 0;
  while (position < (1u << 20) && steps < 100) {
    const uint64_t end = NextStepEnd(cost, {position, 1u << 20}, 1, 0.05, last);
    const double step_cost = cost.Cost({position, end});
    EXPECT_LE(step_cost, std::max(1.0, kMaxStepGrowth * last.cost) + 1e-9);
    EXPECT_LE(step_cost, 50000 + 1e-9);
    last = {1e-6, step_cost};
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
