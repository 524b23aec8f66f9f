// Tests of the learned start cost (core/balance/learned_cost.h) and of a cost
// model that carries one (CostModel::WithStartCost): the fit finds a start
// cost in noisy data, shrugs off outliers, says nothing without spread, and
// finds none where there is none.
#include "core/balance/learned_cost.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <memory>
#include <random>
#include <vector>

#include "core/balance/cost_model.h"
#include "tests/support/test_seed.h"

namespace ballast::balance {
namespace {

struct Synthetic {
  double start_cost = 0;  // true a, in mean declared items
  double noise = 0.3;  // each item's true work is its declared cost times U[1 - noise, 1 + noise]
  uint64_t max_items = 12;  // a sample holds 1 to max_items items
  size_t samples = 200;
  std::vector<double> worker_seconds = {1.0, 0.5, 2.5};  // seconds per cost unit
};

// Samples as a job of Pareto-sized items would report them: consecutive
// ranges of random length, each worker at its own speed.
std::vector<CostSample> Draw(const Synthetic& spec, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<uint64_t> length(1, spec.max_items);
  std::vector<CostSample> samples;
  for (size_t k = 0; k < spec.samples; ++k) {
    const auto worker = static_cast<uint32_t>(k % spec.worker_seconds.size());
    CostSample s;
    s.worker = worker;
    s.items = length(random);
    double work = 0;
    for (uint64_t i = 0; i < s.items; ++i) {
      // Pareto(alpha 1.5) sizes, scaled to mean about 1.
      const double size = (1.0 / 3.0) / std::pow(1.0 - unit(random), 1 / 1.5);
      s.declared += size;
      work += spec.start_cost + size * (1 - spec.noise + 2 * spec.noise * unit(random));
    }
    s.seconds = spec.worker_seconds[worker] * work;
    samples.push_back(s);
  }
  return samples;
}

TEST(FitStartCostTest, ExactDataGiveTheStartCostExactly) {
  Synthetic spec;
  spec.start_cost = 0.5;
  spec.noise = 0;
  const StartCostFit fit = FitStartCost(Draw(spec, 1));
  EXPECT_NEAR(fit.estimate, 0.5, 1e-6);
  EXPECT_NEAR(fit.start_cost, 0.5, 1e-6);
  EXPECT_TRUE(fit.trusted());
}

TEST(FitStartCostTest, NoisyDataGiveTheStartCostWithinItsError) {
  // Over a fixed set of jobs (seeds 0-299 for each start cost), as in the
  // test below: a bound on every single fit fails now and then by chance.
  // Measured: for a = 0.2, 1 and 4 no estimate outside 0.25 a + 0.05 and
  // every fit trusted; one fit (a = 0.2) shrunk to 0.4 a or below. With one
  // random seed a run and those bounds on each fit, 4 seeds of 1,500 failed.
  const int jobs = 300;
  for (double a : {0.2, 1.0, 4.0}) {
    SCOPED_TRACE(a);
    int outside = 0, untrusted = 0, shrunk_far = 0;
    for (int seed = 0; seed < jobs; ++seed) {
      Synthetic spec;
      spec.start_cost = a;
      spec.samples = 400;
      const StartCostFit fit = FitStartCost(Draw(spec, static_cast<uint64_t>(seed)));
      if (std::fabs(fit.estimate - a) > 0.25 * a + 0.05) ++outside;
      if (!fit.trusted()) ++untrusted;
      // Shrunk toward the declared model, never past the estimate.
      EXPECT_LE(fit.start_cost, fit.estimate) << "seed " << seed;
      if (fit.start_cost <= 0.4 * a) ++shrunk_far;
    }
    std::cout << "a " << a << ": outside " << outside << ", untrusted " << untrusted
              << ", shrunk below 0.4 a " << shrunk_far << " of " << jobs << "\n";
    EXPECT_LE(outside, jobs / 100);
    EXPECT_LE(untrusted, jobs / 100);
    EXPECT_LE(shrunk_far, jobs / 100);
  }
}

TEST(FitStartCostTest, DataWithoutAStartCostGiveNone) {
  // Judged over a fixed set of fits (seeds 0-1,999), not over one random
  // seed's 20: the fit trusts a start cost when its estimate lies z = 3
  // standard errors above 0.02, and data without one do that by chance. A
  // one-sided 3-sigma tail would be 0.13 % of fits; on Pareto sizes the
  // sandwich's error is optimistic and it is more. Measured: seeds 0-1,999,
  // 11 fits trusted (0.55 %), the largest start cost used 0.074 of a mean
  // item, the largest estimate 0.117; seeds 0-19,999, 187 (0.94 %), 0.158
  // and 0.210. With a random seed and a bound on every fit, this test failed
  // about one run in fifty.
  const int fits = 2000;
  int trusted = 0;
  double largest_used = 0;
  double largest_estimate = 0;
  for (int seed = 0; seed < fits; ++seed) {
    Synthetic spec;
    spec.start_cost = 0;
    const StartCostFit fit = FitStartCost(Draw(spec, static_cast<uint64_t>(seed)));
    if (fit.trusted()) ++trusted;
    largest_used = std::max(largest_used, fit.start_cost);
    largest_estimate = std::max(largest_estimate, fit.estimate);
  }
  std::cout << "trusted " << trusted << " of " << fits << ", largest used " << largest_used
            << ", largest estimate " << largest_estimate << "\n";
  EXPECT_LE(trusted, fits / 100);
  EXPECT_LT(largest_used, 0.15);
  EXPECT_LT(largest_estimate, 0.2);
}

TEST(FitStartCostTest, OutliersPullTheFitLittle) {
  Synthetic spec;
  spec.start_cost = 1.0;
  spec.samples = 300;
  std::vector<CostSample> samples = Draw(spec, 7);
  // One report in twenty took fifty times as long (a paused node, a retry).
  for (size_t i = 0; i < samples.size(); i += 20) samples[i].seconds *= 50;
  const StartCostFit fit = FitStartCost(samples);
  EXPECT_NEAR(fit.estimate, 1.0, 0.3);
  EXPECT_TRUE(fit.trusted());
}

TEST(FitStartCostTest, WithoutSpreadThereIsNoStartCost) {
  // Every sample holds the same items per declared cost on each worker (a
  // job of uniform costs): a start cost and a slower worker look alike.
  std::vector<CostSample> samples;
  for (uint32_t k = 0; k < 100; ++k) {
    const uint64_t n = 1 + k % 9;
    const double declared = static_cast<double>(n);
    samples.push_back({k % 3, n, declared, (k % 3 + 1.0) * (0.7 * n + declared)});
  }
  const StartCostFit fit = FitStartCost(samples);
  EXPECT_EQ(fit.start_cost, 0);
  EXPECT_FALSE(fit.trusted());
}

TEST(FitStartCostTest, TooFewSamplesGiveNoStartCost) {
  Synthetic spec;
  spec.start_cost = 2;
  spec.noise = 0;
  spec.samples = 10;
  const StartCostFit fit = FitStartCost(Draw(spec, 3));
  EXPECT_EQ(fit.samples, 10u);
  EXPECT_EQ(fit.start_cost, 0);
}

TEST(FitStartCostTest, UnusableSamplesAreSkipped) {
  Synthetic spec;
  spec.start_cost = 0.5;
  spec.noise = 0;
  std::vector<CostSample> samples = Draw(spec, 5);
  const size_t usable = samples.size();
  samples.push_back({0, 0, 1, 1});
  samples.push_back({0, 3, 0, 1});
  samples.push_back({0, 3, 1, std::nan("")});
  samples.push_back({0, 3, 1, -2});
  samples.push_back({0, 3, std::numeric_limits<double>::infinity(), 1});
  const StartCostFit fit = FitStartCost(samples);
  EXPECT_EQ(fit.samples, usable);
  EXPECT_NEAR(fit.start_cost, 0.5, 1e-6);
}

TEST(StartCostLearnerTest, RefitsAsSamplesGrowAndKeepsTheRecentOnes) {
  Synthetic spec;
  spec.start_cost = 1.0;
  spec.samples = 2000;
  const std::vector<CostSample> samples = Draw(spec, 11);
  StartCostLearner learner({}, 256);
  int fits = 0;
  for (const CostSample& s : samples) {
    learner.Add(s);
    fits += learner.MaybeRefit();
  }
  EXPECT_LE(learner.fit().samples, 256u);
  EXPECT_NEAR(learner.fit().estimate, 1.0, 0.3);
  // Roughly one fit per 32 samples once full, fewer before.
  EXPECT_GT(fits, 20);
  EXPECT_LT(fits, 120);
}

TEST(CostModelStartCostTest, AddsTheStartCostToEveryItem) {
  auto costs = std::make_shared<const std::vector<double>>(std::vector<double>{1, 3, 2, 2});
  const CostModel declared(costs);
  const CostModel learned = declared.WithStartCost(0.5);
  EXPECT_EQ(learned.start_cost(), 0.5);
  EXPECT_DOUBLE_EQ(learned.Cost({0, 4}), declared.Cost({0, 4}) + 2.0);
  EXPECT_DOUBLE_EQ(learned.Cost({1, 3}), declared.Cost({1, 3}) + 1.0);
  EXPECT_DOUBLE_EQ(learned.MaxItemCost(), declared.MaxItemCost() + 0.5);
  // A NaN, negative or infinite start cost is none.
  for (double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(declared.WithStartCost(bad).start_cost(), 0);
  }
}

// Advance and Retreat with a start cost agree with a linear scan of Cost, for
// shapes and per-item costs alike.
TEST(CostModelStartCostTest, AdvanceAndRetreatMatchAScan) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "seed " << seed << "\n";
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> raw(300);
  for (double& c : raw) c = 0.05 + 5 * unit(random) * unit(random);
  std::vector<CostModel> models = {
      CostModel(300, CostShape::kUniform).WithStartCost(0.7),
      CostModel(300, CostShape::kLinear).WithStartCost(0.3),
      CostModel(300, CostShape::kSqrt).WithStartCost(2.0),
      CostModel(std::make_shared<const std::vector<double>>(raw)).WithStartCost(0.25),
  };
  for (const CostModel& model : models) {
    for (int trial = 0; trial < 300; ++trial) {
      uint64_t b = random() % 301, e = random() % 301;
      if (b > e) std::swap(b, e);
      const double cost = unit(random) * 40;
      uint64_t expect = b;
      while (expect < e && model.Cost({b, expect + 1}) <= cost + 1e-9) ++expect;
      EXPECT_EQ(model.Advance(b, e, cost), expect);
      uint64_t back = e;
      while (back > b && model.Cost({back - 1, e}) <= cost + 1e-9) --back;
      EXPECT_EQ(model.Retreat(e, b, cost), back);
    }
  }
}

}  // namespace
}  // namespace ballast::balance
