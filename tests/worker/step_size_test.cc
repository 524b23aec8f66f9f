// The worker's step sizing (worker/step_size.h): a step aims at step_seconds
// by the last step's measurement, but never holds more than kMaxStepGrowth
// times the last step's items, so one misleading measurement cannot make a
// step the whole lease; a command run per step learns its start and aims
// its runs long enough to pay it off.
#include "worker/step_size.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

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

// Runs of a command whose start takes `start_s` and whose items take
// `per_cost_s` per unit of declared cost, each run's items costing between
// 0.5 and 3 units, timed with 5 % noise.
RunStartLearner LearnFromRuns(double start_s, double per_cost_s, int runs) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> cost(0.5, 3.0);
  std::normal_distribution<double> noise(1.0, 0.05);
  RunStartLearner learner;
  for (int i = 0; i < runs; ++i) {
    const double c = cost(random);
    learner.Add((start_s + per_cost_s * c) * noise(random), c);
  }
  return learner;
}

TEST(RunStartTest, AStartThatTheRunsShowIsLearnedInSecondsAndCostUnits) {
  // The thumbnails' case: a run starts in about 10 ms; an item of mean cost takes 60 ms.
  const RunStart start = LearnFromRuns(0.010, 0.060, 200).start();
  ASSERT_TRUE(start.learned());
  EXPECT_NEAR(start.seconds(), 0.010, 0.004);
  EXPECT_NEAR(start.seconds_per_cost, 0.060, 0.004);
  EXPECT_NEAR(start.cost, 0.010 / 0.060, 0.07);
}

TEST(RunStartTest, NoStartIsLearnedWhereTheRunsShowNoneOrTooFewRan) {
  EXPECT_FALSE(LearnFromRuns(0.0, 0.060, 200).start().learned()) << "the time is the items'";
  EXPECT_FALSE(LearnFromRuns(0.010, 0.060, 10).start().learned())
      << "fewer runs than the fit needs";
  RunStartLearner learner;
  for (const double bad : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    learner.Add(bad, 1.0);
    learner.Add(1.0, bad);
  }
  EXPECT_FALSE(learner.start().learned()) << "runs that are not positive numbers count as none";
}

TEST(RunStartTest, UntilAStartIsLearnedTheStepIsAsBefore) {
  const StepMeasure last{0.07, 3};
  const StepAim aim = AimRun(0.05, RunStart{}, last);
  EXPECT_EQ(aim.step_seconds, 0.05);
  EXPECT_EQ(aim.last.seconds_per_cost, 0.07);
  EXPECT_EQ(aim.last.items, 3u);
}

TEST(RunStartTest, ARunIsAimedAtFiftyTimesItsStartAtTheItemsOwnPace) {
  // 10 ms of start: a run of 0.5 s, 0.49 s of it the items' at 60 ms per unit of cost.
  const StepAim aim = AimRun(0.05, {.cost = 0.01 / 0.06, .seconds_per_cost = 0.06}, {0.07, 3});
  EXPECT_NEAR(aim.step_seconds, 0.01 / kRunStartShare - 0.01, 1e-9);
  EXPECT_EQ(aim.last.seconds_per_cost, 0.06) << "the items' pace, the start apart";
  EXPECT_EQ(aim.last.items, 3u) << "the growth bound still counts the last step's items";
  // So a step of uniform items of one unit holds eight of them (0.49 / 0.06),
  // once the steps grew there (at most kMaxStepGrowth times the last).
  const CostModel cost(1000, CostShape::kUniform);
  EXPECT_EQ(NextStepEnd(cost, {0, 1000}, 1, aim.step_seconds, {0.06, 8}), 8u);
  EXPECT_EQ(NextStepEnd(cost, {0, 1000}, 1, aim.step_seconds, aim.last), 6u);
}

