// Tests of the history prior (core/fuzzy/history_prior.h): the credibility
// rule, the scale, the blend, staleness, hostile numbers, merging jobs.
#include "core/fuzzy/history_prior.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace ballast::fuzzy {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

const NodePrior& Find(const std::vector<NodePrior>& priors, const std::string& node) {
  for (const NodePrior& p : priors) {
    if (p.node == node) return p;
  }
  ADD_FAILURE() << "no prior for " << node;
  return priors.front();
}

TEST(HistoryPrior, CredibilityIsTheSquareRootRule) {
  HistoryPriorOptions options;
  options.full_trust_samples = 16;
  struct Case {
    double samples;
    double want;
  } cases[] = {{0, 0}, {1, 0.25}, {4, 0.5}, {16, 1}, {100, 1}, {-3, 0}, {kNan, 0}, {kInf, 0}};
  for (const Case& c : cases) {
    EXPECT_DOUBLE_EQ(Credibility(c.samples, options), c.want) << "samples " << c.samples;
  }
}

TEST(HistoryPrior, NoHistoryKeepsTheFuzzyWeights) {
  const std::map<std::string, double> fuzzy = {{"a", 5}, {"b", 5}, {"c", 1}};
  const auto priors = BlendHistoryPrior(fuzzy, {}, {});
  ASSERT_EQ(priors.size(), 3u);
  for (const NodePrior& p : priors) {
    EXPECT_EQ(p.source, PriorSource::kProfile) << p.node;
    EXPECT_DOUBLE_EQ(p.value, fuzzy.at(p.node));
    EXPECT_EQ(p.samples, 0);
  }
}

// Full credibility on every node: the prior is the history, on the fuzzy
// weights' scale (geometric mean of f / h = (5*5*1 / (100*50*25))^(1/3)).
TEST(HistoryPrior, FullTrustGivesTheHistoryRatiosOnTheFuzzyScale) {
  const std::map<std::string, double> fuzzy = {{"a", 5}, {"b", 5}, {"c", 1}};
  const std::vector<NodeHistory> history = {
      {"a", 100, 10, 60}, {"b", 50, 10, 60}, {"c", 25, 40, 60}};
  const auto priors = BlendHistoryPrior(fuzzy, history, {});
  const double scale = std::cbrt(5.0 * 5.0 * 1.0 / (100.0 * 50.0 * 25.0));
  EXPECT_NEAR(Find(priors, "a").value, 100 * scale, 1e-9);
  EXPECT_NEAR(Find(priors, "b").value, 50 * scale, 1e-9);
  EXPECT_NEAR(Find(priors, "c").value, 25 * scale, 1e-9);
  EXPECT_EQ(Find(priors, "a").source, PriorSource::kHistory);
  EXPECT_DOUBLE_EQ(Find(priors, "c").samples, 40);
  EXPECT_DOUBLE_EQ(Find(priors, "c").age_seconds, 60);
}

// The worked example of docs/history.md.
TEST(HistoryPrior, WorkedExampleOfTheDocs) {
  const std::map<std::string, double> fuzzy = {{"pi5", 9}, {"pi4b", 5}, {"pi3b", 1}};
  const std::vector<NodeHistory> history = {
      {"pi5", 2.0, 10, 3600}, {"pi4b", 0.5, 2.5, 3600}, {"pi3b", 0.4, 40, 10 * 86400.0}};
  const auto priors = BlendHistoryPrior(fuzzy, history, {});
  // pi3b is stale: its fuzzy weight. Z(pi5) = 1, Z(pi4b) = 0.5.
  // log c = (1 * ln(9 / 2) + 0.5 * ln(5 / 0.5)) / 1.5
  const double c = std::exp((std::log(4.5) + 0.5 * std::log(10.0)) / 1.5);
  EXPECT_EQ(Find(priors, "pi3b").source, PriorSource::kProfile);
  EXPECT_DOUBLE_EQ(Find(priors, "pi3b").value, 1);
  EXPECT_EQ(Find(priors, "pi5").source, PriorSource::kHistory);
  EXPECT_NEAR(Find(priors, "pi5").value, 2.0 * c, 1e-9);
  EXPECT_EQ(Find(priors, "pi4b").source, PriorSource::kBlended);
  EXPECT_NEAR(Find(priors, "pi4b").value, std::sqrt(5 * 0.5 * c), 1e-9);
  EXPECT_NEAR(Find(priors, "pi4b").credibility, 0.5, 1e-12);
  // The figures the docs print.
  EXPECT_NEAR(c, 5.8723, 1e-4);
  EXPECT_NEAR(Find(priors, "pi5").value, 11.745, 1e-3);
  EXPECT_NEAR(Find(priors, "pi4b").value, 3.832, 1e-3);
}

