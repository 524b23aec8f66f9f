// Tests of ReportCadence (core/balance/report_cadence.h): the floor (the
// report budget, the job's rest, min_report_seconds), the ceiling (a minute,
// or a thousandth of the rest), the backing off of an unmeasured worker, the
// measured cadence between them, and the reports per lease a credible prior
// that agrees with its measurement saves.
#include "core/balance/report_cadence.h"

#include <gtest/gtest.h>

#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace ballast::balance {
namespace {

constexpr double kInfiniteRest = std::numeric_limits<double>::infinity();

TEST(ReportCadenceTest, TheFloorKeepsTheReportBudgetUnlessTheJobIsNearlyDone) {
  const ReportCadence cadence(0.05);
  // The job's length unknown: the shortest cadence.
  EXPECT_DOUBLE_EQ(cadence.Floor(1000, std::nullopt), 0.05);
  // 1000 workers share 2000 reports a second: each at most two a second.
  EXPECT_DOUBLE_EQ(cadence.Floor(1000, 100), 0.5);
  // ... unless that leaves a worker fewer than 10 reports over the rest.
  EXPECT_DOUBLE_EQ(cadence.Floor(1000, 2), 0.2);
  // Never below min_report_seconds.
  EXPECT_DOUBLE_EQ(cadence.Floor(4, 100), 0.05);
  EXPECT_DOUBLE_EQ(cadence.Floor(1000, 0), 0.05);
}

TEST(ReportCadenceTest, TheCeilingIsAMinuteOrAThousandthOfTheRest) {
  EXPECT_DOUBLE_EQ(ReportCadence::Ceiling(kInfiniteRest), 60);
  EXPECT_DOUBLE_EQ(ReportCadence::Ceiling(1000), 60);
  EXPECT_DOUBLE_EQ(ReportCadence::Ceiling(60000), 60);
  EXPECT_DOUBLE_EQ(ReportCadence::Ceiling(1e6), 1000);
}

TEST(ReportCadenceTest, AnUnmeasuredWorkerBacksOffFromTheFloorDoubling) {
  // The first report at the floor, then each twice the last, up to a minute.
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0, 0, 0), 0.05);
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0, 0, 0.05), 0.1);
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0, 0, 40), 60);
  // A fully credible prior's first report comes 8 floors later.
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 1, 0, 0), 0.4);
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0.5, 0, 0), 0.225);
  // A worker that has computed 300 s without finishing an item backs off up
  // to as long as it has computed.
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0, 300, 200), 300);
  EXPECT_DOUBLE_EQ(ReportCadence::First(0.05, 0, 300, 100), 200);
}

TEST(ReportCadenceTest, AMeasuredWorkerReportsOverItsLeaseWithinTheBounds) {
  // A lease of 100 s over 10 reports; the ceiling a minute; the evidence
  // allows 8 · 2 s.
  EXPECT_DOUBLE_EQ(ReportCadence::Measured(0.05, 100, 10, 1000, 500, 2), 10);
  // A speed measured over 0.5 s of computing is relied on for 4 s.
  EXPECT_DOUBLE_EQ(ReportCadence::Measured(0.05, 100, 10, 1000, 500, 0.5), 4);
  // A long lease: the ceiling of a minute ...
  EXPECT_DOUBLE_EQ(ReportCadence::Measured(0.05, 10000, 10, 1000, 500, 100), 60);
  // ... or a thousandth of the worker's own rest (an item of days).
  EXPECT_DOUBLE_EQ(ReportCadence::Measured(0.05, 1e7, 10, 1000, 1e6, 1e5), 1000);
  // The floor wins over the ceiling.
  EXPECT_DOUBLE_EQ(ReportCadence::Measured(100, 100, 10, 1000, 500, 2), 100);
}

// Two workers of prior 1 and credibility `z`, worker 0 computing 1 unit a
// second and worker 1 `speed` (its prior scaled by (1 + speed) / 2).
SpeedEstimator TwoMeasured(double z, double speed) {
  SpeedEstimator speeds;
  speeds.Reset({{"a", 1, z}, {"b", 1, z}});
  (void)speeds.Observe(0, SpeedSample{10, 10, 10, 10, false});
  (void)speeds.Observe(1, SpeedSample{10, 10, 10 * speed, 10 * speed, false});
  return speeds;
}

TEST(ReportCadenceTest, ACrediblePriorThatAgreesSavesReports) {
  // No credibility: 10 reports a lease.
  EXPECT_DOUBLE_EQ(ReportCadence::ReportsPerLease(TwoMeasured(0, 1), 0), 10);
  // Full credibility, both at their scaled prior: 3.
  EXPECT_DOUBLE_EQ(ReportCadence::ReportsPerLease(TwoMeasured(1, 1), 0), 3);
  // Half: harmonically between, 10 / (1 + (10 / 3 - 1) / 2).
  EXPECT_NEAR(ReportCadence::ReportsPerLease(TwoMeasured(0.5, 1), 0), 30.0 / 6.5, 1e-12);
  // Worker 1 at 2 against a scaled prior of 1.5 strays beyond 1.25: 10.
  EXPECT_DOUBLE_EQ(ReportCadence::ReportsPerLease(TwoMeasured(1, 2), 1), 10);
  // ... 1.2 against 1.1 agrees.
  EXPECT_DOUBLE_EQ(ReportCadence::ReportsPerLease(TwoMeasured(1, 1.2), 1), 3);
}

TEST(ReportCadenceTest, TheOnlyWorkerMeasuredReportsAtTheFullRate) {
  SpeedEstimator speeds;
  speeds.Reset({{"a", 1, 1}, {"b", 1, 1}});
  (void)speeds.Observe(0, SpeedSample{10, 10, 10, 10, false});
  EXPECT_DOUBLE_EQ(ReportCadence::ReportsPerLease(speeds, 0), 10);
}

}  // namespace
}  // namespace ballast::balance
