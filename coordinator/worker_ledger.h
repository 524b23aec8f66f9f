// WorkerLedger: what the coordinator knows of each worker of one job — its
// counters and contacts (WorkerView), its busy stretches, every range leased
// to it and the lease it was last told of, its cores — by name and by the id
// the policy knows it as, in join order.
//
// It also keeps the bounds a worker's numbers about itself are cut to
// (BoundedSeconds; JobSession's class comment states them) and the samples
// of its speed and of the nodes it shares. What a report or a loss means for
// the job is JobSession's; the ledger only records it.
//
// Time is passed in; nothing here reads a clock.
//
// Thread-safety: not thread-safe; JobSession's caller serializes calls.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "coordinator/job_session.h"
#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/protocol/messages.h"

namespace ballast::coordinator {

class WorkerLedger {
 public:
  struct Worker {
    WorkerView view;                                  // without its busy segments, kept apart:
    std::vector<std::pair<double, double>> segments;  // WorkerView::busy
    balance::IntervalSet granted;                     // every range ever leased to it
    balance::Range lease;                             // as last told to it
    bool holds_lease = false;                         // last reply was lease or continue
    double cores = 0;                                 // bounds its cpuSeconds
    double joined_at = 0;                             // the job's start, or when it joined
    // Since when its next report's computing seconds can have run: its last
    // report that was idle or carried computing seconds, else joined_at. A
    // report with neither (a heartbeat in the middle of one long step)
    // leaves it, so that the step's seconds, reported at its end, are not
    // cut to the time since that heartbeat.
    double measured_from = 0;
    double MeasuredFrom() const { return std::max(joined_at, measured_from); }
    bool shared_when_sampled = false;  // at SampleSharing's last sample
    // Computing seconds reported since its last report that handed in
    // finished items: what the next such report's cost was computed in.
    double unsampled_busy_s = 0;
  };

  // Appends the worker of `prior`, which computes with `cores` and joins at
  // `now`. Its id is the number of workers before it; requires a name no
  // worker has.
  void Append(const balance::WorkerPrior& prior, double cores, double now);
  // The id of the worker named `name`; nullopt when there is none.
  std::optional<balance::WorkerId> Find(const std::string& name) const;
  size_t size() const { return workers_.size(); }
  // Requires id < size().
  Worker& at(balance::WorkerId id) { return workers_[id]; }
  const Worker& at(balance::WorkerId id) const { return workers_[id]; }

  // The report's calc and CPU seconds, cut to what the coordinator saw pass
  // since the worker's previous report and since it joined, times its cores
  // for CPU seconds; a cut is counted (clamped()).
  std::pair<double, double> BoundedSeconds(balance::WorkerId id,
                                           const protocol::ReportMessage& report, double now);
  // Records a report's contact, busy stretch and (bounded) seconds.
  void RecordContact(balance::WorkerId id, double calc_seconds, double cpu_seconds, double now);
  // Adds `calc_seconds` to the worker's unsampled seconds and, when the
  // report handed in finished items (merged_cost >= 0; the cost merged, 0
  // when none was), ends a speed sample there (WorkerView::speed_samples).
  void SampleSpeed(balance::WorkerId id, double merged_cost, double merged_squares,
                   double calc_seconds);
  // Records the policy's reply to the worker: a lease is granted to it, a
  // continue that moves its lease's end nearer is a cut, and the lease is
  // what it was told last.
  void RecordReply(balance::WorkerId id, const balance::Reply& reply);
  // The worker left at `now` (leaving, released or lost): it holds nothing.
  void MarkLeft(balance::WorkerId id, double now);
  // The job ended at `now` with `reporter`'s report: every other worker still
  // computing (a lease held, not left, not `checking` a result) computes
  // items somebody handed in, and has since its last measured report; those
  // seconds come in no report unless it reports again (WorkerView::cut_short_s).
  void CountCutShort(balance::WorkerId reporter, double now,
                     const std::function<bool(balance::WorkerId)>& checking);

  // Workers other than `id` that may still compute: heard from, and not
  // lost, left or released since.
  size_t OtherLive(balance::WorkerId id) const;
  // The names of the workers to be declared lost at `now`: silent for
  // `lease_seconds` while holding a lease, or never heard from
  // `start_timeout_s` after they joined.
  std::vector<std::string> Expired(double now, double lease_seconds, double start_timeout_s) const;
  // When Expired will next name one (infinity when never).
  double NextDeadline(double lease_seconds, double start_timeout_s) const;

  // A sample at `now` of which workers share their node with another job's
  // worker that holds work (`shared`, by name); the time since the previous
  // sample counts for the workers shared then (JobSession::SampleSharing).
  void SampleSharing(const std::set<std::string>& shared, double now);
  // The seconds SampleSharing has covered.
  double sharing_sampled_s() const { return sharing_sampled_s_; }
  // Reports whose seconds BoundedSeconds cut.
  uint64_t clamped() const { return clamped_; }

  // Of `names`, those of workers that hold a lease.
  std::set<std::string> HoldingLeases(const std::set<std::string>& names) const;
  // Every worker's name.
  std::set<std::string> Names() const;
  // Each worker's view in id order, with its busy stretches when `segments`.
  std::vector<WorkerView> Views(bool segments) const;

 private:
  std::vector<Worker> workers_;
  std::map<std::string, balance::WorkerId> ids_;
  uint64_t clamped_ = 0;
  std::optional<double> sharing_sampled_at_;  // SampleSharing's last sample
  double sharing_sampled_s_ = 0;
};

}  // namespace ballast::coordinator
