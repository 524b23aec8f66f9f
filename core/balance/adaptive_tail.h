// AdaptiveTail: what the adaptive policy (adaptive_policy.cc, steps 4 and 5)
// gives a worker from outside its planned share, and the tail's moves.
//
// A worker's leases from outside its share grow by slow start where the
// job's inputs cross links (SlowStartCap). In the tail, an idle worker
// with nothing in the pool takes (FromTail), in this order: the far end of
// a victim's lease sized so both finish together, a backup copy of the last
// worker's unfinished rest, or the victim's last item whole. When none is
// worth taking, WaitNotes says why, victim by victim: the answer to "why was
// this idle worker told to wait?" on a run's decisions log.
//
// Thread-safety: none; the policy's driver serialises every call.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/adaptive_forecast.h"
#include "core/balance/policy_options.h"

namespace ballast::balance {

class AdaptiveTail : public AdaptiveForecast {
 public:
  std::vector<WaitNote> WaitNotes() const override { return wait_notes_; }

 protected:
  explicit AdaptiveTail(const AdaptiveOptions& options);

  // Sizes the per-worker state for job()'s workers (from Plan), and for one
  // more that joined mid-job.
  void StartTail();
  void JoinTail();

  // An idle worker's move in the tail: a sized steal, a backup, the last
  // item whole; nullopt when none is worth it, with WaitNotes saying why.
  std::optional<Reply> FromTail(WorkerId thief, double now);
  // Forgets the notes of an earlier wait (at every Assign) ...
  void ClearWaitNotes() { wait_notes_.clear(); }
  // ... and notes why `victim` (nullopt: the job as a whole) gave an idle
  // worker nothing.
  void Note(std::optional<WorkerId> victim, std::string why);

  // Items from outside a worker's planned share may cost it more than its
  // own did (their inputs may have to cross its link, which no measurement
  // so far shows): its first such lease is a probe of kProbeReports report
  // intervals, and each next one at most twice the last (slow start). A job
  // whose items carry no inputs across links (JobInfo::inputs_cross_links)
  // has nothing to probe: its leases are sized as predicted at once.
  double SlowStartCap(WorkerId worker, double now) const;
  // Leases `range` with a cadence for it, and predicts the worker's end.
  Reply GrantTimed(WorkerId worker, Range range, double now);
  // ... for a lease from outside the worker's planned share.
  Reply GrantUnplanned(WorkerId worker, Range range, double now);

  // The worker's lease has a backup copy, or is one: its items are held by
  // two workers, and none of them may be cut for a third or go to the pool.
  bool Doubled(WorkerId id) const { return backed_up_[id] || copy_[id]; }

  // A backup's victim and thief hold the copied items both: when one lets
  // its lease go (lost, stopped, idle), what the other still holds of them
  // stays with the other instead of going back to the pool, where a third
  // worker would be leased items that are held already.
  Range SharedLease(WorkerId id) const override;

  // The far end of `range` worth at most `amount`, and at least one item.
  Range FarEnd(Range range, double amount) const;

  const AdaptiveOptions& options() const { return options_; }
  // Cost of each worker's last lease from outside its planned share (0:
  // none), what its next one may double (SlowStartCap).
  std::vector<double>& unplanned_cost() { return unplanned_cost_; }

 private:
  // How much of a victim's far end a steal may take: what makes both finish
  // together, or, when that is worth less than the last item (which cannot
  // be split), that item whole if the thief still finishes it before the
  // victim would have. The whole item is the last resort, after a backup:
  // a much faster thief's copy of the victim's last items may end the job
  // sooner still, and covers a victim that is paused.
  enum class Far { kSized, kWholeItem };

  std::optional<Reply> Steal(WorkerId thief, double now, Far far);
  std::optional<Reply> StealFrom(WorkerId thief, WorkerId victim, double latest, double now,
                                 Far far);
  std::optional<Reply> Backup(WorkerId thief, double now);
  std::optional<Reply> StealReserved(WorkerId thief, WorkerId victim, double latest, double now);
  std::optional<Reply> StealAt(WorkerId thief, WorkerId victim, double latest, double learns,
                               double now, Far far);
  // The first item of the victim's unfinished lease it cannot have begun by
  // `learns`, when it learns of a cut (StealAt), and none inside its run
  // under way (StopFloor).
  uint64_t PastReach(WorkerId thief, WorkerId victim, double learns) const;
  // Hysteresis: a steal must move the victim's finish (`latest`) earlier by
  // more than the thief's overhead of starting a lease.
  bool WorthStealing(WorkerId thief, Range stolen, double latest, double now) const;
  // When the thief would finish `stolen`: now, its overhead, the work.
  double ThiefFinish(WorkerId thief, Range stolen, double now) const;
  Reply GrantStolen(WorkerId thief, Range stolen, double now);

  // ... when the thief's taking `stolen` is not worth it: when each would finish.
  void NoteNotWorth(WorkerId thief, WorkerId victim, std::string_view what, Range stolen,
                    double latest, double now);

  const AdaptiveOptions options_;
  std::vector<bool> backed_up_;  // its lease has a backup copy (Backup)
  std::vector<bool> copy_;       // its lease is such a copy
  // The other worker of its latest backup (victim or thief), if any.
  std::vector<std::optional<WorkerId>> partner_;
  std::vector<double> unplanned_cost_;
  std::vector<WaitNote> wait_notes_;
};

}  // namespace ballast::balance