TEST(HistoryPrior, PartialCredibilityBlendsGeometrically) {
  HistoryPriorOptions options;
  options.full_trust_samples = 100;
  // Two nodes, both with a quarter of full trust (Z = 0.5); the fuzzy model
  // says 1 : 1, history 4 : 1. Scale c = sqrt(1/4 * 1/1) = 1/2, so scaled
  // history is 2 : 0.5 and the blend sqrt(1 * 2) : sqrt(1 * 0.5).
  const auto priors =
      BlendHistoryPrior({{"x", 1}, {"y", 1}}, {{"x", 4, 25, 0}, {"y", 1, 25, 0}}, options);
  EXPECT_NEAR(Find(priors, "x").value, std::sqrt(2.0), 1e-12);
  EXPECT_NEAR(Find(priors, "y").value, std::sqrt(0.5), 1e-12);
  EXPECT_EQ(Find(priors, "x").source, PriorSource::kBlended);
}

TEST(HistoryPrior, StaleOrUnusableHistoryFallsBackToTheProfile) {
  HistoryPriorOptions options;
  options.max_age_seconds = 100;
  struct Case {
    const char* what;
    NodeHistory h;
  } cases[] = {
      {"stale", {"a", 3, 10, 101}},         {"zero speed", {"a", 0, 10, 1}},
      {"negative speed", {"a", -2, 10, 1}}, {"nan speed", {"a", kNan, 10, 1}},
      {"inf speed", {"a", kInf, 10, 1}},    {"huge speed", {"a", 1e305, 10, 1}},
      {"no samples", {"a", 3, 0, 1}},       {"negative samples", {"a", 3, -1, 1}},
      {"nan samples", {"a", 3, kNan, 1}},   {"nan age", {"a", 3, 10, kNan}},
      {"inf age", {"a", 3, 10, kInf}},
  };
  for (const Case& c : cases) {
    const auto priors = BlendHistoryPrior({{"a", 7}, {"b", 2}}, {c.h, {"b", 1, 10, 1}}, options);
    EXPECT_EQ(Find(priors, "a").source, PriorSource::kProfile) << c.what;
    EXPECT_DOUBLE_EQ(Find(priors, "a").value, 7) << c.what;
    // b alone has history: its scale is its own fuzzy weight.
    EXPECT_DOUBLE_EQ(Find(priors, "b").value, 2) << c.what;
  }
}

TEST(HistoryPrior, NegativeAgeReadsAsFresh) {
  const auto priors =
      BlendHistoryPrior({{"a", 1}, {"b", 1}}, {{"a", 2, 10, -50}, {"b", 1, 10, 0}}, {});
  EXPECT_EQ(Find(priors, "a").source, PriorSource::kHistory);
  EXPECT_DOUBLE_EQ(Find(priors, "a").age_seconds, 0);
}

TEST(HistoryPrior, HostileFuzzyWeightsAndOptionsStayFinite) {
  const std::map<std::string, double> fuzzy = {
      {"a", kNan}, {"b", -1}, {"c", 0}, {"d", kInf}, {"e", 1e300}};
  const std::vector<NodeHistory> history = {{"a", 1e-300, 1e300, 0}, {"e", 1e300, 1e300, 0}};
  for (double full : {kNan, -1.0, 0.0, 1e-300, kInf}) {
    HistoryPriorOptions options;
    options.full_trust_samples = full;
    options.max_age_seconds = kNan;  // reads as 0: only fresh samples
    for (const NodePrior& p : BlendHistoryPrior(fuzzy, history, options)) {
      EXPECT_TRUE(std::isfinite(p.value)) << p.node << " full " << full;
      EXPECT_GE(p.value, 1e-9) << p.node;
      EXPECT_LE(p.value, 1e12) << p.node;
    }
  }
}

TEST(HistoryPrior, NewestDuplicateWinsAndUnknownNodesAreIgnored) {
  const auto priors = BlendHistoryPrior(
      {{"a", 1}, {"b", 1}},
      {{"a", 9, 10, 500}, {"a", 4, 10, 5}, {"b", 1, 10, 5}, {"ghost", 1000, 10, 0}}, {});
  EXPECT_NEAR(Find(priors, "a").value / Find(priors, "b").value, 4, 1e-9);
  EXPECT_EQ(priors.size(), 2u);
}

