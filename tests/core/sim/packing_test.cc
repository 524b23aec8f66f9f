// Tests of LptMakespan (core/sim/packing.h): the LPT packing of items onto
// nodes of given speeds, table-driven.
#include "core/sim/packing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace ballast::sim {
namespace {

struct PackingCase {
  std::string title;
  std::vector<double> items;   // seconds at speed 1
  std::vector<double> speeds;  // one per node
  double makespan;
};

TEST(PackingTest, LptPacksLargestFirstOnTheNodeThatFinishesEarliest) {
  const std::vector<PackingCase> cases = {
      {"no items", {}, {1, 1}, 0},
      {"one item on the faster node", {4}, {1, 2}, 2},
      {"equal items on equal nodes", {1, 1, 1, 1}, {1, 1}, 2},
      // 3 and 3, then 2 and 2 (5 and 5), then 2: 7, where 3 + 3 | 2 + 2 + 2 ends at 6.
      {"the classic LPT case", {3, 3, 2, 2, 2}, {1, 1}, 7},
      // Largest first: 6 -> fast (3); 3 -> slow (3); 3 -> fast (4.5).
      {"uniform nodes", {3, 6, 3}, {2, 1}, 4.5},
      // A node of speed 0.2 takes an item of 1 in 5 s: LPT leaves it idle.
      {"a slow node is left idle when the fast ones finish first", {1, 1}, {1, 0.2}, 2},
      {"nodes of no speed are not used", {2}, {0, 1}, 2},
      // Unordered input: sorted inside.
      {"the order of the items does not matter", {1, 2, 3, 4}, {1, 1}, 5},
  };
  for (const PackingCase& c : cases) {
    SCOPED_TRACE(c.title);
    EXPECT_DOUBLE_EQ(LptMakespan(c.items, c.speeds), c.makespan);
  }
}

TEST(PackingTest, ItemsWithoutANodeNeverFinish) {
  EXPECT_TRUE(std::isinf(LptMakespan({1}, {})));
  EXPECT_TRUE(std::isinf(LptMakespan({1}, {0})));
}

TEST(PackingTest, NeverBelowTheLargestItemOnTheFastestNodeNorTheWorkOverTheSpeed) {
  const std::vector<double> items = {5, 1, 1, 1, 0.5, 0.5, 2, 3};
  const std::vector<double> speeds = {1, 0.5, 0.5};
  const double packed = LptMakespan(items, speeds);
  EXPECT_GE(packed, 5.0);         // the largest item on the fastest node
  EXPECT_GE(packed, 14.0 / 2.0);  // W / sum of speeds
}

}  // namespace
}  // namespace ballast::sim
