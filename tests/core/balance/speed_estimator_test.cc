// Tests of SpeedEstimator (core/balance/speed_estimator.h): a worker's speed
// after given reports, hand-computed: the first measurement taken whole, the
// next ones smoothed (a rise in communication at once), reports without
// finished work kept pending, claims bounded by the time seen (across the
// pending reports: an item that outlasts several), priors scaled
// by what measured workers show and blended while credible, the lead over
// the predictions, and the restatement in a new cost model.
#include "core/balance/speed_estimator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ballast::balance {
namespace {

std::vector<WorkerPrior> EstimatorPriors(const std::vector<double>& speeds,
                                         double credibility = 0) {
  std::vector<WorkerPrior> workers;
  for (size_t i = 0; i < speeds.size(); ++i) {
    workers.push_back({"w" + std::to_string(i), speeds[i], credibility});
  }
  return workers;
}

// A report that finished `cost` (as many items) in `elapsed` seconds, of
// which `calc` computing.
SpeedSample Finished(double cost, double elapsed, double calc, bool lease_start = false) {
  return SpeedSample{elapsed, calc, cost, cost, lease_start};
}

TEST(SpeedEstimatorTest, AnUnmeasuredWorkerRunsAtItsPrior) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({2, 0}));
  EXPECT_TRUE(speeds.NoneMeasured());
  EXPECT_FALSE(speeds.IsMeasured(0));
  EXPECT_DOUBLE_EQ(speeds.PriorScale(), 1);
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 2);
  // A prior of 0 counts as 1e-9, so that no prediction divides by zero.
  EXPECT_DOUBLE_EQ(speeds.Speed(1, std::nullopt), 1e-9);
}

TEST(SpeedEstimatorTest, TheFirstMeasurementIsTakenWholeAndTheNextOnesSmoothed) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  // 10 cost units in 4 s, 2 of them computing: 0.2 s calc + 0.2 s comm per unit.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 4, 2)));
  EXPECT_TRUE(speeds.IsMeasured(0));
  EXPECT_FALSE(speeds.NoneMeasured());
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, 0.2);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).comm_per_cost, 0.2);
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 2.5);
  // 10 units in 1 s, all computing: calc 0.1 and comm 0, each weighted a
  // half against the old figure: 0.15 + 0.1 s per unit.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 1, 1)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, 0.15);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).comm_per_cost, 0.1);
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 4);
  // A rise in communication is believed at once: 10 units in 6 s, 1 computing.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 6, 1)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, 0.125);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).comm_per_cost, 0.5);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).evidence_cost, 30);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).evidence_s, 4);
}

TEST(SpeedEstimatorTest, AReportWithoutFinishedWorkIsFoldedIntoTheNext) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_FALSE(speeds.Observe(0, Finished(0, 2, 2)));
  EXPECT_FALSE(speeds.IsMeasured(0));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).pending_calc, 2);
  // 10 units over both reports' 4 s of computing.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 2, 2)));
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 2.5);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).pending_calc, 0);
}

TEST(SpeedEstimatorTest, AnIdleWorkersPendingTimeIsDropped) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_FALSE(speeds.Observe(0, Finished(0, 100, 0)));
  speeds.DropPending(0);
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 1, 1)));
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 10);
}

TEST(SpeedEstimatorTest, AClaimIsBoundedByTheTimeSeenAndNonsenseCountsAsNothing) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1, 1, 1}));
  // 50 s of computing claimed over 5 s: 5 s.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 5, 50)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, 0.5);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).comm_per_cost, 0);
  // A NaN claim: no computing, all communication.
  EXPECT_TRUE(speeds.Observe(1, Finished(10, 5, std::nan(""))));
  EXPECT_DOUBLE_EQ(speeds.estimate(1).calc_per_cost, 0);
  EXPECT_DOUBLE_EQ(speeds.estimate(1).comm_per_cost, 0.5);
  // An infinite time seen counts as none, and a negative cost as nothing done.
  EXPECT_FALSE(speeds.Observe(2, Finished(-10, std::numeric_limits<double>::infinity(), 1)));
  EXPECT_DOUBLE_EQ(speeds.estimate(2).pending_exe, 0);
  EXPECT_DOUBLE_EQ(speeds.estimate(2).pending_calc, 0);
}