TEST(HistoryPrior, WeightedSamplesDiscountThrottledOnes) {
  HistoryPriorOptions options;
  options.throttled_weight = 0.25;
  EXPECT_DOUBLE_EQ(WeightedSamples(10, 0, options), 10);
  EXPECT_DOUBLE_EQ(WeightedSamples(10, 4, options), 7);
  EXPECT_DOUBLE_EQ(WeightedSamples(10, 40, options), 2.5);  // capped at samples
  EXPECT_DOUBLE_EQ(WeightedSamples(-1, 4, options), 0);
  EXPECT_DOUBLE_EQ(WeightedSamples(kNan, kNan, options), 0);
  options.throttled_weight = kNan;  // reads as the default
  EXPECT_DOUBLE_EQ(WeightedSamples(8, 8, options), 2);
}

TEST(HistoryPrior, JobSamplesNeedComputingTimeBehindThem) {
  HistoryPriorOptions options;
  options.sample_seconds = 0.5;
  EXPECT_DOUBLE_EQ(JobSamples(20, 94, options), 20);
  EXPECT_DOUBLE_EQ(JobSamples(20, 2, options), 4);
  EXPECT_DOUBLE_EQ(JobSamples(2, 0.044, options), 0.088);
  EXPECT_EQ(JobSamples(0, 10, options), 0);
  EXPECT_EQ(JobSamples(5, kNan, options), 0);
  options.sample_seconds = -1;  // reads as the default
  EXPECT_DOUBLE_EQ(JobSamples(20, 2, options), 4);
}

TEST(HistoryPrior, MeasuredSpeedIsCostOverBusyTime) {
  EXPECT_DOUBLE_EQ(MeasuredSpeed(300, 60), 5);
  EXPECT_EQ(MeasuredSpeed(0, 60), 0);
  EXPECT_EQ(MeasuredSpeed(300, 0), 0);
  EXPECT_EQ(MeasuredSpeed(kNan, 1), 0);
  EXPECT_EQ(MeasuredSpeed(1e300, 1e-300), 0);  // overflows: unknown
}

// A job of another size has other cost units: the kept records are rescaled
// onto the new job's before they are averaged.
TEST(HistoryPrior, MergeRescalesKeptRecordsOntoTheNewJob) {
  HistoryPriorOptions options;
  options.carry = 0.5;
  const std::vector<NodeHistory> kept = {{"a", 10, 20, 900}, {"b", 5, 20, 900}, {"c", 1, 4, 900}};
  // The new job's units are 100x: a and b unchanged in ratio, c absent.
  const std::vector<NodeHistory> measured = {{"a", 1000, 10, 0}, {"b", 500, 10, 0}};
  const auto merged = MergeJobSpeeds(kept, measured, options);
  ASSERT_EQ(merged.size(), 3u);
  EXPECT_EQ(merged[0].node, "a");
  EXPECT_NEAR(merged[0].speed, 1000, 1e-6);
  EXPECT_DOUBLE_EQ(merged[0].samples, 20);  // 20 * 0.5 + 10
  EXPECT_DOUBLE_EQ(merged[0].age_seconds, 0);
  EXPECT_NEAR(merged[2].speed, 100, 1e-9);  // c rescaled, its record kept
  EXPECT_DOUBLE_EQ(merged[2].samples, 4);
  EXPECT_DOUBLE_EQ(merged[2].age_seconds, 900);
}

// A node that slowed down: the merged speed lies between, nearer the new job
// (its samples count fully, the kept ones half).
TEST(HistoryPrior, MergeFollowsADriftingNode) {
  const std::vector<NodeHistory> kept = {{"a", 1, 10, 0}, {"b", 1, 10, 0}, {"c", 1, 10, 0}};
  const std::vector<NodeHistory> measured = {{"a", 1, 10, 0}, {"b", 1, 10, 0}, {"c", 0.5, 10, 0}};
  const auto merged = MergeJobSpeeds(kept, measured, {});
  ASSERT_EQ(merged.size(), 3u);
  const double ratio = merged[2].speed / merged[0].speed;
  EXPECT_LT(ratio, 1);
  EXPECT_GT(ratio, 0.5);
  EXPECT_NEAR(ratio, std::exp((5 * 0 + 10 * std::log(0.5)) / 15), 1e-9);
}

