// ReportCadence: how often a worker of the adaptive policy reports progress
// (step 2 of adaptive_policy.cc): often enough that its speed is learned and
// a steal or a rebalancing comes in time, seldom enough that the
// coordinator's report budget holds and a job of any length costs a bounded
// number of reports.
//
// A measured worker reports kReportsPerLease times over its lease's
// predicted length, fewer (down to kTrustedReportsPerLease) as its prior is
// credible while it agrees with what the worker measures; never more often
// than the floor (Floor), never less often than the ceiling (Ceiling) and
// kEvidenceHorizon times the computing its speed was measured on. An
// unmeasured worker backs off from the floor, doubling (First). The policy
// gathers the figures (times in seconds, from its predictions); this class
// only combines them.
//
// Thread-safety: immutable after construction; pure functions.
#pragma once

#include <cstddef>
#include <optional>

#include "core/balance/speed_estimator.h"

namespace ballast::balance {

class ReportCadence {
 public:
  // `min_report_seconds`: the shortest cadence any worker is given
  // (AdaptiveOptions::min_report_seconds).
  explicit ReportCadence(double min_report_seconds) : min_report_seconds_(min_report_seconds) {}

  // The shortest cadence: all `workers` together stay within the
  // coordinator's report budget, unless the predicted rest of the job
  // (`common_rest_s`, when known: nullopt before any worker is measured)
  // is too short to give each worker kReportsPerJob reports within it.
  // Never below min_report_seconds; that alone while the rest is unknown.
  double Floor(size_t workers, std::optional<double> common_rest_s) const;

  // The longest cadence of a measured worker: kMaxReportSeconds, or a
  // kMaxReportsPerJob-th of the predicted rest of the job when that is
  // longer (kMaxReportSeconds when the rest is infinite). Over a job that
  // lasts T > kMaxReportsPerJob · kMaxReportSeconds a worker then reports
  // about kMaxReportsPerJob · (1 + ln(T / (kMaxReportsPerJob ·
  // kMaxReportSeconds))) times, however long T is.
  static double Ceiling(double common_rest_s);

  // The cadence of a worker not measured yet (no item finished): its last
  // cadence doubled, at least `floor` (kCredibleFirstReport floors for a
  // prior of credibility 1) and at most kMaxReportSeconds, or as long as it
  // has computed (`computed_s`) when that is longer: an item of any length
  // then costs a number of reports logarithmic in its time.
  static double First(double floor, double credibility, double computed_s, double last_s);

  // The cadence of a measured worker: `lease_s` (its lease's predicted
  // length) over ReportsPerLease, at most the ceiling (Ceiling of the job's
  // predicted rest, or a kMaxReportsPerJob-th of the worker's own
  // predicted rest `own_rest_s` when longer) and kEvidenceHorizon times the
  // computing its speed was measured on (`evidence_s`); at least `floor`,
  // which wins over the ceiling.
  static double Measured(double floor, double lease_s, double reports_per_lease,
                         double common_rest_s, double own_rest_s, double evidence_s);

  // Progress reports over a measured worker's lease: kReportsPerLease,
  // fewer as its prior is credible while its measurement agrees with the
  // scaled prior (within kPriorAgreement either way); a worker that strays
  // from its prior, or the only one measured, reports at the full rate.
  static double ReportsPerLease(const SpeedEstimator& speeds, WorkerId worker);

  double min_report_seconds() const { return min_report_seconds_; }

 private:
  double min_report_seconds_;
};

}  // namespace ballast::balance
