// PolicyBase: the bookkeeping every policy shares — the pool of unassigned
// items, each worker's lease and reported position, the exactly-once ledger of
// finished items — so that a concrete policy only decides.
//
// A concrete policy implements Assign (what an idle worker gets) and may
// override AfterProgress (to shrink a computing worker's lease). Items move
// between four places only: reserved (a worker's planned share, or ranges set
// aside for it to prefetch; not yet leased), the pool, a lease, and done.
// Every move goes through this class: the leases are its own, the other
// three places its ItemLedger's (item_ledger.h); the planned shares are cut
// by PlanShares (reserved_shares.h).
//
// Thread-safety: not thread-safe (see Policy).
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/balance/item_ledger.h"
#include "core/balance/learned_cost.h"
#include "core/balance/policy.h"

namespace ballast::balance {

// What the coordinator knows of one worker.
struct WorkerState {
  Range lease;               // current lease; empty when none
  uint64_t position = 0;     // first unfinished item of the lease, as last reported
  uint64_t running_end = 0;  // the end of its run under way, as last reported (Report)
  double last_contact = 0;   // when its last report arrived
  double lease_granted = 0;  // when its current lease was granted
  // When it reached `position` (its lease granted, or a report that moved
  // it): it has computed the item or run there since, heartbeats or not.
  double position_since = 0;
  double report_every_s = 0;    // the cadence it was given
  bool waiting = false;         // told to wait for a signal
  bool lost = false;            // declared lost and not heard from since
  bool done = false;            // told the job is done
  std::vector<Range> prefetch;  // set aside since its last reply (Reply::prefetch)
  double unsampled_s = 0;       // computing reported since its last cost sample
  double unsampled_seen_s = 0;  // the time seen to pass meanwhile
};

class PolicyBase : public Policy {
 public:
  Status Start(const JobInfo& job, double now) final;
  Reply OnReport(const Report& report) final;
  void OnWorkerLost(WorkerId worker, double now) final;
  StatusOr<WorkerId> OnWorkerJoined(const WorkerPrior& prior, double now) final;
  bool Finished() const final { return items_.done().size() == job_.items; }
  const PolicyStats& stats() const final { return stats_; }
  std::vector<WorkerId> TakeSignals() final;
  Range LeaseOf(WorkerId worker) const final { return workers_.at(worker).lease; }

 protected:
  // Sets up the policy's own state; reserved shares may be planned here.
  virtual void Plan(double now) = 0;
  // The worker has no lease: return a kLease (use Grant), kWait or kDone.
  virtual Reply Assign(WorkerId worker, double now) = 0;
  // A computing worker reported progress; the policy may Cut its lease. It
  // may also return a reply of its own, sent instead of kContinue: kWait or
  // kDone stop the worker at the reported position (the rest of its lease goes
  // back to the pool); kLease (from Grant) replaces its lease.
  virtual std::optional<Reply> AfterProgress(WorkerId /*worker*/, double /*now*/) {
    return std::nullopt;
  }
  // Called at the end of OnWorkerLost.
  virtual void AfterLost(WorkerId /*worker*/, double /*now*/) {}
  // Called at the end of OnWorkerJoined: `worker` is the newest of
  // worker_count(), its prior job().workers[worker], and it holds nothing
  // (no lease, no reserve) until it asks.
  virtual void AfterJoined(WorkerId /*worker*/, double /*now*/) {}
  // The part of `worker`'s lease that another live worker holds too (the
  // adaptive policy's backup copies), which must not go back to the pool
  // when `worker` lets its lease go; empty for none.
  virtual Range SharedLease(WorkerId /*worker*/) const { return {}; }
  // Called after a report's completions are recorded, before deciding.
  virtual void Observe(const Report& /*report*/, double /*elapsed*/) {}
  // The cost model changed (a start cost was learned, or changed by more
  // than a tenth): cost() now has it, pool_cost(), reserved_cost() and every
  // worker's reserved_cost are in its units; what the policy keeps in cost
  // units must follow. `old_start_cost` is the one before.
  virtual void AfterCostChanged(double /*old_start_cost*/, double /*now*/) {}

  // Learn a start cost per item from the reports (learned_cost.h) when the
  // job declares costs: a shape other than uniform, or one cost per item.
  // Set before Start (a policy's constructor); off by default.
  void LearnStartCost(bool on) { learn_costs_ = on; }

