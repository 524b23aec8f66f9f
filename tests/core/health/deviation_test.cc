// Tests of the deviation from a node's own baseline (core/health/deviation.h):
// the verdicts and their figures, the cases without a verdict, how a slow job
// enters the history, and the false alarms over many healthy runs with noise.
#include "core/health/deviation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace ballast::health {
namespace {

using fuzzy::NodeHistory;

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// A steady history of the mixed rack: Pi 5 = 4, two Pi 4B = 2, Pi 3B = 1.
std::vector<NodeHistory> Rack() {
  return {{"pi5", 4, 10, 3600, 0},
          {"pi4b-0", 2, 10, 3600, 0},
          {"pi4b-1", 2, 10, 3600, 0},
          {"pi3b", 1, 10, 3600, 0}};
}

// The rack measured at `scale` times its history (another job's cost
// units), pi4b-1 at `ratio` of its own, 30 s of computing each.
std::vector<JobMeasurement> Job(double scale, double ratio) {
  return {{"pi5", 4 * scale, 30, 0},
          {"pi4b-0", 2 * scale, 30, 0},
          {"pi4b-1", 2 * scale * ratio, 30, 0},
          {"pi3b", 1 * scale, 30, 0}};
}

const NodeDeviation& Find(const std::vector<NodeDeviation>& all, const std::string& node) {
  for (const NodeDeviation& d : all) {
    if (d.node == node) return d;
  }
  ADD_FAILURE() << "no deviation for " << node;
  return all.front();
}

TEST(Deviation, HalfItsBaselineIsSlowWithTheFigures) {
  const auto all = JudgeDeviations(Rack(), Job(10, 0.5), {});
  ASSERT_EQ(all.size(), 4u);
  const NodeDeviation& d = Find(all, "pi4b-1");
  EXPECT_EQ(d.verdict, Verdict::kSlow);
  EXPECT_EQ(d.reason, "");
  EXPECT_DOUBLE_EQ(d.measured, 10);
  EXPECT_DOUBLE_EQ(d.baseline, 20);  // the others say the job's scale is 10
  EXPECT_DOUBLE_EQ(d.ratio, 0.5);
  EXPECT_DOUBLE_EQ(d.slow_below, 0.75);  // steady history: the ratio alone
  EXPECT_EQ(d.references, 3u);
  EXPECT_DOUBLE_EQ(d.history_samples, 10);
  EXPECT_FALSE(d.fast);
  // The others keep their scale: the median of the references ignores pi4b-1.
  for (const char* node : {"pi5", "pi4b-0", "pi3b"}) {
    EXPECT_EQ(Find(all, node).verdict, Verdict::kNormal) << node;
    EXPECT_NEAR(Find(all, node).ratio, 1, 1e-12) << node;
  }
}

// Three boards, as the real-node test bed's: one at a fifth of itself is
// Slow, and the other two read at their baselines, not fast by the mean of a
// healthy and a slow reference (2.2 each before their own ratio joined).
TEST(Deviation, OfThreeBoardsOneSlowDoesNotMakeTheOtherTwoFast) {
  const std::vector<NodeHistory> three = {
      {"pi3b-0", 1, 10, 3600, 0}, {"pi4b-0", 2.5, 10, 3600, 0}, {"pi4b-1", 2.5, 10, 3600, 0}};
  const std::vector<JobMeasurement> job = {
      {"pi3b-0", 4, 30, 0}, {"pi4b-0", 10, 30, 0}, {"pi4b-1", 10 * 0.2, 30, 0}};
  const auto all = JudgeDeviations(three, job, {});
  const NodeDeviation& slow = Find(all, "pi4b-1");
  EXPECT_EQ(slow.verdict, Verdict::kSlow);
  EXPECT_NEAR(slow.ratio, 0.2, 1e-12);
  EXPECT_EQ(slow.references, 2u);
  for (const char* node : {"pi3b-0", "pi4b-0"}) {
    EXPECT_EQ(Find(all, node).verdict, Verdict::kNormal) << node;
    EXPECT_FALSE(Find(all, node).fast) << node;
    EXPECT_NEAR(Find(all, node).ratio, 1, 1e-12) << node;
  }
}

TEST(Deviation, TheThresholdIsTheRatio) {
  // 0.76 of the baseline is Normal, 0.74 Slow: no band with a steady history.
  EXPECT_EQ(Find(JudgeDeviations(Rack(), Job(1, 0.76), {}), "pi4b-1").verdict, Verdict::kNormal);
  EXPECT_EQ(Find(JudgeDeviations(Rack(), Job(1, 0.74), {}), "pi4b-1").verdict, Verdict::kSlow);
  DeviationOptions strict;
  strict.slow_ratio = 0.8;
  EXPECT_EQ(Find(JudgeDeviations(Rack(), Job(1, 0.78), strict), "pi4b-1").verdict, Verdict::kSlow);
}

TEST(Deviation, WellAboveIsNormalAndNotedFast) {
  const NodeDeviation d = Find(JudgeDeviations(Rack(), Job(3, 1.6), {}), "pi4b-1");
  EXPECT_EQ(d.verdict, Verdict::kNormal);
  EXPECT_TRUE(d.fast);
  EXPECT_DOUBLE_EQ(d.ratio, 1.6);
  EXPECT_FALSE(Find(JudgeDeviations(Rack(), Job(3, 1.2), {}), "pi4b-1").fast);
}

TEST(Deviation, ANoisyHistoryWidensTheBand) {
  auto history = Rack();
  history[2].spread = 0.04;  // pi4b-1 varies by about ±20 % from job to job
  // The spread was measured against the mean of the four nodes, which hides
  // a quarter of the node's variance; the median of three references adds
  // pi / 6 of it: sigma^2 = 0.04 / 0.75 * (1 + pi / 6) = 0.0813, sigma 0.285,
  // slow below exp(-3 sigma) = 0.425 instead of 0.75.
  const double sigma = std::sqrt(0.04 / 0.75 * (1 + M_PI / 6));
  const NodeDeviation normal = Find(JudgeDeviations(history, Job(1, 0.6), {}), "pi4b-1");
  EXPECT_EQ(normal.verdict, Verdict::kNormal);
  EXPECT_NEAR(normal.slow_below, std::exp(-3 * sigma), 1e-12);
  EXPECT_NEAR(normal.slow_below, 0.425, 1e-3);
  EXPECT_DOUBLE_EQ(normal.spread, 0.04);
  EXPECT_EQ(Find(JudgeDeviations(history, Job(1, 0.4), {}), "pi4b-1").verdict, Verdict::kSlow);
  // The references' mean spread counts when it is the larger: a node whose
  // own few jobs happened to agree is not judged on that luck alone.
  for (auto& h : history) h.spread = 0.03;
  history[2].spread = 0.001;
  const NodeDeviation d = Find(JudgeDeviations(history, Job(1, 0.6), {}), "pi4b-1");
  EXPECT_NEAR(d.slow_below, std::exp(-3 * std::sqrt(0.03 / 0.75 * (1 + M_PI / 6))), 1e-12);
}

TEST(Deviation, TheJobsOwnMeasurementNoiseWidensTheBand) {
  // Items whose real costs scatter around their declared ones leave each
  // node's speed uncertain by log_variance 0.04 (a steady history): sigma^2
  // = 0.04 for the node + pi / 6 of the three references' mean 0.04,
  // slow below exp(-3 sigma) = 0.477 instead of 0.75.
  auto job = Job(1, 0.6);
  for (JobMeasurement& m : job) m.log_variance = 0.04;
  const NodeDeviation d = Find(JudgeDeviations(Rack(), job, {}), "pi4b-1");
  EXPECT_EQ(d.verdict, Verdict::kNormal);
  EXPECT_DOUBLE_EQ(d.measurement_variance, 0.04);
  EXPECT_NEAR(d.slow_below, std::exp(-3 * std::sqrt(0.04 * (1 + M_PI / 6))), 1e-12);
  EXPECT_NEAR(d.slow_below, 0.477, 1e-3);
  job = Job(1, 0.45);
  for (JobMeasurement& m : job) m.log_variance = 0.04;
  EXPECT_EQ(Find(JudgeDeviations(Rack(), job, {}), "pi4b-1").verdict, Verdict::kSlow);
  // Exact costs (0) judge as before; a hostile variance is none.
  job = Job(1, 0.6);
  job[2].log_variance = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(Find(JudgeDeviations(Rack(), job, {}), "pi4b-1").verdict, Verdict::kSlow);
}

TEST(Deviation, NoHistoryNoVerdict) {
  auto history = Rack();
  history.erase(history.begin() + 2);  // pi4b-1 is new
  const NodeDeviation d = Find(JudgeDeviations(history, Job(1, 0.5), {}), "pi4b-1");
  EXPECT_EQ(d.verdict, Verdict::kNone);
  EXPECT_EQ(d.reason, kNoHistory);
  EXPECT_DOUBLE_EQ(d.baseline, 0);
  EXPECT_DOUBLE_EQ(d.ratio, 0);
  EXPECT_DOUBLE_EQ(d.measured, 1);
  // And an empty history judges nobody.
  for (const NodeDeviation& n : JudgeDeviations({}, Job(1, 0.5), {})) {
    EXPECT_EQ(n.reason, kNoHistory);
  }
}

TEST(Deviation, StaleOrThinHistoryNoVerdict) {
  auto history = Rack();
  history[2].age_seconds = 8 * 24 * 3600.0;
  EXPECT_EQ(Find(JudgeDeviations(history, Job(1, 0.5), {}), "pi4b-1").reason, kStaleHistory);
  history = Rack();
  history[2].samples = 0.9;
  EXPECT_EQ(Find(JudgeDeviations(history, Job(1, 0.5), {}), "pi4b-1").reason, kFewSamples);
}

TEST(Deviation, LittleComputingTimeNoVerdict) {
  auto job = Job(1, 0.5);
  job[2].busy_seconds = 4.9;  // under the default 5 s
  const NodeDeviation d = Find(JudgeDeviations(Rack(), job, {}), "pi4b-1");
  EXPECT_EQ(d.verdict, Verdict::kNone);
  EXPECT_EQ(d.reason, kShortComputing);
  DeviationOptions options;
  options.min_busy_seconds = 4;
  EXPECT_EQ(Find(JudgeDeviations(Rack(), job, options), "pi4b-1").verdict, Verdict::kSlow);
}

TEST(Deviation, ASharedNodeIsNeitherJudgedNorAReference) {
  auto job = Job(1, 0.5);
  job[2].shared_fraction = 0.4;  // over history::kMaxSharedFraction
  EXPECT_EQ(Find(JudgeDeviations(Rack(), job, {}), "pi4b-1").reason, kShared);
  job[2].shared_fraction = 0.25;  // up to a quarter is judged
  EXPECT_EQ(Find(JudgeDeviations(Rack(), job, {}), "pi4b-1").verdict, Verdict::kSlow);
  // A shared Pi 5 at a third of its speed does not set pi4b-0's scale.
  job = Job(1, 1);
  job[0].speed = 4.0 / 3;
  job[0].shared_fraction = 1;
  const NodeDeviation d = Find(JudgeDeviations(Rack(), job, {}), "pi4b-0");
  EXPECT_EQ(d.references, 2u);
  EXPECT_DOUBLE_EQ(d.ratio, 1);
}

TEST(Deviation, TooFewReferenceNodesNoVerdict) {
  const std::vector<NodeHistory> two = {{"a", 2, 10, 0, 0}, {"b", 1, 10, 0, 0}};
  const std::vector<JobMeasurement> job = {{"a", 1, 30, 0}, {"b", 1, 30, 0}};
  for (const NodeDeviation& d : JudgeDeviations(two, job, {})) {
    EXPECT_EQ(d.verdict, Verdict::kNone);
    EXPECT_EQ(d.reason, kNoReference);
    EXPECT_EQ(d.references, 1u);
  }
  // Allowed, two nodes judge each other (one of them may be the one that changed).
  DeviationOptions options;
  options.min_reference_nodes = 1;
  const auto both = JudgeDeviations(two, job, options);
  EXPECT_EQ(Find(both, "a").verdict, Verdict::kSlow);
  EXPECT_TRUE(Find(both, "b").fast);
}

TEST(Deviation, HostileNumbersGiveNoVerdictNeverNaN) {
  auto history = Rack();
  history[0].speed = kNan;
  history[1].samples = -1;
  auto job = Job(1, 0.5);
  job[2].speed = kNan;
  job[3].busy_seconds = kNan;
  DeviationOptions options;
  options.slow_ratio = kNan;
  options.band_sigmas = -3;
  for (const NodeDeviation& d : JudgeDeviations(history, job, options)) {
    EXPECT_EQ(d.verdict, Verdict::kNone) << d.node;
    EXPECT_FALSE(std::isnan(d.ratio) || std::isnan(d.baseline) || std::isnan(d.measured));
  }
  EXPECT_EQ(Find(JudgeDeviations(history, job, options), "pi5").reason, kNoHistory);
  EXPECT_EQ(Find(JudgeDeviations(history, job, options), "pi4b-1").reason, kNoMeasurement);
}

TEST(Deviation, DescribedForMessages) {
  const DeviationOptions options;
  const auto all = JudgeDeviations(Rack(), Job(10, 0.52), options);
  EXPECT_EQ(DescribeDeviation(Find(all, "pi4b-1"), options),
            "pi4b-1 ran at 0.52 of its baseline (measured 10.4, baseline 20 cost units/s, "
            "slow below 0.75, 30.0 s computing): slow");
  auto job = Job(1, 1);
  job[3].busy_seconds = 1.2;
  EXPECT_EQ(DescribeDeviation(Find(JudgeDeviations(Rack(), job, options), "pi3b"), options),
            "pi3b: no verdict (short-computing: 1.2 s < 5 s)");
  EXPECT_STREQ(VerdictName(Verdict::kSlow), "slow");
  EXPECT_STREQ(VerdictName(Verdict::kNormal), "normal");
  EXPECT_STREQ(VerdictName(Verdict::kNone), "none");
}

// ---- How a job enters the history, and jobs one after another. ----

// The history of the rack after `runs` steady jobs (10 samples each).
struct Rig {
  std::map<std::string, double> truth = {{"pi5", 4}, {"pi4b-0", 2}, {"pi4b-1", 2}, {"pi3b", 1}};
  std::vector<NodeHistory> history;
  fuzzy::HistoryPriorOptions history_options;
  DeviationOptions options;

