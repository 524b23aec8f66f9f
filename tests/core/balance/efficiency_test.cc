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

}  // namespace
}  // namespace ballast::balance
