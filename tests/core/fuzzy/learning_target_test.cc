#include "core/fuzzy/learning_target.h"

#include <gtest/gtest.h>

namespace ballast::fuzzy {
namespace {

TEST(LearningTargetTest, OneSequenceComparesItsFirstRunWithTheMedianOfTheLater) {
  const LearningVerdict verdict = JudgeLearning({{
      {1000, 200, 0.95},  // the first run, on the fuzzy weights
      {10, 90, 0.97},
      {900, 150, 0.90},
      {20, 100, 0.96},
  }});
  EXPECT_EQ(verdict.first_runs, 1u);
  EXPECT_EQ(verdict.later_runs, 3u);
  EXPECT_DOUBLE_EQ(verdict.later.moved, 20);
  EXPECT_DOUBLE_EQ(verdict.later.messages, 100);
  EXPECT_DOUBLE_EQ(verdict.later.efficiency, 0.96);
  EXPECT_TRUE(verdict.moved_halved);
  EXPECT_TRUE(verdict.messages_halved);  // 100 <= 200 / 2: the bound itself counts
  EXPECT_TRUE(verdict.efficiency_kept);
  EXPECT_TRUE(verdict.met());
}

TEST(LearningTargetTest, EachPartCanMissAlone) {
  const RunFigures first{1000, 200, 0.95};
  EXPECT_FALSE(JudgeLearning({{first, {501, 10, 1}}}).moved_halved);
  EXPECT_FALSE(JudgeLearning({{first, {0, 101, 1}}}).messages_halved);
  const LearningVerdict lower = JudgeLearning({{first, {0, 10, 0.949}}});
  EXPECT_FALSE(lower.efficiency_kept);
  EXPECT_TRUE(lower.moved_halved && lower.messages_halved);
  EXPECT_FALSE(lower.met());
}

TEST(LearningTargetTest, SeveralSequencesTakeTheMedianOfTheirFirstRuns) {
  // The first sequence alone misses (its first run was a quiet one, 140
  // messages); over three, the first runs' median is 225.
  const LearningVerdict verdict = JudgeLearning({
      {{7498, 140, 0.965}, {1735, 76, 0.983}, {15094, 171, 0.972}},
      {{25214, 225, 0.975}, {1267, 156, 0.957}, {2004, 99, 0.985}},
      {{20000, 230, 0.960}, {300, 100, 0.980}, {500, 100, 0.981}},
  });
  EXPECT_EQ(verdict.first_runs, 3u);
  EXPECT_EQ(verdict.later_runs, 6u);
  EXPECT_DOUBLE_EQ(verdict.first.messages, 225);
  EXPECT_DOUBLE_EQ(verdict.first.moved, 20000);
  EXPECT_DOUBLE_EQ(verdict.first.efficiency, 0.965);
  EXPECT_DOUBLE_EQ(verdict.later.messages, 100);
  EXPECT_DOUBLE_EQ(verdict.later.moved, (1267.0 + 1735) / 2);
  EXPECT_DOUBLE_EQ(verdict.later.efficiency, (0.980 + 0.981) / 2);
  EXPECT_TRUE(verdict.met());
}

TEST(LearningTargetTest, SequencesOfOneRunSayNothing) {
  const LearningVerdict none = JudgeLearning({{{1000, 200, 0.95}}, {}});
  EXPECT_EQ(none.first_runs, 0u);
  EXPECT_FALSE(none.met());
  EXPECT_FALSE(JudgeLearning({}).met());
  // Beside a sequence of two runs they are left out.
  const LearningVerdict one = JudgeLearning({{{1, 1, 1}}, {{1000, 200, 0.9}, {0, 50, 0.95}}});
  EXPECT_EQ(one.first_runs, 1u);
  EXPECT_DOUBLE_EQ(one.first.messages, 200);
  EXPECT_TRUE(one.met());
}

// first = 0..9 and later = 0, 10, .., 90 differ by every integer from -9 to
// 90 exactly once, so the difference ranked r (1-based) is r - 10. With
// m = n = 10 the critical count is 24 (the exact table's 23, plus one).
TEST(LearningTargetTest, TheShiftIsTheMedianDifferenceWithTheMannWhitneyInterval) {
  std::vector<double> first, later;
  for (int i = 0; i < 10; ++i) {
    first.push_back(i);
    later.push_back(10 * i);
  }
  const Shift shift = LocationShift(first, later);
  ASSERT_TRUE(shift.known);
  EXPECT_DOUBLE_EQ(shift.estimate, 40.5);
  EXPECT_DOUBLE_EQ(shift.low, 14);
  EXPECT_DOUBLE_EQ(shift.high, 67);
  // The other way round the interval turns over.
  const Shift back = LocationShift(later, first);
  EXPECT_DOUBLE_EQ(back.estimate, -40.5);
  EXPECT_DOUBLE_EQ(back.low, -67);
  EXPECT_DOUBLE_EQ(back.high, -14);
}

TEST(LearningTargetTest, TooFewRunsGiveEveryDifferenceAsTheInterval) {
  const Shift shift = LocationShift({1, 2, 3}, {6, 7, 8});
  EXPECT_DOUBLE_EQ(shift.estimate, 5);
  EXPECT_DOUBLE_EQ(shift.low, 3);
  EXPECT_DOUBLE_EQ(shift.high, 7);
  EXPECT_FALSE(LocationShift({}, {1}).known);
  EXPECT_FALSE(LocationShift({1}, {}).known);
}

// The verdict's shift is over the efficiencies of the first runs against the
// later ones; noise equal on both sides gives an interval around 0.
TEST(LearningTargetTest, TheVerdictCarriesTheEfficiencyShift) {
  std::vector<std::vector<RunFigures>> sequences;
  for (int s = 0; s < 8; ++s) {
    std::vector<RunFigures> runs;
    for (int r = 0; r < 5; ++r) runs.push_back({0, 1, 0.97 + 0.001 * ((s * 5 + r * 3) % 7)});
    sequences.push_back(runs);
  }
  const LearningVerdict verdict = JudgeLearning(sequences);
  ASSERT_TRUE(verdict.efficiency_shift.known);
  EXPECT_LT(verdict.efficiency_shift.low, 0);
  EXPECT_GT(verdict.efficiency_shift.high, 0);
  EXPECT_LE(verdict.efficiency_shift.low, verdict.efficiency_shift.estimate);
  EXPECT_GE(verdict.efficiency_shift.high, verdict.efficiency_shift.estimate);
}

}  // namespace
}  // namespace ballast::fuzzy
