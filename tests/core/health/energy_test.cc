// Tests of energy per job (core/health/energy.h): board powers, label
// overrides, per node, total and per item.
#include "core/health/energy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ballast::health {
namespace {

using Labels = std::map<std::string, std::string>;

TEST(Energy, PublishedBoardFigures) {
  const auto pi3 = NodePower({{"ballast.io/board", "pi-3b"}});
  ASSERT_TRUE(pi3.has_value());
  EXPECT_DOUBLE_EQ(pi3->idle_w, 1.5);
  EXPECT_DOUBLE_EQ(pi3->load_w, 4.3);
  EXPECT_FALSE(pi3->estimate);
  const auto pi4 = NodePower({{"ballast.io/board", "pi-4B"}});  // the probe's case
  ASSERT_TRUE(pi4.has_value());
  EXPECT_DOUBLE_EQ(pi4->idle_w, 3.1);
  EXPECT_DOUBLE_EQ(pi4->load_w, 6.1);
  const auto pi5 = NodePower({{"ballast.io/board", "pi-5"}});
  ASSERT_TRUE(pi5.has_value());
  EXPECT_TRUE(pi5->estimate);
  EXPECT_EQ(BoardPowers().size(), 3u);
}

TEST(Energy, TheArmCoreNamesTheBoardWithoutABoardLabel) {
  EXPECT_EQ(NodePower({{"ballast.io/cpu-model", "cortex-a53"}})->board, "pi-3b");
  EXPECT_EQ(NodePower({{"ballast.io/cpu-model", "cortex-a72"}})->board, "pi-4b");
  EXPECT_EQ(NodePower({{"ballast.io/cpu-model", "cortex-a76"}})->board, "pi-5");
  // The board label wins over the core.
  EXPECT_EQ(
      NodePower({{"ballast.io/board", "pi-4b"}, {"ballast.io/cpu-model", "cortex-a53"}})->board,
      "pi-4b");
  EXPECT_FALSE(NodePower({{"ballast.io/cpu-model", "Intel(R) Xeon(R)"}}).has_value());
  EXPECT_FALSE(NodePower({{"ballast.io/board", "pi-zero-2-w"}}).has_value());
  EXPECT_FALSE(NodePower({}).has_value());
}

TEST(Energy, LabelsOverrideEachHalf) {
  const auto both =
      NodePower({{"ballast.io/power-idle-w", "2"}, {"ballast.io/power-load-w", "9.5"}});
  ASSERT_TRUE(both.has_value());
  EXPECT_DOUBLE_EQ(both->idle_w, 2);
  EXPECT_DOUBLE_EQ(both->load_w, 9.5);
  EXPECT_FALSE(both->estimate);
  EXPECT_EQ(both->source, "node labels");
  // A measured Pi 5: both halves from labels, no longer an estimate.
  const auto pi5 = NodePower({{"ballast.io/board", "pi-5"},
                              {"ballast.io/power-idle-w", "2.4"},
                              {"ballast.io/power-load-w", "7.9"}});
  EXPECT_FALSE(pi5->estimate);
  EXPECT_DOUBLE_EQ(pi5->load_w, 7.9);
  // One half: the other from the board.
  const auto half = NodePower({{"ballast.io/board", "pi-4b"}, {"ballast.io/power-load-w", "7"}});
  EXPECT_DOUBLE_EQ(half->idle_w, 3.1);
  EXPECT_DOUBLE_EQ(half->load_w, 7);
  // One half without a board: unknown.
  EXPECT_FALSE(NodePower({{"ballast.io/power-load-w", "7"}}).has_value());
  // Labels that are not watts are ignored.
  for (const char* bad : {"", "x", "-1", "0", "nan", "inf", "1e9", "7W"}) {
    const auto p = NodePower({{"ballast.io/board", "pi-3b"}, {"ballast.io/power-load-w", bad}});
    EXPECT_DOUBLE_EQ(p->load_w, 4.3) << bad;
  }
}

// Regression (issue 61): a power label out of range was ignored without a
// word. Each ignored label is named with its value; usable or absent ones
// say nothing.
TEST(Energy, PowerLabelsTheEstimateIgnoresAreNamed) {
  for (const char* bad : {"", "x", "-1", "0", "nan", "inf", "1e9", "7W", "1000.5"}) {
    const auto problems =
        PowerLabelProblems({{"ballast.io/board", "pi-3b"}, {"ballast.io/power-load-w", bad}});
    ASSERT_EQ(problems.size(), 1u) << bad;
    EXPECT_EQ(problems[0], "label ballast.io/power-load-w: '" + std::string(bad) +
                               "' is not a number of watts in (0, 1000], ignored (the board "
                               "kind's figure stands, if it has one)");
  }
  const auto both = PowerLabelProblems(
      {{"ballast.io/power-idle-w", "-3"}, {"ballast.io/power-load-w", "\x1b[2J"}});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_NE(both[0].find("label ballast.io/power-idle-w: '-3'"), std::string::npos) << both[0];
  EXPECT_NE(both[1].find("'\\x1b[2J'"), std::string::npos) << "escaped: " << both[1];
  EXPECT_TRUE(PowerLabelProblems({{"ballast.io/power-idle-w", "2"},
                                  {"ballast.io/power-load-w", "1000"},
                                  {"ballast.io/power-w", "5000"}})
                  .empty());
  EXPECT_TRUE(PowerLabelProblems({}).empty());
}

TEST(Energy, PerNodeTotalAndPerItem) {
  const auto pi4 = NodePower({{"ballast.io/board", "pi-4b"}});
  const auto pi3 = NodePower({{"ballast.io/board", "pi-3b"}});
  // 100 s job: the Pi 4B computes 100 s, the Pi 3B 60 s and idles 40 s.
  const JobEnergy e = EstimateJobEnergy({{"pi4b", pi4, 100, 3000}, {"pi3b", pi3, 60, 1000}}, 100);
  ASSERT_EQ(e.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(e.nodes[0].joules, 610);                  // 6.1 W * 100 s
  EXPECT_DOUBLE_EQ(e.nodes[1].joules, 4.3 * 60 + 1.5 * 40);  // 318 J
  EXPECT_DOUBLE_EQ(e.nodes[1].idle_seconds, 40);
  EXPECT_DOUBLE_EQ(e.joules, 928);
  EXPECT_EQ(e.items, 4000u);
  EXPECT_DOUBLE_EQ(e.joules_per_item, 0.232);
  EXPECT_TRUE(e.complete);
  EXPECT_FALSE(e.estimate);
  EXPECT_EQ(DescribeEnergy(e), "928.0 J (0.2578 Wh), 0.232 J per item");
}

TEST(Energy, AFasterFinishCostsLessIdlePower) {
  // The same work, finished at 80 s instead of 100 s: the Pi 4B's 20 s idle
  // at the end are no longer paid for.
  const auto pi4 = NodePower({{"ballast.io/board", "pi-4b"}});
  const double slow = EstimateJobEnergy({{"a", pi4, 80, 1}, {"b", pi4, 100, 1}}, 100).joules;
  const double fast = EstimateJobEnergy({{"a", pi4, 90, 1}, {"b", pi4, 90, 1}}, 90).joules;
  EXPECT_DOUBLE_EQ(slow, 6.1 * 180 + 3.1 * 20);
  EXPECT_DOUBLE_EQ(fast, 6.1 * 180);
  EXPECT_LT(fast, slow);
}

TEST(Energy, UnknownNodesAreLeftOutAndSaidSo) {
  const auto pi5 = NodePower({{"ballast.io/board", "pi-5"}});
  const JobEnergy e = EstimateJobEnergy({{"pi5", pi5, 10, 10}, {"x86", std::nullopt, 10, 30}}, 10);
  EXPECT_FALSE(e.complete);
  EXPECT_TRUE(e.estimate);
  EXPECT_DOUBLE_EQ(e.joules, 88);
  EXPECT_EQ(e.items, 10u);  // the unknown node's items are not divided into it
  EXPECT_FALSE(e.nodes[1].known);
  EXPECT_DOUBLE_EQ(e.nodes[1].joules, 0);
  EXPECT_EQ(DescribeEnergy(e),
            "88.0 J (0.02444 Wh), 8.8 J per item, estimate, "
            "1 node without power figures");
}

TEST(Energy, HostileTimesNeverGiveNaN) {
  const auto pi3 = NodePower({{"ballast.io/board", "pi-3b"}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Busy past the span is clipped; no span: the longest busy time.
  JobEnergy e = EstimateJobEnergy({{"a", pi3, 150, 0}, {"b", pi3, nan, 0}}, 100);
  EXPECT_DOUBLE_EQ(e.nodes[0].busy_seconds, 100);
  EXPECT_DOUBLE_EQ(e.nodes[1].busy_seconds, 0);
  EXPECT_DOUBLE_EQ(e.joules, 430 + 150);
  EXPECT_DOUBLE_EQ(e.joules_per_item, 0);
  e = EstimateJobEnergy({{"a", pi3, 20, 0}, {"b", pi3, 10, 0}}, nan);
  EXPECT_DOUBLE_EQ(e.span_seconds, 20);
  EXPECT_DOUBLE_EQ(e.joules, 4.3 * 30 + 1.5 * 10);
  e = EstimateJobEnergy({}, -1);
  EXPECT_DOUBLE_EQ(e.joules, 0);
  EXPECT_TRUE(e.complete);
}

}  // namespace
}  // namespace ballast::health