TEST(RunStartTest, ARunIsNoLongerThanASecondNorShorterThanTheStep) {
  // pytest's start of 0.6 s would ask for 12 s runs: a second, less the start.
  const StepAim slow = AimRun(0.05, {.cost = 0.4, .seconds_per_cost = 1.5}, {2.1, 1});
  EXPECT_NEAR(slow.step_seconds, kMaxRunSeconds - 0.6, 1e-9);
  // A start longer than a run: the step is one item per thread.
  const StepAim slower = AimRun(0.05, {.cost = 1.0, .seconds_per_cost = 2.0}, {4, 1});
  EXPECT_EQ(slower.step_seconds, 0);
  const CostModel cost(1000, CostShape::kUniform);
  EXPECT_EQ(NextStepEnd(cost, {0, 1000}, 2, slower.step_seconds, slower.last), 2u);
  // A start of half a millisecond is paid off by the 0.05 s step itself.
  const StepAim fast = AimRun(0.05, {.cost = 0.0005 / 0.06, .seconds_per_cost = 0.06}, {0.06, 1});
  EXPECT_NEAR(fast.step_seconds, 0.05 - 0.0005, 1e-9);
  // A longer --step-seconds stands.
  const StepAim longer = AimRun(2.0, {.cost = 0.4, .seconds_per_cost = 1.5}, {2.1, 1});
  EXPECT_NEAR(longer.step_seconds, 2.0 - 0.6, 1e-9);
}

TEST(RunStartTest, UntilAStartIsLearnedEverySecondRunHoldsTwoItemsPerThread) {
  const RunStart none;
  EXPECT_EQ(ExploreEnd(11, {10, 100}, 1, none, 0), 11u) << "the first run as sized";
  EXPECT_EQ(ExploreEnd(11, {10, 100}, 1, none, 1), 12u);
  EXPECT_EQ(ExploreEnd(12, {10, 100}, 2, none, 3), 14u);
  EXPECT_EQ(ExploreEnd(20, {10, 100}, 1, none, 1), 20u) << "a longer step stands";
  EXPECT_EQ(ExploreEnd(100, {99, 100}, 1, none, 1), 100u) << "never past the lease";
  EXPECT_EQ(ExploreEnd(11, {10, 100}, 1, none, kExploreRuns + 1), 11u) << "not for good";
  const RunStart learned{.cost = 0.2, .seconds_per_cost = 0.06};
  EXPECT_EQ(ExploreEnd(11, {10, 100}, 1, learned, 1), 11u) << "AimRun sizes it then";
}

TEST(GuidedRunTest, ARunHoldsHalfOfWhatIsLeftOfTheLeaseOnceAStepWasMeasured) {
  const CostModel uniform(1000, CostShape::kUniform);
  const StepMeasure measured{0.06, 1};
  EXPECT_EQ(GuidedEnd(uniform, {10, 100}, {}), 10u) << "the first step stays as sized";
  EXPECT_EQ(GuidedEnd(uniform, {10, 100}, measured), 55u);
  EXPECT_EQ(GuidedEnd(uniform, {10, 13}, measured), 12u) << "the item that reaches half";
  EXPECT_EQ(GuidedEnd(uniform, {10, 12}, measured), 11u);
  EXPECT_EQ(GuidedEnd(uniform, {10, 11}, measured), 11u) << "at least one item";
  EXPECT_EQ(GuidedEnd(uniform, {10, 10}, measured), 10u) << "nothing left";
  // Declared costs 9, 1, 1, 1: the costly item alone, then two of the three.
  const CostModel skewed(
      std::make_shared<const std::vector<double>>(std::vector<double>{9, 1, 1, 1}));
  EXPECT_EQ(GuidedEnd(skewed, {0, 4}, measured), 1u);
  EXPECT_EQ(GuidedEnd(skewed, {1, 4}, measured), 3u);
}

// Runs one lease through `steps`, each run as long as `seconds` says; the
// runs' sizes in items.
template <typename Seconds>
std::vector<uint64_t> RunsOfALease(StepPlanner& steps, Range lease, const Seconds& seconds) {
  std::vector<uint64_t> runs;
  uint64_t position = lease.begin;
  while (position < lease.end) {
    const Range step = steps.Next({position, lease.end});
    EXPECT_GT(step.end, position);
    if (step.end <= position) break;
    steps.Done(step, seconds(step));
    runs.push_back(step.size());
    position = step.end;
  }
  return runs;
}

