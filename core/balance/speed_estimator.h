// SpeedEstimator: the adaptive policy's live estimate of each worker's speed
// (step 2 of adaptive_policy.cc, after Sánchez et al., seed 002).
//
// Per cost unit, the calculation time a worker reports and the communication
// time (the time between its reports as seen by the coordinator, minus the
// calculation); its speed is 1 / (calc + comm), smoothed (a rise in comm is
// taken at once). A worker not measured yet is its prior scaled by what the
// measured workers show (PriorScale). A prior with credibility Z (a history
// prior) is not dropped at the first measurement: while a worker has measured
// cost E of its planned share S, its speed is the geometric blend of the
// measurement and the scaled prior with weight w = E / (E + Z ·
// kPriorShareWorth · S) on the measurement. Z = 0 (a fuzzy weight): w = 1.
//
// The estimator knows workers by id and nothing of leases or items: the
// policy turns a report into a SpeedSample. Every query is O(1): the sums
// behind PriorScale are running sums.
//
// Thread-safety: a value; not thread-safe.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/balance/policy.h"

namespace ballast::balance {

// What has been measured of one worker.
struct SpeedEstimate {
  double calc_per_cost = 0;  // seconds of computing per cost unit
  double comm_per_cost = 0;  // seconds of communication and waiting per cost unit
  double overhead_s = 0;     // fixed cost of starting a lease (round trip, data)
  double evidence_cost = 0;  // cost measured so far (the weight of the measurement)
  double evidence_s = 0;     // computing seconds measured so far
  // Items measured so far (to restate evidence_cost in a new cost model).
  double evidence_items = 0;
  double lead = 0;        // how far it ran ahead of its predictions (ObserveLead)
  bool measured = false;  // a measurement was folded in (see IsMeasured)
  // Measurements not yet folded in (reports that finished no item).
  double pending_calc = 0;
  double pending_exe = 0;
  double pending_cost = 0;
  double pending_items = 0;
  bool pending_lease_start = false;
};

// The computing a report may claim: its claim, bounded by the time seen to
// pass since the reports pending with it began (`seen_s`) less what they
// claimed already (`claimed_s`); a worker hands in an item's computing with
// the item, over every report the item outlasted. A NaN or infinite claim
// is nothing.
inline double BoundedClaim(double claim, double seen_s, double claimed_s) {
  return std::isfinite(claim) ? std::clamp(claim, 0.0, std::max(0.0, seen_s - claimed_s)) : 0.0;
}

// One progress report of a worker that holds a lease, as the policy reads it.
struct SpeedSample {
  double elapsed = 0;        // seconds since its previous report, as seen here
  double calc_seconds = 0;   // computing it claims over them (an item's, with the item)
  double cost = 0;           // cost of the items it finished, less those that failed
  double items = 0;          // ... and their number
  bool lease_start = false;  // its previous contact was the grant of its lease
};

class SpeedEstimator {
 public:
  // Starts over with `workers`' priors: none measured, planned shares 0.
  void Reset(const std::vector<WorkerPrior>& workers);
  // Adds a worker (one that joined mid-job), unmeasured, planned share 0;
  // returns its id, the number of workers before.
  WorkerId Add(const WorkerPrior& prior);
  // The worker's planned share of the job, in cost units: what its prior's
  // credibility is weighed against (MeasuredOrBlended).
  void SetPlannedCost(WorkerId id, double cost);

  // Folds in a report. A worker cannot have computed longer than the time
  // between its reports: its claim is bounded by that (a NaN, negative or
  // infinite one counts as nothing), and a negative cost or count as 0.
  // Returns true when the worker's speed changed (the report, with those
  // pending, finished work); false when the report was kept pending.
  bool Observe(WorkerId id, const SpeedSample& sample);
  // The worker held no lease when it reported: what was pending is dropped
  // (it was idle, not slow).
  void DropPending(WorkerId id);
  // How far the worker ran ahead of its speed: it reached `reached_cost`
  // over `elapsed` seconds. The relative excess, taken at once when it rises
  // and halved a report when it falls, at most kMaxLead. Requires
  // IsMeasured(id); the policy decides which silences are long enough.
  void ObserveLead(WorkerId id, double reached_cost, double elapsed);
  // The cost model moved by `delta` per item, and the job's cost by the
  // factor `job_scale` (new over old): every figure kept in cost units is
  // restated (a worker's seconds per cost unit by what its measured work
  // cost before over what it costs now, as its items each gained `delta`;
  // planned shares by `job_scale`) and the sums are rebuilt, O(P).
  void RestateCosts(double delta, double job_scale);

