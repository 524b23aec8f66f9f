// Finished jobs' speeds on one scale (core/fuzzy/job_speeds.h): the exact
// least-squares solution of log s(job, node) = c(job) + x(node), each group
// of nodes that jobs join scaled so that its x, counted once per job that
// measured the node, sum to zero. Each case against its closed form.
#include "core/fuzzy/job_speeds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

namespace ballast::fuzzy {
namespace {

std::string Node(int i) { return "n" + std::to_string(100 + i); }

// Regression (issue 61): 200 fixed rounds of alternating means gave this
// chain a ratio of 34,447 where its jobs measured 2^19 = 524,288.
TEST(SpeedsOnOneScale, AChainOfTwoNodeJobsKeepsEveryRatio) {
  SpeedsOfJobs chain;
  for (int i = 0; i < 19; ++i) chain.push_back({{Node(i), 1.0}, {Node(i + 1), 2.0}});
  const auto speeds = SpeedsOnOneScale(chain);
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  ASSERT_EQ(speeds->size(), 20u);
  EXPECT_NEAR(speeds->at(Node(19)) / speeds->at(Node(0)) / std::pow(2.0, 19), 1.0, 1e-12);
  // No residual: every node is 2^(i - 9.5), the ends counted once, the
  // middle twice, so the weighted mean of the exponents is 9.5.
  for (int i = 0; i < 20; ++i) {
    EXPECT_NEAR(speeds->at(Node(i)) / std::pow(2.0, i - 9.5), 1.0, 1e-12) << Node(i);
  }
}

// A star: every job measures the hub and one leaf, in its own units.
TEST(SpeedsOnOneScale, AStarKeepsEachLeafsRatioToTheHub) {
  const SpeedsOfJobs star = {
      {{"hub", 1}, {"a", 2}}, {{"hub", 10}, {"b", 30}}, {{"hub", 0.5}, {"c", 2.5}}};
  const auto speeds = SpeedsOnOneScale(star);
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  // The hub is counted three times, each leaf once: 3 x + (x + log 2) +
  // (x + log 3) + (x + log 5) = 0.
  const double hub = std::exp(-(std::log(2.0) + std::log(3.0) + std::log(5.0)) / 6);
  EXPECT_NEAR(speeds->at("hub") / hub, 1.0, 1e-12);
  EXPECT_NEAR(speeds->at("a") / speeds->at("hub"), 2.0, 1e-12);
  EXPECT_NEAR(speeds->at("b") / speeds->at("hub"), 3.0, 1e-12);
  EXPECT_NEAR(speeds->at("c") / speeds->at("hub"), 5.0, 1e-12);
}

// Groups no job joins keep their own scale, each its geometric mean 1.
TEST(SpeedsOnOneScale, TwoDisconnectedGroupsAreEachScaledAlone) {
  const SpeedsOfJobs jobs = {{{"a", 1}, {"b", 3}}, {{"c", 5}, {"d", 20}}};
  const auto speeds = SpeedsOnOneScale(jobs);
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  EXPECT_NEAR(speeds->at("a"), 1 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(speeds->at("b"), std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(speeds->at("c"), 0.5, 1e-12);
  EXPECT_NEAR(speeds->at("d"), 2.0, 1e-12);
}

// Jobs that disagree: b/a = 2, c/b = 2, c/a = 2. A two-node job's error is
// half the squared difference of its log ratio, so with d = log(b/a) =
// log(c/b) the least squares minimise 2 (d - L)^2 + (2d - L)^2, L = log 2:
// d = 2L/3, and c/a = 2^(4/3).
TEST(SpeedsOnOneScale, JobsThatDisagreeMeetAtTheLeastSquares) {
  const SpeedsOfJobs jobs = {{{"a", 1}, {"b", 2}}, {{"b", 1}, {"c", 2}}, {{"a", 1}, {"c", 2}}};
  const auto speeds = SpeedsOnOneScale(jobs);
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  EXPECT_NEAR(speeds->at("c") / speeds->at("a"), std::pow(2.0, 4.0 / 3), 1e-12);
  EXPECT_NEAR(speeds->at("b") / speeds->at("a"), std::pow(2.0, 2.0 / 3), 1e-12);
}

// Fewer jobs than nodes: the jobs' constants are the unknowns solved.
TEST(SpeedsOnOneScale, ManyNodesInFewJobsAreSolvedByTheJobs) {
  SpeedsOfJobs jobs(2);
  for (int i = 0; i < 50; ++i) {
    jobs[0][Node(i)] = 1.0 + i;
    jobs[1][Node(i)] = 1000.0 * (1.0 + i);
  }
  const auto speeds = SpeedsOnOneScale(jobs);
  ASSERT_TRUE(speeds.ok()) << speeds.status().ToString();
  for (int i = 1; i < 50; ++i) {
    EXPECT_NEAR(speeds->at(Node(i)) / speeds->at(Node(0)), 1.0 + i, 1e-12) << Node(i);
  }
  double log_sum = 0;
  for (const auto& [node, speed] : *speeds) log_sum += std::log(speed);
  EXPECT_NEAR(log_sum, 0, 1e-9);
}

TEST(SpeedsOnOneScale, AGroupPastTheDenseSolvesBoundIsRefusedNamingIt) {
  SpeedsOfJobs chain;
  for (size_t i = 0; i <= kMaxGroupUnknowns; ++i) {
    chain.push_back(
        {{"n" + std::to_string(10000 + i), 1.0}, {"n" + std::to_string(10001 + i), 1.0}});
  }
  const auto speeds = SpeedsOnOneScale(chain);
  ASSERT_FALSE(speeds.ok());
  EXPECT_EQ(speeds.status().message(),
            "2001 jobs measured 2002 nodes that they join in one group: a fit solves at most 2000 "
            "of either");
}

}  // namespace
}  // namespace ballast::fuzzy
