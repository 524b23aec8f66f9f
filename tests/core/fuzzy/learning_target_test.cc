#include "fuzzy/learning_target.h"

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

}  // namespace
}  // namespace ballast::fuzzy
