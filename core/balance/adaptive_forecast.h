// AdaptiveForecast: what the adaptive policy predicts, over PolicyBase's
// bookkeeping — each worker's speed (SpeedEstimator, fed from the reports),
// its predicted finish (FinishTimes), the job's total speed and load and its
// predicted common end, and each worker's report cadence (ReportCadence).
// The decisions (adaptive_policy.cc: the split, steals, backups,
// rebalancing, prefetch) sit on top of it and read these.
//
// Every prediction costs O(log P): total load and total speed are running
// sums, and predicted finish times sit in a FinishTimes treap. Whatever
// changes a worker's lease, position, liveness or estimate must be followed
// by Track (or Predict, after a Cut or Grant), so that they stay current.
//
// Thread-safety: not thread-safe (see Policy).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/balance/finish_times.h"
#include "core/balance/policy_base.h"
#include "core/balance/report_cadence.h"
#include "core/balance/speed_estimator.h"

namespace ballast::balance {

class AdaptiveForecast : public PolicyBase {
 protected:
  // `min_report_seconds`: the shortest report cadence (ReportCadence).
  explicit AdaptiveForecast(double min_report_seconds) : cadence_(min_report_seconds) {}

  // Feeds the report to the estimator; a worker whose speed moved is
  // tracked, and with credible priors every measured worker whose blend
  // the new scale moved.
  void Observe(const Report& report, double elapsed) override;
  void AfterLost(WorkerId worker, double now) override { Track(worker, now); }
  // A start cost was learned (or moved): the estimates are restated in the
  // new cost units (SpeedEstimator::RestateCosts), then every sum and
  // prediction is rebuilt, O(P log P).
  void AfterCostChanged(double old_start_cost, double now) override;
  // A worker joined: it counts in the total speed at once, so that the
  // others' fair shares shrink. Its planned share, which weighs a credible
  // prior against its first measurements, is what it would hold of the work
  // left now by its prior.
  void AfterJoined(WorkerId worker, double now) override;

  // Starts the forecast over for job()'s workers: none measured, none
  // predicted; each one's planned share is then set by the caller (Plan).
  void StartForecast();
  // The job's cost now over its cost under `old_start_cost` (1 when that
  // was not above 0).
  double JobCostScale(double old_start_cost) const;

  // Speed in cost units per second, measured or scaled from the prior; an
  // unmeasured worker's prior no faster than its silence allows
  // (SpeedEstimator::CensoredSpeed).
  double Speed(WorkerId id) const;
  // Brings the running aggregates up to date with what the base class now
  // holds for `id` (its lease, position, liveness and estimate).
  void Track(WorkerId id, double now) {
    Recount(id);
    Predict(id, now);
  }
  // The worker's predicted finish: the end of its lease and of what is set
  // aside for it after the lease; for an idle worker, when it last asked. A
  // live worker that has not asked yet (it holds its reserved share) and a
  // lost one have none.
  void Predict(WorkerId id, double now);
  // Σ speed over the live workers, O(1).
  double TotalSpeed() const { return alive_speed_sum_ + speeds_.PriorScale() * alive_prior_sum_; }
  // Cost left in the job: the pool, the reserved shares and what the live
  // workers have left of their leases (corrected for staleness), O(log P).
  // Work set aside for a busy worker is in its prediction, not counted twice.
  double TotalLoad(double now) const {
    return pool_cost() + std::max(0.0, reserved_cost() - predicted_reserve_sum_) +
           finish_.RemainingCost(now);
  }
  // Predicted time from now until all work is done if everyone finishes
  // together (kNever with no speed).
  double CommonRemainingTime(double now) const {
    const double speed = TotalSpeed();
    return speed > 0 ? TotalLoad(now) / speed : kNever;
  }
  // Remaining cost of the worker's lease now, as its prediction has it
  // (LeftAtContact, less the time since its last report), and of the work
  // set aside for it after the lease.
  double Remaining(WorkerId id, double now) const;
  // Seconds of its lease the worker had left at its last report, at `speed`.
  // A run of several items under way (StopFloor: one command, which reports
  // nothing until it ends) is counted from when the worker began it, not
  // from its last heartbeat: on real nodes a Pi 4B 30 s into a 34-s run was
  // predicted to need 34 s more, and an idle board spent 18 s on a backup
  // copy of the run that lost. A run past its predicted length gives no sign
  // of its end, and is given that length anew from the last report. A single
  // item keeps its whole cost from the last report: a hedge for items whose
  // true cost is several times what was declared (counting them from their
  // start too took the simulator's recompress-repeat, archives whose CPU is
  // up to 5 times their size, from 0.982 to 0.959 of the limit in its worst
  // run with history).
  double LeftAtContact(WorkerId id, double speed) const;
  bool Alive(WorkerId id) const { return !state(id).lost && !state(id).done; }

  // The shortest report cadence now (ReportCadence::Floor).
  double ReportFloor(double now) const;
  // Seconds between progress reports for `remaining` cost of the worker's
  // (ReportCadence::First before it is measured, Measured after).
  double Cadence(WorkerId worker, double remaining, double now) const;

  SpeedEstimator& speeds() { return speeds_; }
  const SpeedEstimator& speeds() const { return speeds_; }
  const FinishTimes& finish_times() const { return finish_; }
  // Alive and holding unfinished items; how many are.
  bool Busy(WorkerId id) const { return busy_[id]; }
  int64_t busy_count() const { return busy_count_; }

 private:
  // Measures how far a measured worker ran ahead of its predictions
  // (SpeedEstimator::ObserveLead), over a silence of kLeadWindowFloors
  // report floors or more (shorter ones measure step boundaries more than
  // speed); steals leave the victim that much more (StealAt).
  void ObserveLead(const Report& report, double elapsed);
  // The scale of the priors moved with this measurement, and with it the
  // speed of every other measured worker whose prior still counts: their
  // sums and predictions are brought up to date (O(P log P), only in a job
  // with credible priors).
  void RefreshBlended(WorkerId measured, double now);
  // Keeps the worker's speed (measured) or prior (unmeasured) in the sums
  // behind TotalSpeed() while it is alive.
  void Recount(WorkerId id);
  // Recomputes the sums of Recount from scratch (running sums drift by rounding).
  void ResyncSpeedSums();
  // The cost of the first item the worker has not finished; nullopt when none.
  std::optional<double> OpenItemCost(WorkerId id) const;

  struct Counted {
    bool in = false;  // alive, and counted in one of the sums below
    bool measured = false;
    double value = 0;  // the measured speed, or the prior when unmeasured
  };

  SpeedEstimator speeds_;
  ReportCadence cadence_;
  FinishTimes finish_;                     // predicted finish of every live worker's lease
  std::vector<bool> busy_;                 // alive and holding unfinished items
  int64_t busy_count_ = 0;                 // how many are
  std::vector<double> predicted_reserve_;  // set-aside cost in each prediction
  double predicted_reserve_sum_ = 0;       // Σ predicted_reserve_
  std::vector<Counted> counted_;           // what Recount last added for each worker
  double alive_speed_sum_ = 0;             // Σ measured speed over live measured workers
  double alive_prior_sum_ = 0;             // Σ prior over live unmeasured workers
  uint64_t recounts_ = 0;                  // since the last ResyncSpeedSums
};

}  // namespace ballast::balance
