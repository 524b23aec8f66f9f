// The one definition of the headline figure (balance/efficiency.h): every
// driver's ideal time and efficiency go through these two functions.
#include "core/balance/efficiency.h"

#include <gtest/gtest.h>

#include <limits>

namespace ballast::balance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(EfficiencyTest, IdealSecondsIsWorkOverTotalSpeed) {
  EXPECT_DOUBLE_EQ(IdealSeconds(10, 2), 5);
  EXPECT_DOUBLE_EQ(IdealSeconds(3, 0.5 + 0.5 + 0.1), 3 / 1.1);
  EXPECT_DOUBLE_EQ(IdealSeconds(1e-9, 1e-3), 1e-6);
}

// An item cannot be split: the limit is the later of the work over every
// node's speed and the largest item on the node that runs one fastest.
TEST(EfficiencyTest, ThePhysicalLimitIsTheLaterOfTheWorkAndTheLargestItem) {
  const Limit work = PhysicalLimit(IdealSeconds(100, 2), LargestItemSeconds(10, 1));
  EXPECT_DOUBLE_EQ(work.seconds, 50);
  EXPECT_EQ(work.bound, LimitBound::kWork);
  const Limit item = PhysicalLimit(IdealSeconds(100, 2), LargestItemSeconds(60, 1));
  EXPECT_DOUBLE_EQ(item.seconds, 60);
  EXPECT_EQ(item.bound, LimitBound::kLargestItem);
  EXPECT_STREQ(LimitBoundName(item.bound), "largest item");
  EXPECT_EQ(PhysicalLimit(50, LargestItemSeconds(1, 0)).bound, LimitBound::kWork)
      << "no speed: no item bound";
  EXPECT_EQ(PhysicalLimit(50, std::numeric_limits<double>::quiet_NaN()).seconds, 50);
}

TEST(EfficiencyTest, IdealSecondsOfNoWorkOrNoSpeedIsZero) {
  EXPECT_EQ(IdealSeconds(0, 2), 0);
  EXPECT_EQ(IdealSeconds(-1, 2), 0);
  EXPECT_EQ(IdealSeconds(10, 0), 0);
  EXPECT_EQ(IdealSeconds(10, -2), 0);
}

TEST(EfficiencyTest, IdealSecondsOfNonFiniteInputIsZeroNotInfOrNan) {
  for (double bad : {kInf, -kInf, kNan}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(IdealSeconds(bad, 2), 0);
    EXPECT_EQ(IdealSeconds(10, bad), 0);
  }
}

TEST(EfficiencyTest, EfficiencyIsIdealOverMakespan) {
  EXPECT_DOUBLE_EQ(Efficiency(5, 10), 0.5);
  EXPECT_DOUBLE_EQ(Efficiency(10, 10), 1);
  EXPECT_FALSE(EfficiencyCapped(10, 10));
}

// Regression (issue 30): a forged cpuSeconds made `ballast run` print
// "efficiency 14.419". A makespan below the limit can only mean that the work
// was over-reported: the figure is capped at 1, and the cap is told.
TEST(EfficiencyTest, EfficiencyNeverExceedsOneAndSaysWhenItWasCapped) {
  EXPECT_DOUBLE_EQ(Efficiency(12, 10), 1);
  EXPECT_TRUE(EfficiencyCapped(12, 10));
  EXPECT_DOUBLE_EQ(Efficiency(1e300, 1e-300), 1);
  EXPECT_FALSE(EfficiencyCapped(5, 10));
  EXPECT_FALSE(EfficiencyCapped(5, 0));
}

TEST(EfficiencyTest, EfficiencyOfZeroNegativeOrNonFiniteInputIsZero) {
  EXPECT_EQ(Efficiency(0, 10), 0);
  EXPECT_EQ(Efficiency(5, 0), 0);
  EXPECT_EQ(Efficiency(-5, 10), 0);
  EXPECT_EQ(Efficiency(5, -10), 0);
  for (double bad : {kInf, -kInf, kNan}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(Efficiency(bad, 10), 0);
    EXPECT_EQ(Efficiency(5, bad), 0);
  }
}

TEST(EfficiencyTest, ComposedOverAZeroSpeedClusterIsZero) {
  // A cluster whose speeds sum to 0 has no physical limit: the figure is 0,
  // not a division by zero.
  EXPECT_EQ(Efficiency(IdealSeconds(10, 0), 4), 0);
}

TEST(EfficiencyTest, IdealSecondsOverSpansCountsOnlyTheCapacityTheJobHad) {
  // Constant capacity: the same as IdealSeconds.
  EXPECT_DOUBLE_EQ(IdealSecondsOver(30, {{0, kInf, 1}, {0, kInf, 2}}), IdealSeconds(30, 3));
  // Two boards of 0.5 from the start, a third of 0.1 joining at 20 (20 of
  // 30 done by then): the other 10 at 1.1.
  EXPECT_DOUBLE_EQ(IdealSecondsOver(30, {{0, kInf, 0.5}, {0, kInf, 0.5}, {20, kInf, 0.1}}),
                   20 + 10 / 1.1);
  // A node drained at 4 and one joining at 10: 20 of work is 4 x 2 + 6 x 1
  // by t = 10, then the last 6 at 2: 13.
  EXPECT_DOUBLE_EQ(IdealSecondsOver(20, {{0, kInf, 1}, {0, 4, 1}, {10, kInf, 1}}), 13);
  // Work beyond every span's capacity never finishes.
  EXPECT_EQ(IdealSecondsOver(20, {{0, 5, 1}}), kInf);
  // Nothing to do, or nonsense work: 0.
  EXPECT_EQ(IdealSecondsOver(0, {{0, kInf, 1}}), 0);
  EXPECT_EQ(IdealSecondsOver(kNan, {{0, kInf, 1}}), 0);
  // Spans with no speed, a bad speed, or no length count for nothing.
  EXPECT_DOUBLE_EQ(
      IdealSecondsOver(
          10,
          {{0, kInf, 1}, {0, kInf, 0}, {0, kInf, kNan}, {0, kInf, -3}, {5, 5, 100}, {6, 2, 100}}),
      10);
  // A gap with no node in the job: the clock runs on.
  EXPECT_DOUBLE_EQ(IdealSecondsOver(10, {{0, 2, 1}, {10, kInf, 1}}), 18);
}

}  // namespace
}  // namespace ballast::balance
