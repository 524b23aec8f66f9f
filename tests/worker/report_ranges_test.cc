// How a report splits a lease's steps into handed-in ranges
// (worker/report_ranges.h): the newest steps alone, older ones in ranges that
// double going back, so that running past a cut loses at most a step and a
// report stays short.
#include "worker/report_ranges.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ballast::worker {
namespace {

using Groups = std::vector<std::pair<size_t, size_t>>;

TEST(ReportRangesTest, TheNewestStepsAreHandedInAloneAndOlderOnesDoubling) {
  EXPECT_EQ(ReportGroups(0), Groups{});
  EXPECT_EQ(ReportGroups(1), (Groups{{0, 1}}));
  EXPECT_EQ(ReportGroups(3), (Groups{{0, 1}, {1, 2}, {2, 3}}));
  Groups alone;
  for (size_t i = 0; i < kSingleSteps; ++i) alone.emplace_back(i, i + 1);
  EXPECT_EQ(ReportGroups(kSingleSteps), alone);
  // Past kSingleSteps: 2, 4, … steps further back, the oldest with the rest.
  Groups shifted;
  for (const auto& [first, last] : alone) shifted.emplace_back(first + 7, last + 7);
  Groups expected{{0, 1}, {1, 5}, {5, 7}};
  expected.insert(expected.end(), shifted.begin(), shifted.end());
  EXPECT_EQ(ReportGroups(kSingleSteps + 7), expected);
}

TEST(ReportRangesTest, GroupsCoverEveryStepOnceInOrderAndStayFew) {
  for (size_t steps = 1; steps <= 5000; ++steps) {
    const Groups groups = ReportGroups(steps);
    ASSERT_FALSE(groups.empty());
    EXPECT_EQ(groups.front().first, 0u) << steps;
    EXPECT_EQ(groups.back().second, steps) << steps;
    EXPECT_EQ(groups.back().second - groups.back().first, 1u) << "the newest step alone";
    for (size_t i = 0; i < groups.size(); ++i) {
      EXPECT_LT(groups[i].first, groups[i].second) << steps;
      if (i > 0) {
        EXPECT_EQ(groups[i - 1].second, groups[i].first) << steps;
      }
    }
    EXPECT_LE(groups.size(), kSingleSteps + 1 + static_cast<size_t>(std::log2(steps))) << steps;
  }
}

TEST(ReportRangesTest, RunningPastACutLosesNothingBeforeItWithinTheSingleSteps) {
  // A cut before step `cut`: steps cut … steps-1 were someone else's. The
  // group holding step cut - 1 and reaching past the cut is dropped whole;
  // the steps of it before the cut are the loss: none while the overrun stays
  // within the newest kSingleSteps steps, and never more than the overrun.
  for (size_t steps = 1; steps <= 600; ++steps) {
    const Groups groups = ReportGroups(steps);
    for (size_t cut = 1; cut < steps; ++cut) {
      size_t lost = 0;
      for (const auto& [first, last] : groups) {
        if (first < cut && last > cut) lost += cut - first;
      }
      if (steps - cut <= kSingleSteps) {
        EXPECT_EQ(lost, 0u) << "steps " << steps << " cut " << cut;
      }
      EXPECT_LE(lost, steps - cut) << "steps " << steps << " cut " << cut;
    }
  }
}

}  // namespace
}  // namespace ballast::worker
