// JobSession: one running job as the coordinator owns it — its policy, the
// exactly-once ledger of finished items and their merged result, each
// worker's leases and counters, and lease expiry.
//
// It is the coordinator without the network: the HTTP server (server.h)
// parses requests, checks tokens and hands reports here; tests drive it
// directly. Every decision is the policy's; JobSession only checks what
// workers say against what they were given:
// - a completion must lie inside ranges that were leased to that worker,
//   and its result must parse; otherwise the whole report is refused and
//   nothing changes;
// - except that a report of a lease granted by an earlier session of the
//   same job (the coordinator restarted and the job was added again, with
//   `resume`), from a worker this session has not leased to yet, is not bad
//   but stale: it is refused with Conflict, and the worker drops that lease
//   and asks again, so its items are leased anew;
// - a result impossible for the items it is handed in for (more primes
//   than the numbers can hold, matmul blocks or exec items that are not the
//   range's, CheckResultPossible in result_bounds.h) is refused likewise;
// - numbers a worker reports about itself are bounded by what the
//   coordinator saw: `calcSeconds` by the time since the worker's previous
//   report that was idle or carried computing seconds (since it joined the
//   job before its first; a heartbeat sent in the middle of a long step does
//   not count), plus
//   kReportSlackSeconds for network jitter, and `cpuSeconds` by that time
//   times the worker's cores (JobConfig::worker_cores, else
//   max_worker_cores); and all of a worker's reports together by the time
//   the job has lasted (plus the slack once), times its cores for CPU
//   seconds. Larger claims are cut to the bound and counted
//   (JobView::clamped_reports), so a forged or broken worker cannot skew the
//   speed estimates or the job's measured work beyond what its cores could
//   have done in that time; negative or non-finite seconds and a position
//   past the job's end are refused (Invalid) and change nothing;
// - a completion is merged only when none of its items is finished yet
//   (results cannot be split); a completion that overlaps finished items is
//   dropped and its unfinished items go back to the pool when its lease ends,
//   so every item's result is merged exactly once.
// - with JobConfig::verify on, a sample of the merged completions is
//   recomputed by other workers when the policy has nothing for them, and a
//   mismatch fails the job (verification.h; docs/trust.md). A worker
//   recomputing a range is outside the policy's view until it hands the
//   range in; the job is finished when the policy is and every check is
//   compared, or at the first mismatch.
// - with JobConfig::release_idle on, a worker that asks for work in the
//   job's tail and would be told "wait" is released instead — told "done",
//   so it exits — when ReleaseIdle says so (idle_release.h: nothing left
//   unassigned, verification off, two other live workers stay to take over
//   a lost one's items). A released worker is out of the policy's view as one
//   that left; its later reports are answered "done" and change nothing, and
//   WorkerLost leaves it as it is (WorkerView::released).
//
// Time is passed in (seconds on any monotonic clock); nothing here reads a
// clock, sleeps or starts a thread.
//
// Thread-safety: not thread-safe; the server serializes calls per job.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordinator/idle_release.h"
#include "coordinator/job_types.h"
#include "coordinator/merged_items.h"
#include "coordinator/verification.h"
#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/health/deviation.h"
#include "core/health/measurement_noise.h"
#include "core/history/history_key.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::coordinator {

inline constexpr size_t kMaxSegments = 4096;
// How much a report's calcSeconds may exceed the seconds the coordinator saw
// pass since the worker's previous report: the two reports' transit times
// differ, and a worker keeps computing while a progress report travels.
inline constexpr double kReportSlackSeconds = 1.0;

class WorkerLedger;

// It composes three parts, each in a file of its own: the checks of a
// report (report_checks.h), the ledger of workers (worker_ledger.h) and
// that of finished items (merged_items.h); the rules between them, the
// policy and the verifier are its own.
class JobSession {
 public:
  // Builds the policy and starts it at `now`. Returns Invalid when the
  // policy spec is wrong, there are no workers, two share a name, the
  // workload has no items, a worker's cores are not a finite number > 0, or
  // the verify options are wrong (CheckVerifyOptions).
  static StatusOr<std::unique_ptr<JobSession>> Create(JobConfig config, double now);
  ~JobSession();

  const JobConfig& config() const { return config_; }

  // Records a report and returns what the worker does next. Returns NotFound
  // for an unknown worker, Invalid (and changes nothing) for completions
  // outside the worker's leases, results that do not parse or are
  // impossible for their range, or a position past the job's end, and Conflict
  // (changing nothing) when such completions are stale: the worker has had
  // no lease from this session and the report names another session.
  StatusOr<protocol::ReplyMessage> HandleReport(const protocol::ReportMessage& report, double now);

  // The worker is gone (its process or pod died, its node was cordoned or
  // drained): its unfinished work returns to the pool at once. Returns
  // NotFound for an unknown worker.
  Status WorkerLost(const std::string& worker, double now);