TEST(SpeedEstimatorTest, AnItemLongerThanTheReportsIsMeasuredAcrossThem) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  // A lease's one item of cost 10 runs 49 s; the worker says it is alive
  // every 10 s (no item finished, no computing claimed), then hands the item
  // in 9 s after the last of them, claiming its 48.9 s of computing. The
  // claim is bounded by the 49 s seen since the lease began, not by the
  // last 9: the worker is not taken for 40 s of communication and start.
  for (int heartbeat = 0; heartbeat < 4; ++heartbeat) {
    EXPECT_FALSE(speeds.Observe(0, Finished(0, 10, 0, /*lease_start=*/heartbeat == 0)));
  }
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 9, 48.9)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, 4.89);
  EXPECT_NEAR(speeds.estimate(0).comm_per_cost, 0.01, 1e-12);
  EXPECT_NEAR(speeds.estimate(0).overhead_s, 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).evidence_s, 48.9);
  // Computing already claimed in the window counts against it: 5 s claimed
  // over a 5-s report, then 20 s claimed over the next 5: 5 of it.
  SpeedEstimator twice;
  twice.Reset(EstimatorPriors({1}));
  EXPECT_FALSE(twice.Observe(0, Finished(0, 5, 5)));
  EXPECT_TRUE(twice.Observe(0, Finished(10, 5, 20)));
  EXPECT_DOUBLE_EQ(twice.estimate(0).calc_per_cost, 1);
  EXPECT_DOUBLE_EQ(twice.estimate(0).comm_per_cost, 0);
}

TEST(SpeedEstimatorTest, AnAbsurdReportLeavesTheSpeedFinite) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_TRUE(speeds.Observe(0, Finished(1e-30, 1e6, 1e6)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).calc_per_cost, SpeedEstimator::kMaxSecondsPerCost);
  EXPECT_GT(speeds.Speed(0, std::nullopt), 0);
  EXPECT_TRUE(std::isfinite(speeds.Speed(0, std::nullopt)));
}

TEST(SpeedEstimatorTest, TheFirstLeaseReportMeasuresTheStartOverhead) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 3, 2, /*lease_start=*/true)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).overhead_s, 1);
  // Reports within the lease leave it.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 5, 2)));
  EXPECT_DOUBLE_EQ(speeds.estimate(0).overhead_s, 1);
}

TEST(SpeedEstimatorTest, UnmeasuredPriorsAreScaledByWhatMeasuredWorkersShow) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1, 2}));
  // Worker 0 (prior 1) computes 3 units a second: priors are worth 3 times.
  EXPECT_TRUE(speeds.Observe(0, Finished(3, 1, 1)));
  EXPECT_DOUBLE_EQ(speeds.PriorScale(), 3);
  EXPECT_DOUBLE_EQ(speeds.Speed(1, std::nullopt), 6);
  // The only worker measured sets the scale alone.
  EXPECT_FALSE(speeds.OthersMeasured(0));
  // Worker 1 computes 6 a second: (3 + 6) / (1 + 2).
  EXPECT_TRUE(speeds.Observe(1, Finished(12, 2, 2)));
  EXPECT_DOUBLE_EQ(speeds.PriorScale(), 3);
  EXPECT_TRUE(speeds.OthersMeasured(0));
  EXPECT_TRUE(speeds.OthersMeasured(1));
}

TEST(SpeedEstimatorTest, AWorkerOnItsFirstItemIsNoFasterThanItsSilenceAllows) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({10}));
  // 4 s of computing without finishing an item of cost 1: at most 2 · 1 / 4.
  EXPECT_FALSE(speeds.Observe(0, Finished(0, 4, 4)));
  EXPECT_DOUBLE_EQ(speeds.CensoredSpeed(0, 1.0), 0.5);
  EXPECT_DOUBLE_EQ(speeds.Speed(0, 1.0), 0.5);
  // With no item open, nothing bounds it.
  EXPECT_EQ(speeds.CensoredSpeed(0, std::nullopt), std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 10);
}