TEST(GuidedRunTest, ATestSuitesLeasesTakeAFewRunsEachWhereTheyTookOneATest) {
  // The real-node bench's testsuite: 60 tests of 0.3 to 37 s on a Pi 4B
  // (declared by past durations), leased a few to a dozen at a time, a run
  // starting pytest in 0.3 s. Each run held one or two tests: 44 to 46 runs
  // a round.
  std::vector<double> costs;
  for (int i = 0; i < 60; ++i) costs.push_back(37.0 * std::pow(0.92, i) + 0.3);
  const CostModel cost(std::make_shared<const std::vector<double>>(costs));
  const double per_cost_s = 60 / cost.Cost({0, 60});  // the mean test a second
  const auto seconds = [&](Range run) { return 0.3 + per_cost_s * cost.Cost(run); };
  StepPlanner steps(cost, 1, 0.05, /*one_run_per_step=*/true);
  using Runs = std::vector<uint64_t>;
  EXPECT_EQ(RunsOfALease(steps, {31, 60}, seconds), (Runs{1, 9, 8, 5, 3, 2, 1}))
      << "the first step one test, then half of what is left by cost";
  EXPECT_EQ(RunsOfALease(steps, {3, 12}, seconds), (Runs{4, 3, 2}));
  EXPECT_EQ(RunsOfALease(steps, {0, 1}, seconds), (Runs{1}));
  EXPECT_EQ(steps.runs(), 11u) << "every run counted";
}

TEST(GuidedRunTest, TheLastRunsOfALeaseAreShort) {
  // What a cut waits for late in a lease: the run under way.
  const CostModel cost(200, CostShape::kUniform);
  StepPlanner steps(cost, 1, 0.05, /*one_run_per_step=*/true);
  uint64_t position = 0;
  while (position < 200) {
    const Range step = steps.Next({position, 200});
    if (200 - position <= 9) {
      EXPECT_LE(step.size(), 3u) << "at " << position;
    }
    steps.Done(step, 0.01 + 0.06 * cost.Cost(step));
    position = step.end;
  }
}

TEST(RunStartTest, StepsOfAWorkerThatLearnsItsStartGrowToPayItOff) {
  // The worker's planner, each run timed as start + items with 5 % noise,
  // its 800 items leased 8 at a time: a lease too short for halving to
  // batch its items (runs of 4, 2, 1 and 1).
  const double start_s = 0.010, per_cost_s = 0.060;
  const CostModel cost(800, CostShape::kUniform);
  StepPlanner steps(cost, 1, 0.05, /*one_run_per_step=*/true);
  std::mt19937 random(3);
  std::normal_distribution<double> noise(1.0, 0.05);
  const auto seconds = [&](Range run) {
    return (start_s + per_cost_s * cost.Cost(run)) * noise(random);
  };
  std::vector<uint64_t> last;
  for (uint64_t lease = 0; lease < 800; lease += 8)
    last = RunsOfALease(steps, {lease, lease + 8}, seconds);
  EXPECT_NEAR(steps.run_start().seconds(), start_s, 0.004);
  // Once the start is learned, a run aims at eight items (0.49 s at 60 ms):
  // the whole lease at once.
  EXPECT_EQ(last, (std::vector<uint64_t>{8}));
  EXPECT_LT(steps.runs(), 800u / 5);
}

TEST(RunStartTest, StepsThatAreNotOneRunEachNeitherLearnNorExplore) {
  // A kernel in the worker (primes, matmul) or an exec job with perItem.
  const CostModel cost(800, CostShape::kUniform);
  StepPlanner steps(cost, 1, 0.05, /*one_run_per_step=*/false);
  uint64_t position = 0;
  while (position < 800) {
    const Range step = steps.Next({position, 800});
    EXPECT_EQ(step.size(), 1u) << "items of 70 ms are steps of one item";
    steps.Done(step, 0.010 + 0.060 * cost.Cost(step));
    position = step.end;
  }
  EXPECT_EQ(steps.runs(), 0u);
  EXPECT_FALSE(steps.run_start().learned());
}

TEST(RunStartTest, OnlyARunOfSeveralItemsHasAnEndACutMustWaitFor) {
  const CostModel cost(800, CostShape::kUniform);
  const StepPlanner runs(cost, 1, 0.05, /*one_run_per_step=*/true);
  EXPECT_EQ(runs.RunEnd({8, 10}), 10u) << "one command for items 8 and 9";
  EXPECT_EQ(runs.RunEnd({8, 9}), 0u) << "one item: nothing inside to cut";
  const StepPlanner items(cost, 1, 0.05, /*one_run_per_step=*/false);
  EXPECT_EQ(items.RunEnd({8, 10}), 0u) << "a step of a kernel or of perItem stops at any item";
}

}  // namespace
}  // namespace ballast::worker