TEST(HistoryPrior, MergeDropsUnusableEntriesAndCapsSamples) {
  HistoryPriorOptions options;
  options.max_samples = 50;
  const auto merged = MergeJobSpeeds({{"a", kNan, 10, 0}, {"b", 2, 1e9, 0}},
                                     {{"a", 3, 5, 0}, {"c", -1, 5, 0}}, options);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].node, "a");
  EXPECT_DOUBLE_EQ(merged[0].speed, 3);
  EXPECT_DOUBLE_EQ(merged[1].samples, 50);
}

TEST(HistoryPrior, ASpreadBetweenJobsLowersCredibility) {
  HistoryPriorOptions options;
  options.full_trust_samples = 16;
  options.spread_tolerance = 0.05;
  EXPECT_DOUBLE_EQ(Credibility(16, options, 0.05), 0.5);
  EXPECT_DOUBLE_EQ(Credibility(4, options, 0.15), 0.125);
  EXPECT_DOUBLE_EQ(Credibility(16, options, kNan), 1);
  EXPECT_DOUBLE_EQ(Credibility(16, options, -1), 1);
  EXPECT_LT(Credibility(16, options, kInf), 1e-200);
}

// Labels nearly right, a node whose speed jumps from job to job: its history
// counts little. Labels far off: the same spread counts for less, as the
// labels are the worse guess.
TEST(HistoryPrior, ASpreadCountsAgainstHowWrongTheLabelsAre) {
  const std::vector<NodeHistory> noisy = {{"x", 2.2, 100, 0, 0.5}, {"y", 1, 100, 0, 0}};
  const auto near = BlendHistoryPrior({{"x", 2}, {"y", 1}}, noisy, {});
  const auto far = BlendHistoryPrior({{"x", 1}, {"y", 8}}, noisy, {});
  EXPECT_EQ(Find(near, "y").credibility, 1);
  EXPECT_LT(Find(near, "x").credibility, 0.3);
  EXPECT_GT(Find(far, "x").credibility, 0.5);
  EXPECT_LT(Find(far, "x").credibility, 1);
  EXPECT_DOUBLE_EQ(Find(far, "x").spread, 0.5);
  EXPECT_EQ(Find(far, "x").source, PriorSource::kBlended);
}

TEST(HistoryPrior, MergeKeepsTheSpreadBetweenJobs) {
  HistoryPriorOptions options;
  options.carry = 0.5;
  // a doubles against b: after rescaling, each moved by sqrt(2) the other way.
  auto merged = MergeJobSpeeds({{"a", 1, 10, 0}, {"b", 1, 10, 0}},
                               {{"a", 2, 10, 0}, {"b", 1, 10, 0}}, options);
  const double d2 = std::pow(std::log(std::sqrt(2.0)), 2);
  EXPECT_NEAR(merged[0].spread, d2, 1e-12);
  EXPECT_NEAR(merged[1].spread, d2, 1e-12);
  // A steady job after it: the spread halves.
  const std::vector<NodeHistory> steady = {{"a", merged[0].speed, 10, 0},
                                           {"b", merged[1].speed, 10, 0}};
  merged = MergeJobSpeeds(merged, steady, options);
  EXPECT_NEAR(merged[0].spread, d2 / 2, 1e-12);
}

TEST(HistoryPrior, SplitErrorIsTheWorstRelativeShareError) {
  EXPECT_DOUBLE_EQ(SplitError({1, 1}, {1, 1}), 0);
  EXPECT_DOUBLE_EQ(SplitError({2, 4}, {1, 2}), 0);
  // shares 0.5 / 0.5 against 0.75 / 0.25: errors 1/3 and 1.
  EXPECT_DOUBLE_EQ(SplitError({1, 1}, {3, 1}), 1);
  EXPECT_EQ(SplitError({}, {}), 0);
  EXPECT_EQ(SplitError({1}, {1, 2}), 0);
  EXPECT_EQ(SplitError({kNan, 1}, {1, 1}), 0);
}

TEST(HistoryPrior, SourceNames) {
  EXPECT_STREQ(PriorSourceName(PriorSource::kProfile), "profile");
  EXPECT_STREQ(PriorSourceName(PriorSource::kHistory), "history");
  EXPECT_STREQ(PriorSourceName(PriorSource::kBlended), "blended");
}

}  // namespace
}  // namespace ballast::fuzzy
