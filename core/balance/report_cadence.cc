#include "core/balance/report_cadence.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {
namespace {

// Progress reports over a lease's predicted length.
constexpr double kReportsPerLease = 10;
// ... for a worker whose prior is fully credible and agrees with what it
// measures (within kPriorAgreement either way): there is less to learn.
constexpr double kTrustedReportsPerLease = 3;
constexpr double kPriorAgreement = 1.25;
// The longest cadence of a measured worker (Ceiling) ...
constexpr double kMaxReportSeconds = 60;
// ... unless the predicted rest of the job would give each worker more than
// this many reports at it (a job of more than 1000 minutes): the cadence is
// then that share of the rest, so that a job of any length costs its workers
// a bounded number of reports (the simulator simulates each of them).
constexpr double kMaxReportsPerJob = 1000;
// The first report of a worker whose prior is fully credible, in report
// floors (First): its first measurement then covers more than the start-up
// steps, and the job is spared a report per worker.
constexpr double kCredibleFirstReport = 8;
// A speed measured over t seconds of computing is not relied on for more than
// kEvidenceHorizon * t before the worker reports again: the first report
// covers a report floor of start-up (the first steps of one item, a CPU
// quota's period half spent), and the next comes soon enough to correct it.
constexpr double kEvidenceHorizon = 8;
// Progress reports per second, all workers together ...
constexpr double kReportBudget = 2000;
// ... unless the job is too short for it: every worker may still report this
// many times over the predicted rest of the job.
constexpr double kReportsPerJob = 10;

}  // namespace

double ReportCadence::Floor(size_t workers, std::optional<double> common_rest_s) const {
  if (!common_rest_s) return min_report_seconds_;
  const double budget = static_cast<double>(workers) / kReportBudget;
  return std::max(min_report_seconds_, std::min(budget, *common_rest_s / kReportsPerJob));
}

double ReportCadence::Ceiling(double common_rest_s) {
  if (!std::isfinite(common_rest_s)) return kMaxReportSeconds;
  return std::max(kMaxReportSeconds, common_rest_s / kMaxReportsPerJob);
}

double ReportCadence::First(double floor, double credibility, double computed_s, double last_s) {
  const double first = floor * (1 + (kCredibleFirstReport - 1) * credibility);
  const double longest = std::max(kMaxReportSeconds, computed_s);
  return std::max(first, std::min(longest, 2 * last_s));
}

double ReportCadence::Measured(double floor, double lease_s, double reports_per_lease,
                               double common_rest_s, double own_rest_s, double evidence_s) {
  const double planned = lease_s / reports_per_lease;
  // The ceiling also grows with the worker's own predicted rest: work that
  // alone outlasts the job's common rest (one item of days, which no other
  // worker can share) costs at most kMaxReportsPerJob reports too.
  const double ceiling = std::max(Ceiling(common_rest_s), own_rest_s / kMaxReportsPerJob);
  const double longest = std::min(kEvidenceHorizon * evidence_s, ceiling);
  // The floor wins over the ceiling (a minReportSeconds above it), here as
  // before the worker is measured.
  return std::max(floor, std::min(planned, longest));
}

double ReportCadence::ReportsPerLease(const SpeedEstimator& speeds, WorkerId worker) {
  const double z = speeds.Credibility(worker);
  if (!(z > 0)) return kReportsPerLease;
  // Agreement says something only when other workers' measurements set the
  // scale too: for the only worker measured so far, its measurement and its
  // scaled prior agree by construction.
  if (!speeds.OthersMeasured(worker)) return kReportsPerLease;
  const double strayed = speeds.MeasuredSpeed(worker) / speeds.ScaledPrior(worker);
  if (!(std::fabs(std::log(strayed)) <= std::log(kPriorAgreement))) return kReportsPerLease;
  return TowardTrusted(kReportsPerLease, kTrustedReportsPerLease, z);
}

}  // namespace ballast::balance