  // One job at `scale`, each node's speed times factor[node] (1 if absent).
  std::vector<NodeDeviation> Run(double scale, const std::map<std::string, double>& factor) {
    std::vector<JobMeasurement> job;
    std::vector<NodeHistory> measured;
    for (const auto& [node, speed] : truth) {
      auto f = factor.find(node);
      const double s = speed * scale * (f == factor.end() ? 1 : f->second);
      job.push_back({node, s, 30, 0});
      measured.push_back({node, s, fuzzy::JobSamples(10, 30, history_options), 0, 0});
    }
    auto verdicts = JudgeDeviations(history, job, options);
    history = EnterJob(history, measured, verdicts, history_options);
    return verdicts;
  }

  // pi4b-1's history relative to pi4b-0's (the truth: 1).
  double Relative() const {
    double a = 0, b = 0;
    for (const NodeHistory& h : history) {
      if (h.node == "pi4b-1") a = h.speed;
      if (h.node == "pi4b-0") b = h.speed;
    }
    return a / b;
  }
  const NodeHistory& Of(const std::string& node) const {
    for (const NodeHistory& h : history) {
      if (h.node == node) return h;
    }
    ADD_FAILURE() << "no history for " << node;
    return history.front();
  }
};

TEST(EnterJob, TheFirstJobHasNoVerdictAndBecomesTheBaseline) {
  Rig rig;
  for (const NodeDeviation& d : rig.Run(7, {})) EXPECT_EQ(d.reason, kNoHistory);
  ASSERT_EQ(rig.history.size(), 4u);
  EXPECT_DOUBLE_EQ(rig.Of("pi5").speed, 28);
  EXPECT_DOUBLE_EQ(rig.Of("pi5").samples, 10);
  for (const NodeDeviation& d : rig.Run(3, {})) EXPECT_EQ(d.verdict, Verdict::kNormal);
  EXPECT_DOUBLE_EQ(rig.Of("pi5").samples, 15);  // 10 * carry 0.5 + 10
}

TEST(EnterJob, OneBadDayMovesTheBaselineLittle) {
  Rig rig;
  for (int i = 0; i < 6; ++i) rig.Run(1, {});
  const double samples = rig.Of("pi4b-1").samples;  // 10 * (2 - 2^-5): near 20
  EXPECT_NEAR(samples, 19.6875, 1e-9);
  const auto bad = rig.Run(1, {{"pi4b-1", 0.5}});
  EXPECT_EQ(Find(bad, "pi4b-1").verdict, Verdict::kSlow);
  EXPECT_DOUBLE_EQ(Find(bad, "pi4b-1").ratio, 0.5);
  // Entered at the edge of the band, 0.75, with its 10 samples against the
  // kept 19.6875 * 0.5: the log baseline moves by 10 / 19.84 of log 0.75.
  const double w = 10 / (samples * 0.5 + 10);
  EXPECT_NEAR(rig.Relative(), std::exp(w * std::log(0.75)), 1e-9);
  EXPECT_NEAR(rig.Relative(), 0.865, 1e-3);
  EXPECT_NEAR(rig.Of("pi4b-1").samples, samples * 0.5 + 10, 1e-9) << "its evidence counts";
  EXPECT_NEAR(rig.Of("pi4b-1").spread, 0, 1e-20);  // the bad day is not noise
  // The next day is normal again, and the baseline recovers.
  const auto next = rig.Run(1, {});
  EXPECT_EQ(Find(next, "pi4b-1").verdict, Verdict::kNormal);
  EXPECT_NEAR(Find(next, "pi4b-1").ratio, 1 / 0.865, 1e-3);
  for (int i = 0; i < 3; ++i) rig.Run(1, {});
  EXPECT_NEAR(rig.Relative(), 1, 0.01);
}

TEST(EnterJob, HowBadTheDayWasDoesNotMatter) {
  // A job at a tenth of the node's speed (a board that barely ran) moves
  // the baseline exactly as far as one at half; entered as measured, as
  // MergeJobSpeeds alone would, it would fall to 0.31 of itself.
  std::vector<double> after;
  for (double ratio : {0.5, 0.1}) {
    Rig rig;
    for (int i = 0; i < 6; ++i) rig.Run(1, {});
    rig.Run(1, {{"pi4b-1", ratio}});
    after.push_back(rig.Relative());
  }
  EXPECT_NEAR(after[0], after[1], 1e-12);
  Rig plain;
  for (int i = 0; i < 6; ++i) plain.Run(1, {});
  plain.history = fuzzy::MergeJobSpeeds(plain.history,
                                        {{"pi5", 4, 10, 0, 0},
                                         {"pi4b-0", 2, 10, 0, 0},
                                         {"pi4b-1", 0.2, 10, 0, 0},
                                         {"pi3b", 1, 10, 0, 0}},
                                        plain.history_options);
  EXPECT_NEAR(plain.Relative(), 0.313, 1e-3);
}

TEST(EnterJob, ALastingChangeIsFlaggedThreeTimesThenAdopted) {
  Rig rig;
  for (int i = 0; i < 6; ++i) rig.Run(1, {});
  // pi4b-1 gets a weak supply for good: half its speed from now on.
  std::vector<Verdict> verdicts;
  std::vector<double> ratios;
  for (int i = 0; i < 8; ++i) {
    const NodeDeviation d = Find(rig.Run(1, {{"pi4b-1", 0.5}}), "pi4b-1");
    verdicts.push_back(d.verdict);
    ratios.push_back(d.ratio);
  }
  const std::vector<Verdict> want = {Verdict::kSlow,   Verdict::kSlow,   Verdict::kSlow,
                                     Verdict::kNormal, Verdict::kNormal, Verdict::kNormal,
                                     Verdict::kNormal, Verdict::kNormal};
  EXPECT_EQ(verdicts, want);
  EXPECT_NEAR(ratios[0], 0.5, 1e-9);
  EXPECT_NEAR(ratios[1], 0.578, 1e-3);
  EXPECT_NEAR(ratios[2], 0.668, 1e-3);
  EXPECT_GT(ratios[3], 0.75);
  // The board's new speed is its baseline: within 1 % after eight jobs.
  EXPECT_NEAR(rig.Relative(), 0.5, 0.005);
}

// A normal deviate from a generator whose sequence the standard fixes
// (std::normal_distribution's is the library's own): Box-Muller.
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

// The factor a healthy node's speed is off by in one job: uniform in
// [0.9, 1.1] ("10 % noise"; standard deviation 5.8 %), or log-normal,
// exp(0.1 N(0, 1)) (standard deviation 10 %, unbounded).
enum class Noise { kUniform, kLogNormal };
double Draw(std::mt19937_64& rng, Noise noise) {
  if (noise == Noise::kUniform) return 1 + 0.1 * (2 * ((rng() >> 11) * 0x1.0p-53) - 1);
  return std::exp(0.1 * Normal(rng));
}

// Healthy runs of the rack with `noise`, each job on its own scale. Returns
// the number of Slow verdicts (all false alarms) over `runs` jobs after the
// first, and in *judged the number of verdicts.
int FalseAlarms(uint64_t seed, int runs, Noise noise, int* judged) {
  std::mt19937_64 rng(seed);
  Rig rig;
  int alarms = 0;
  *judged = 0;
  for (int i = 0; i <= runs; ++i) {
    std::map<std::string, double> factor;
    for (const auto& [node, speed] : rig.truth) factor[node] = Draw(rng, noise);
    const double scale = std::exp(Normal(rng));  // jobs of other sizes
    for (const NodeDeviation& d : rig.Run(scale, factor)) {
      if (i == 0) continue;
      alarms += d.verdict == Verdict::kSlow;
      *judged += d.verdict != Verdict::kNone;
    }
  }
  return alarms;
}

// Of `tries` racks with six healthy jobs of history, the number in which
// pi4b-1 at `ratio` of its speed in the seventh job is found Slow.
int Found(uint64_t seed, int tries, Noise noise, double ratio) {
  std::mt19937_64 rng(seed);
  int found = 0;
  for (int t = 0; t < tries; ++t) {
    Rig rig;
    for (int i = 0; i < 7; ++i) {
      std::map<std::string, double> factor;
      for (const auto& [node, speed] : rig.truth) factor[node] = Draw(rng, noise);
      if (i == 6) factor["pi4b-1"] *= ratio;
      const auto verdicts = rig.Run(1, factor);
      if (i == 6) found += Find(verdicts, "pi4b-1").verdict == Verdict::kSlow;
    }
  }
  return found;
}

TEST(Deviation, FalseAlarmsOverAThousandHealthyRunsWithTenPercentNoise) {
  // The figure docs/history.md gives: 1,000 healthy jobs of the four-node
  // rack (4,000 verdicts), each speed off by up to ±10 %: no false alarm.
  int judged = 0;
  EXPECT_EQ(FalseAlarms(45, 1000, Noise::kUniform, &judged), 0);
  EXPECT_EQ(judged, 4000);
}

TEST(Deviation, FalseAlarmsWithTenPercentLogNormalNoise) {
  // Noise of 10 % standard deviation with a normal tail: the band the
  // history's spread sets is estimated from a few jobs, and a few healthy
  // jobs fall under it: 10 of 4,000 verdicts (0.25 %).
  int judged = 0;
  const int alarms = FalseAlarms(45, 1000, Noise::kLogNormal, &judged);
  EXPECT_EQ(judged, 4000);
  EXPECT_EQ(alarms, 10);
}

TEST(Deviation, AThrottledNodeIsFoundInNoisyRuns) {
  // A board at half its speed in one job, the others and itself with noise:
  // how often it is named in that job, of 1,000 tries.
  EXPECT_EQ(Found(46, 1000, Noise::kUniform, 0.5), 1000);
  EXPECT_EQ(Found(46, 1000, Noise::kUniform, 0.6), 981);
  EXPECT_EQ(Found(46, 1000, Noise::kLogNormal, 0.5), 866);
}

}  // namespace
}  // namespace ballast::health
