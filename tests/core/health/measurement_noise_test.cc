// Tests of the noise a job's own measurement of a node's speed carries
// (core/health/measurement_noise.h), and of what it does to the deviation
// verdicts when declared costs misstate items' costs: jobs of Pareto-sized
// items whose real costs scatter around their declared ones, dealt largest
// first to the real-node test bed's three boards as a pool deals them.
#include "core/health/measurement_noise.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/health/deviation.h"

// A namespace of its own: the unity build compiles this file with
// deviation_test.cc, whose helpers have the same names.
namespace ballast::health::noise_test {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

// `n` samples of unit cost at `speed`, the i-th off by factors[i % size].
std::vector<SpeedSample> At(double speed, int n, std::vector<double> factors = {1}) {
  std::vector<SpeedSample> samples;
  for (int i = 0; i < n; ++i) samples.push_back({1, 1 / (speed * factors[i % factors.size()])});
  return samples;
}

TEST(MeasurementNoise, ExactCostsScatterNothing) {
  const std::vector<std::vector<SpeedSample>> nodes = {At(2, 5), At(1, 5), At(0.4, 3)};
  EXPECT_DOUBLE_EQ(CostScatter(nodes), 0);
  for (double v : MeasurementVariances(nodes)) EXPECT_DOUBLE_EQ(v, 0);
}

TEST(MeasurementNoise, TheScatterIsTheSamplesRobustSpread) {
  // Every sample e^±0.5 off its node's speed, as many each way: each node's
  // median is its speed, every |r| is 0.5, sigma = 1.4826 * 0.5 with 20
  // samples of 2 nodes (2 degrees of freedom spent on their medians).
  const double e = std::exp(0.5);
  const std::vector<std::vector<SpeedSample>> nodes = {At(2, 10, {e, 1 / e}),
                                                       At(1, 10, {1 / e, e})};
  const double sigma = 1.4826 * 0.5 * std::sqrt(20.0 / 18);
  EXPECT_NEAR(CostScatter(nodes), sigma, 1e-9);
  // Ten equal samples: n_eff 10; a relative variance, exp(sigma^2) - 1.
  for (double v : MeasurementVariances(nodes)) {
    EXPECT_NEAR(v, std::expm1(sigma * sigma) / 10, 1e-9);
  }
}

TEST(MeasurementNoise, ANodeWhoseWorkWasAFewDearItemsIsMeasuredLessSurely) {
  // The same scatter; one node's work was one item of cost 10 and ten of
  // 0.1, the other's eleven of 1: n_eff 121 / 100.1 against 11.
  const double e = std::exp(0.3);
  std::vector<SpeedSample> few = {{10, 10 / e}};
  for (int i = 0; i < 10; ++i) few.push_back({0.1, 0.1 / (i % 2 ? e : 1 / e)});
  const std::vector<std::vector<SpeedSample>> nodes = {few, At(1, 11, {e, 1 / e})};
  const std::vector<double> v = MeasurementVariances(nodes);
  const double sigma = CostScatter(nodes);
  ASSERT_GT(sigma, 0);
  EXPECT_NEAR(v[0], std::expm1(sigma * sigma) * 100.1 / 121, 1e-9);
  EXPECT_NEAR(v[1], std::expm1(sigma * sigma) / 11, 1e-9);
  EXPECT_GT(v[0] / v[1], 9);
}

TEST(MeasurementNoise, OneThrottledBoardDoesNotMakeTheScatter) {
  // Two boards within ±2 % item to item; the third ran ten items at its
  // speed and ten at a tenth of it (throttled mid-job). The pooled median
  // deviation stays the steady boards': the throttled board is judged in a
  // band its own two speeds did not widen.
  const double u = 1.02;
  std::vector<SpeedSample> throttled = At(1, 10);
  for (const SpeedSample& s : At(0.1, 10)) throttled.push_back(s);
  const std::vector<std::vector<SpeedSample>> nodes = {At(1, 20, {u, 1 / u}), At(1, 20, {1 / u, u}),
                                                       throttled};
  EXPECT_LT(CostScatter(nodes), 0.05);
}

TEST(MeasurementNoise, TooFewSamplesOrOneANodeTellNothing) {
  // Five samples pooled: unknown. Nodes of one sample each: nothing to pool.
  const double e = std::exp(0.5);
  EXPECT_DOUBLE_EQ(CostScatter({At(1, 3, {e, 1 / e}), At(2, 2, {e, 1 / e})}), 0);
  EXPECT_DOUBLE_EQ(CostScatter({At(1, 1), At(2, 1, {e}), At(3, 1, {1 / e}), At(4, 1), At(5, 1, {e}),
                                At(6, 1), At(7, 1, {e})}),
                   0);
  EXPECT_TRUE(MeasurementVariances({}).empty());
  EXPECT_EQ(MeasurementVariances({{}, {}}), (std::vector<double>{0, 0}));
}

TEST(MeasurementNoise, HostileNumbersAreIgnored) {
  const double e = std::exp(0.5);
  std::vector<SpeedSample> a = At(1, 10, {e, 1 / e});
  a.push_back({kNan, 1});
  a.push_back({1, 0});
  a.push_back({-1, 1});
  a.push_back({std::numeric_limits<double>::infinity(), 1});
  const std::vector<std::vector<SpeedSample>> nodes = {a, At(2, 10, {e, 1 / e})};
  EXPECT_NEAR(CostScatter(nodes), 1.4826 * 0.5 * std::sqrt(20.0 / 18), 1e-9);
  for (double v : MeasurementVariances(nodes)) EXPECT_TRUE(std::isfinite(v));
}

TEST(MeasurementNoise, AddSpeedSampleKeepsTheTotalsPastItsCap) {
  std::vector<SpeedSample> samples;
  for (int i = 0; i < 5; ++i) AddSpeedSample(samples, {1, 2}, 3);
  AddSpeedSample(samples, {kNan, 1}, 3);
  AddSpeedSample(samples, {0, 1}, 3);  // nothing merged: no sample
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_DOUBLE_EQ(samples[2].cost, 3);
  EXPECT_DOUBLE_EQ(samples[2].busy_seconds, 6);
}

// --- Jobs whose declared costs misstate their items' -----------------------

// A normal deviate from a generator whose sequence the standard fixes.
double Normal(std::mt19937_64& rng) {
  const double u1 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  const double u2 = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

struct Board {
  std::string name;
  double speed;  // declared cost units per second, as its history says
};

// The real-node test bed: a Pi 3B at a fifth of a core, two Pi 4Bs at half.
const std::vector<Board> kBoards = {{"pi3b-0", 0.2}, {"pi4b-0", 0.5}, {"pi4b-1", 0.5}};

// One job of 60 Pareto-sized items (shape 1.2, the largest at most a tenth
// of all), 100 declared units in all, each really costing its declared cost
// times exp(scatter N(0, 1)); dealt largest first to whichever board is free
// first; pi4b-1 runs at `throttle` of its speed. What each board measured.
std::vector<JobMeasurement> RunJob(std::mt19937_64& rng, double scatter, double throttle,
                                   bool with_noise) {
  std::vector<double> sizes;
  for (int i = 0; i < 60; ++i) {
    const double u = (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;
    sizes.push_back(std::pow(u, -1 / 1.2));
  }
  double total = 0;
  for (double s : sizes) total += s;
  for (double& s : sizes) s = std::min(s, total / 10);
  total = 0;
  for (double s : sizes) total += s;
  for (double& s : sizes) s *= 100 / total;
  std::sort(sizes.rbegin(), sizes.rend());
  std::vector<double> free_at(kBoards.size(), 0);
  std::vector<std::vector<SpeedSample>> samples(kBoards.size());
  for (double declared : sizes) {
    const size_t b =
        static_cast<size_t>(std::min_element(free_at.begin(), free_at.end()) - free_at.begin());
    const double speed = kBoards[b].speed * (kBoards[b].name == "pi4b-1" ? throttle : 1);
    const double seconds = declared * std::exp(scatter * Normal(rng)) / speed;
    free_at[b] += seconds;
    samples[b].push_back({declared, seconds});
  }
  const std::vector<double> variances = MeasurementVariances(samples);
  std::vector<JobMeasurement> measured;
  for (size_t b = 0; b < kBoards.size(); ++b) {
    double cost = 0, busy = 0;
    for (const SpeedSample& s : samples[b]) cost += s.cost, busy += s.busy_seconds;
    measured.push_back({kBoards[b].name, cost / busy, busy, 0, with_noise ? variances[b] : 0});
  }
  return measured;
}

// Of `jobs` jobs judged against a steady history, the Slow verdicts on
// `node` (every board healthy but pi4b-1 at `throttle`).
int SlowVerdicts(uint64_t seed, int jobs, double scatter, double throttle, bool with_noise,
                 const std::string& node) {
  std::vector<fuzzy::NodeHistory> history;
  for (const Board& b : kBoards) history.push_back({b.name, b.speed, 10, 3600, 0});
  std::mt19937_64 rng(seed);
  int slow = 0;
  for (int j = 0; j < jobs; ++j) {
    for (const NodeDeviation& d :
         JudgeDeviations(history, RunJob(rng, scatter, throttle, with_noise), {})) {
      slow += d.node == node && d.verdict == Verdict::kSlow;
    }
  }
  return slow;
}

int AllSlowVerdicts(uint64_t seed, int jobs, double scatter, bool with_noise) {
  int slow = 0;
  for (const Board& b : kBoards) slow += SlowVerdicts(seed, jobs, scatter, 1, with_noise, b.name);
  return slow;
}

TEST(MeasurementNoise, DearItemsDrawnByOneHealthyBoardRaiseFewAlarms) {
  // Real costs off their declared ones by exp(0.6 N(0, 1)) (archives of
  // text and noise: a fifth to five times at the tails), 500 healthy jobs,
  // 1,500 verdicts. Judged as if the costs were exact, a board that drew a
  // few dear items is named slow in one verdict of nine; with the job's own
  // noise, as often as a 3-sigma band promises (0.13 %). Costs that scatter
  // little (exp(0.1 N)) are judged alike either way.
  EXPECT_EQ(AllSlowVerdicts(47, 500, 0.6, false), 163);
  EXPECT_EQ(AllSlowVerdicts(47, 500, 0.6, true), 2);
  EXPECT_EQ(AllSlowVerdicts(47, 500, 1.0, false), 263);
  EXPECT_EQ(AllSlowVerdicts(47, 500, 1.0, true), 0);
  EXPECT_EQ(AllSlowVerdicts(47, 500, 0.1, false), 1);
  EXPECT_EQ(AllSlowVerdicts(47, 500, 0.1, true), 1);
}

TEST(MeasurementNoise, AThrottledBoardIsStillFound) {
  // pi4b-1 at 0.34 of itself (the real-node test's cut): with costs that
  // state items' costs found every time. With costs that scatter by
  // exp(0.6 N), one job cannot tell a halving from a bad draw as surely:
  // found in 200 of 500 jobs (466 when judged as if the costs were exact,
  // at the price of the false alarms above).
  EXPECT_EQ(SlowVerdicts(48, 500, 0.02, 0.34, true, "pi4b-1"), 500);
  EXPECT_EQ(SlowVerdicts(48, 500, 0.6, 0.34, true, "pi4b-1"), 200);
  EXPECT_EQ(SlowVerdicts(48, 500, 0.6, 0.34, false, "pi4b-1"), 466);
}

}  // namespace
}  // namespace ballast::health::noise_test
