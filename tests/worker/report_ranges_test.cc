// How a report splits a lease's steps into handed-in ranges
// (worker/report_ranges.h): the newest steps alone, older ones in ranges that
// double going back, so that running past a cut loses little and a report
// stays short.
#include "worker/report_ranges.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ballast::worker {
namespace {

using Groups = std::vector<std::pair<size_t, size_t>>;

TEST(ReportRangesTest, SmallCountsAreHandedInAsTheDoublingSays) {
  EXPECT_EQ(ReportGroups(0), Groups{});
  EXPECT_EQ(ReportGroups(1), (Groups{{0, 1}}));
  EXPECT_EQ(ReportGroups(2), (Groups{{0, 1}, {1, 2}}));
  EXPECT_EQ(ReportGroups(4), (Groups{{0, 2}, {2, 3}, {3, 4}}));
  EXPECT_EQ(ReportGroups(5), (Groups{{0, 1}, {1, 3}, {3, 4}, {4, 5}}));
  EXPECT_EQ(ReportGroups(8), (Groups{{0, 4}, {4, 6}, {6, 7}, {7, 8}}));
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
    EXPECT_LE(groups.size(), 2 + static_cast<size_t>(std::log2(steps))) << steps;
  }
}

TEST(ReportRangesTest, RunningPastACutLosesNoMoreThanItRanPast) {
  // A cut before step `cut`: steps cut … steps-1 were someone else's. The
  // group holding step cut - 1 and reaching past the cut is dropped whole;
  // the steps of it before the cut are the loss, at most the steps past it.
  for (size_t steps = 1; steps <= 600; ++steps) {
    const Groups groups = ReportGroups(steps);
    for (size_t cut = 1; cut < steps; ++cut) {
      size_t lost = 0;
      for (const auto& [first, last] : groups) {
        if (first < cut && last > cut) lost += cut - first;
      }
      EXPECT_LE(lost, steps - cut) << "steps " << steps << " cut " << cut;
    }
  }
}

}  // namespace
}  // namespace ballast::worker