  // Speed in cost units per second: the measurement (blended with a
  // credible prior), or for an unmeasured worker the scaled prior, no
  // faster than CensoredSpeed allows.
  double Speed(WorkerId id, std::optional<double> open_item_cost) const;
  // What a worker that has computed for t seconds without finishing its
  // first item says of itself: its speed is below kCensoredMargin times the
  // cost of that item (`open_item_cost`) over t. Infinity while it has not
  // computed, once measured, or with no item open (nullopt).
  double CensoredSpeed(WorkerId id, std::optional<double> open_item_cost) const;
  // A measured worker's speed: its measurement, blended with its scaled
  // prior while the prior's credibility outweighs what was measured.
  double MeasuredOrBlended(WorkerId id) const;
  // 1 / PerCost: infinity when nothing was measured.
  double MeasuredSpeed(WorkerId id) const { return 1.0 / PerCost(estimates_[id]); }
  // The worker's prior times PriorScale().
  double ScaledPrior(WorkerId id) const { return PriorOf(id) * PriorScale(); }
  // Measured speed per unit of prior speed over the measured workers (1
  // when none).
  double PriorScale() const {
    return measured_prior_sum_ > 0 ? measured_speed_sum_ / measured_prior_sum_ : 1.0;
  }
  // A measurement with a time per cost unit above 0 was folded in.
  bool IsMeasured(WorkerId id) const {
    const SpeedEstimate& e = estimates_[id];
    return e.measured && PerCost(e) > 0;
  }
  // No worker is measured (the job's length is unknown).
  bool NoneMeasured() const { return measured_prior_sum_ <= 0; }
  // Workers other than `id`, a measured one, are measured too, so that its
  // measurement and its scaled prior can disagree (for the only one measured
  // they agree by construction).
  bool OthersMeasured(WorkerId id) const { return measured_prior_sum_ > PriorOf(id) * (1 + 1e-9); }
  // The prior's speed (at least 1e-9) and credibility Z in [0, 1].
  double PriorOf(WorkerId id) const { return priors_[id].speed; }
  double Credibility(WorkerId id) const { return priors_[id].credibility; }
  // Some worker's prior has credibility above 0.
  bool AnyCredible() const { return any_credible_; }

  const SpeedEstimate& estimate(WorkerId id) const { return estimates_[id]; }
  size_t size() const { return estimates_.size(); }

  // Measured seconds per cost unit, at least kMinSecondsPerCost; 0 when
  // nothing was measured.
  static double PerCost(const SpeedEstimate& e);

  // Bounds of a measured time per cost unit, so that a speed stays within
  // [1e-9, 1e12] cost units per second however absurd the reported times.
  static constexpr double kMinSecondsPerCost = 1e-12;
  static constexpr double kMaxSecondsPerCost = 1e9;

 private:
  struct Prior {
    double speed = 1;        // max(WorkerPrior::speed, 1e-9)
    double credibility = 0;  // WorkerPrior::credibility clamped into [0, 1]
  };
  static Prior PriorFrom(const WorkerPrior& worker);
  // Takes the worker's measurement out of, or puts it back in, the sums
  // behind PriorScale (a worker with a positive time per cost unit only).
  void Uncount(WorkerId id);
  void Count(WorkerId id);

  std::vector<SpeedEstimate> estimates_;
  std::vector<Prior> priors_;
  std::vector<double> planned_cost_;  // each worker's planned share, in cost units
  double measured_speed_sum_ = 0;     // Σ speed over measured workers
  double measured_prior_sum_ = 0;     // Σ prior over the same workers
  bool any_credible_ = false;
};

// A setting that is `untrusted` for a prior of credibility 0 and `trusted`
// at 1, harmonically between: untrusted / (1 + (untrusted / trusted - 1) z).
inline double TowardTrusted(double untrusted, double trusted, double z) {
  return untrusted / (1 + (untrusted / trusted - 1) * z);
}

}  // namespace ballast::balance