  // A worker joins the running job (its node became eligible): the policy
  // takes it in (Policy::OnWorkerJoined) and it asks like the others;
  // `cores` bounds its cpuSeconds as JobConfig::worker_cores does (nullopt:
  // max_worker_cores). Its start timeout runs from now. A worker of that
  // name already in the job changes nothing (one lost may report again).
  // Returns Invalid for an empty name, a prior out of CheckPrior's bounds,
  // cores that are not a finite number > 0, or a job at kMaxWorkers.
  Status AddWorker(const balance::WorkerPrior& prior, std::optional<double> cores, double now);

  // Expires silent leases and lets the policy's timer fire. Call at or after
  // NextDeadline().
  void Tick(double now);
  // The next time Tick has something to do (infinity when nothing).
  double NextDeadline() const;

  // Workers the policy asked to contact the coordinator, since the last call.
  std::vector<std::string> TakeSignals();
  // What a signal to `worker` tells of its lease (SignalMessage::lease): the
  // lease the policy holds for it now, when that is the lease the worker was
  // last told of (same begin), its end maybe cut nearer since; nullopt when
  // the worker holds no lease, computes a check, or is unknown.
  std::optional<balance::Range> SignalLease(const std::string& worker) const;

  bool HasWorker(const std::string& name) const;
  // True when every item's result is merged and every sampled range is
  // verified, or when verification failed (View().verification.failure).
  bool Finished() const;
  // Items whose results are merged.
  uint64_t completed() const { return items_.finished().size(); }
  // The finished items and their merged result, to resume from.
  Checkpoint TakeCheckpoint() const { return {items_.finished(), items_.result()}; }
  // `segments`: false leaves WorkerView::busy empty (a cheaper snapshot, for
  // metrics).
  JobView View(bool segments = true) const;
  // Of `names`, the workers of this job that hold a lease now (computing, or
  // about to): what another job on the same nodes shares them with.
  std::set<std::string> HoldingLeases(const std::set<std::string>& names) const;
  // Every worker's name, those added mid-job included.
  std::set<std::string> NamesOfWorkers() const;
  // Why the policy's last reply to an idle worker was to wait, each worker
  // it looked at by name ("pi4b-1: sized (learning at 112.27 s): ...; ...");
  // empty where the policy keeps no notes (balance::Policy::WaitNotes).
  std::string WaitReason() const;
  // The host's sample, at `now`, of which of the job's workers share their
  // node with another job's worker that holds work (`shared`, by name). The
  // time since the previous sample counts toward JobView::sharing_sampled_s,
  // and toward WorkerView::shared_s of the workers shared at the previous
  // sample: what a sample saw holds until the next. Only while the job runs.
  void SampleSharing(const std::set<std::string>& shared, double now);

 private:
  JobSession(JobConfig config, std::unique_ptr<balance::Policy> policy, double now);

  // Merges the ranges a report hands in that nobody handed in first (into
  // `event` for the policy); the seconds spent on the others count as
  // dropped. `seconds`: the report's calc and CPU seconds as
  // WorkerLedger::BoundedSeconds cut them.
  void MergeCompleted(balance::WorkerId id, const protocol::ReportMessage& report,
                      const std::vector<workload::Result>& results,
                      std::pair<double, double> seconds, double now, balance::Report& event);
  protocol::ReplyMessage Decide(balance::WorkerId id, const balance::Report& report);
  // Once, when the job has ended: WorkerLedger::CountCutShort.
  void CountComputingCutShort(balance::WorkerId reporter, double now);
  // The message that tells a worker `reply`, with the heartbeat and session
  // of this job.
  protocol::ReplyMessage MessageOf(const balance::Reply& reply) const;
  // A worker that is leaving: the rest of its lease goes back to the policy;
  // the reply is "done".
  protocol::ReplyMessage Leave(balance::WorkerId id, double now);
  // What ReleaseIdle decides on for worker `id`, which asked for work
  // (`idle`) and would be told `reply` (idle_release.h).
  IdleFacts IdleFactsOf(balance::WorkerId id, bool idle, balance::Reply::Kind reply) const;
  // Releases worker `id` in the job's tail: it leaves the policy's view, as
  // one leaving does, and is marked released; the reply is "done".
  protocol::ReplyMessage Release(balance::WorkerId id, double now);
  // A report from a worker holding a check (verification.h): hands the
  // check in when it is complete, then asks the policy. `seconds`: the
  // report's calc and CPU seconds as BoundedSeconds cut them.
  protocol::ReplyMessage OnCheckReport(balance::WorkerId id, const protocol::ReportMessage& report,
                                       const std::vector<workload::Result>& results,
                                       std::pair<double, double> seconds, double now);

  JobConfig config_;
  std::unique_ptr<balance::Policy> policy_;
  // Apart from its header, which needs WorkerView from this one.
  std::unique_ptr<WorkerLedger> workers_;
  MergedItems items_;
  double started_at_ = 0;
  bool end_counted_ = false;  // CountComputingCutShort ran
  uint64_t messages_ = 0;
  uint64_t refused_ = 0;
  Verifier verifier_;
};

}  // namespace ballast::coordinator