  // Grants `range` (already out of the pool and reserve) as the worker's lease.
  Reply Grant(WorkerId worker, Range range, double now, double report_every_s);
  // Sets the progress-report cadence the worker gets with its next reply.
  void SetCadence(WorkerId worker, double report_every_s) {
    workers_[worker].report_every_s = report_every_s;
  }
  // Shrinks the worker's lease to end at `new_end`, never inside the run it
  // has under way (StopFloor), and returns the cut part (its unfinished
  // items); the caller gives it to someone or to the pool.
  Range Cut(WorkerId worker, uint64_t new_end);
  // The nearest end a cut of the worker's lease may have: its position, or
  // the end of the run of several items it has begun (Report::running_end),
  // whose result is that run's whole and would be dropped by a cut inside it.
  uint64_t StopFloor(WorkerId worker) const;
  // Takes the worker's next reserved range (empty when none is left).
  Range TakeReserved(WorkerId worker) { return items_.TakeReserved(worker); }
  // Sets `range` (already out of the pool) aside for the worker after its
  // lease; its next reply names it for prefetch.
  void SetAside(WorkerId worker, Range range);
  // Takes `range` (a part of the worker's reserved items) back from it, to
  // lease to another worker.
  void Unreserve(WorkerId worker, Range range) { items_.Unreserve(worker, range); }
  // Takes up to `count` items from the front of the pool (one contiguous range).
  Range TakeFromPool(uint64_t count) { return items_.TakeFromPool(count); }
  // Takes items from the front of the pool worth at most `cost` (at least one item).
  Range TakeCostFromPool(double cost) { return items_.TakeCostFromPool(cost); }
  // ... from the pool's range that holds `from`, beginning there.
  Range TakeCostFromPoolAt(uint64_t from, double cost) {
    return items_.TakeCostFromPoolAt(from, cost);
  }
  // Returns unfinished items of `range` to the pool and, when `wake`, signals
  // waiting workers that there is work again. True when any item went back.
  bool ReturnToPool(Range range, bool wake = true);
  // ReturnToPool of `range`, part of `worker`'s lease, but for what
  // SharedLease(worker) says another worker still holds.
  bool ReleaseToPool(WorkerId worker, Range range, bool wake = true);
  // Asks every waiting worker to ask again.
  void WakeWaiting();
  // Some worker was told to wait since the last WakeWaiting (it may have
  // asked again since).
  bool AnyTold() const { return !waiting_list_.empty(); }
  // Asks one worker to contact the coordinator now.
  void Signal(WorkerId worker) { signals_.push_back(worker); }
  // Plans each worker's reserved share in proportion to `shares` (by cost),
  // as PlanShares cuts the pool (reserved_shares.h).
  void ReserveProportional(const std::vector<double>& shares);
  // `range` without the finished items at its front; its first and last
  // stretch that holds no finished item (ItemLedger).
  Range SkipFinished(Range range) const { return items_.SkipFinished(range); }
  Range FirstOpenPart(Range range) const { return items_.FirstOpenPart(range); }
  Range LastOpenPart(Range range) const { return items_.LastOpenPart(range); }
  // The unfinished part of the worker's lease as last reported.
  Range Unfinished(WorkerId worker) const;

  static Reply Wait() { return Reply{Reply::Kind::kWait, {}, 0, {}}; }
  static Reply DoneReply() { return Reply{Reply::Kind::kDone, {}, 0, {}}; }

  const JobInfo& job() const { return job_; }
  // The cost model decisions are made by: the declared one, plus the start
  // cost learned so far (0 when none).
  const CostModel& cost() const { return items_.cost(); }
  // The job's declared costs alone (JobCostModel).
  const CostModel& declared_cost() const { return declared_; }
  // The latest fit of the start cost (all zero when not learning).
  const StartCostFit& start_cost_fit() const { return learner_.fit(); }
  size_t worker_count() const { return workers_.size(); }
  const WorkerState& state(WorkerId worker) const { return workers_[worker]; }
  const IntervalSet& pool() const { return items_.pool(); }
  const IntervalSet& done() const { return items_.done(); }
  // The worker's planned share or set-aside ranges, not yet leased, and
  // their declared cost.
  const IntervalSet& reserved(WorkerId worker) const { return items_.reserved(worker); }
  double reserved_cost(WorkerId worker) const { return items_.reserved_cost(worker); }
  // Declared cost of the pool, and of every worker's reserved share together;
  // kept as running sums, so O(1).
  double pool_cost() const { return items_.pool_cost(); }
  double reserved_cost() const { return items_.reserved_cost(); }
  PolicyStats& mutable_stats() { return stats_; }

 private:
  JobInfo job_;
  CostModel declared_;
  bool learn_costs_ = false;  // as the policy asked (LearnStartCost)
  bool learning_ = false;     // ... and the job declares costs
  StartCostLearner learner_;
  std::vector<WorkerState> workers_;
  ItemLedger items_;  // the pool, the reserves, the finished items
  PolicyStats stats_;
  std::vector<WorkerId> signals_;
  std::vector<WorkerId> waiting_list_;  // told to wait since the last WakeWaiting

  // Sets the worker waiting, and lists it for WakeWaiting.
  void MarkWaiting(WorkerId id);
  // Decides the reply to a report (OnReport adds the prefetch news), in
  // three steps: Absorb, then ContinueLease or Reassign.
  Reply Decide(const Report& report);
  // Takes in what the report says: its finished items, its cost sample and
  // speed, the moment of contact (the worker no longer waits).
  void Absorb(const Report& report);
  // The reply to a worker that computes within its lease and has not reached
  // its end: go on, or what AfterProgress decides (its lease's rest given back
  // when told to wait or stop); nullopt once it is at its lease's end.
  std::optional<Reply> ContinueLease(const Report& report);
  // The reply to a worker that asks for work: what it holds goes back to the
  // pool, then Assign.
  Reply Reassign(const Report& report);
  // Records the report's finished items as a cost sample and, when the fit
  // moved far enough, switches the cost model to its start cost.
  void Learn(const Report& report, double elapsed);
  // Makes the cost model the declared one plus `start_cost` per item and
  // brings every sum kept in cost units to it.
  void SetStartCost(double start_cost, double now);
};

}  // namespace ballast::balance