TEST(SpeedEstimatorTest, ACrediblePriorIsBlendedWithTheMeasurementByTheEvidence) {
  SpeedEstimator speeds;
  std::vector<WorkerPrior> workers = EstimatorPriors({1, 1});
  workers[1].credibility = 1;
  speeds.Reset(workers);
  EXPECT_TRUE(speeds.AnyCredible());
  // Trust in worker 1's prior: 1 · 0.25 · 100 = 25 cost units.
  speeds.SetPlannedCost(1, 100);
  EXPECT_TRUE(speeds.Observe(0, Finished(20, 10, 10)));        // speed 2, no credibility
  EXPECT_TRUE(speeds.Observe(1, Finished(25, 3.125, 3.125)));  // speed 8 over 25 units
  EXPECT_DOUBLE_EQ(speeds.MeasuredSpeed(1), 8);
  // PriorScale (2 + 8) / 2 = 5; weight 25 / (25 + 25) on the measurement.
  EXPECT_DOUBLE_EQ(speeds.PriorScale(), 5);
  EXPECT_NEAR(speeds.Speed(1, std::nullopt), std::sqrt(8.0 * 5.0), 1e-12);
  // A prior without credibility is not blended.
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 2);
}

TEST(SpeedEstimatorTest, TheLeadRisesAtOnceUpToAHalfAndFallsByHalves) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_TRUE(speeds.Observe(0, Finished(20, 10, 10)));  // speed 2
  speeds.ObserveLead(0, 24, 10);                         // 20 predicted: 0.2 ahead
  EXPECT_NEAR(speeds.estimate(0).lead, 0.2, 1e-12);
  speeds.ObserveLead(0, 100, 10);  // 4 ahead, counted as 0.5
  EXPECT_DOUBLE_EQ(speeds.estimate(0).lead, 0.5);
  speeds.ObserveLead(0, 10, 10);  // behind: no lead, halved toward it
  EXPECT_DOUBLE_EQ(speeds.estimate(0).lead, 0.25);
}

TEST(SpeedEstimatorTest, ALearnedStartCostRestatesTheFiguresInItsUnits) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  speeds.SetPlannedCost(0, 40);
  // 10 items of cost 1 in 4 s: 0.4 s per unit, 2.5 units a second.
  EXPECT_TRUE(speeds.Observe(0, Finished(10, 4, 2)));
  // Each item costs 1 more: the same 4 s did 20 units, 5 a second.
  speeds.RestateCosts(1, 2);
  EXPECT_DOUBLE_EQ(speeds.estimate(0).evidence_cost, 20);
  EXPECT_DOUBLE_EQ(speeds.Speed(0, std::nullopt), 5);
  EXPECT_DOUBLE_EQ(speeds.PriorScale(), 5);
}

TEST(SpeedEstimatorTest, AJoinedWorkerStartsUnmeasuredAtTheScaledPrior) {
  SpeedEstimator speeds;
  speeds.Reset(EstimatorPriors({1}));
  EXPECT_TRUE(speeds.Observe(0, Finished(3, 1, 1)));
  WorkerPrior joined{"joined", 2, 0.5};
  EXPECT_EQ(speeds.Add(joined), 1u);
  EXPECT_EQ(speeds.size(), 2u);
  EXPECT_FALSE(speeds.IsMeasured(1));
  EXPECT_DOUBLE_EQ(speeds.ScaledPrior(1), 6);
  EXPECT_DOUBLE_EQ(speeds.Credibility(1), 0.5);
  EXPECT_TRUE(speeds.AnyCredible());
}

TEST(SpeedEstimatorTest, TowardTrustedGoesHarmonicallyFromUntrustedToTrusted) {
  EXPECT_DOUBLE_EQ(TowardTrusted(10, 3, 0), 10);
  EXPECT_DOUBLE_EQ(TowardTrusted(10, 3, 1), 3);
  EXPECT_DOUBLE_EQ(TowardTrusted(0.1, 0.02, 0.5), 0.1 / 3);
}

}  // namespace
}  // namespace ballast::balance
