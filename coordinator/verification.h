// Verifier: the opt-in check that workers compute honestly (docs/trust.md).
//
// A job's token lets a worker report; it does not make the worker's results
// true. With `verify: {fraction: f}` the coordinator recomputes a random
// sample of the finished ranges on a different worker, as volunteer-computing
// systems do (BOINC's redundancy), and fails the job when the two results
// differ, naming the range and both workers:
// - every completion merged into the job's result is sampled with
//   probability f, by a hash of the range and a secret seed the coordinator
//   draws (a worker cannot tell which of its ranges will be checked), so the
//   expected share of items recomputed is f;
// - a sampled range is recomputed whole (results merge but do not split) by
//   the first worker other than the one that computed it that has nothing
//   else to do: when the policy answers "wait" or "done", a pending check is
//   leased instead; the recomputing worker may hand it in in parts (its
//   heartbeats carry what it finished), which are merged before comparing;
// - the two results are compared exactly (exec: the items that succeeded and
//   the ranges that failed with their exit codes; the retry counts may
//   differ); a mismatch fails the job;
// - a worker lost while recomputing hands its check back to the pending ones.
// It needs two workers at least: CheckVerifyOptions refuses fewer.
//
// The Verifier only decides; JobSession leases the checks it picks and hands
// in their results. Nothing here reads a clock or does I/O.
//
// Thread-safety: not thread-safe; JobSession's caller serializes calls.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/job_types.h"
#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"

namespace ballast::coordinator {

// Returns Ok when verification is off or well formed for a job of `workers`
// workers; Invalid naming the rule otherwise (a fraction outside (0, 1], not
// a number, or fewer than two workers, on whom no range can be recomputed
// elsewhere).
Status CheckVerifyOptions(const VerifyOptions& options, size_t workers);

// True when a completion of `range` is to be recomputed: a hash of the seed
// and the range, uniform in [0, 1), falls below the fraction. Always false
// when verification is off; always true at fraction 1.
bool Sampled(const VerifyOptions& options, balance::Range range);

// True when two results of the same items agree: equal totals; for exec,
// the same items succeeded and the same ranges failed with the same exit
// codes (the number of attempts may differ).
bool SameResult(const workload::Result& a, const workload::Result& b);

class Verifier {
 public:
  // `workers`: the job's worker names in order (WorkerId indexes them).
  Verifier(VerifyOptions options, std::vector<std::string> workers);

  bool enabled() const { return options_.fraction > 0; }
  bool failed() const { return !view_.failure.empty(); }
  // No check is pending or in progress.
  bool Idle() const { return pending_.empty() && assigned_.empty(); }

  // `worker`'s completion of `range` with `result` was merged. Returns true
  // when it was sampled (it is then pending until another worker recomputes it).
  bool OnMerged(balance::WorkerId worker, balance::Range range, const workload::Result& result);

  // Gives `worker` the oldest pending check that another worker computed and
  // marks it in progress. Returns its range, or nullopt when there is none
  // (or the worker already holds one: Holding() says which).
  std::optional<balance::Range> Assign(balance::WorkerId worker);
  // The range `worker` is recomputing, if any.
  std::optional<balance::Range> Holding(balance::WorkerId worker) const;

  // Seconds `worker` spent while holding a check (its reports' figures).
  void AddCost(balance::WorkerId worker, double cpu_s, double busy_s);

  // `worker`'s recomputation of `part` of the range it holds. Once the parts
  // cover the range their merged result is compared with the first one: the
  // check is then over (Holding() is empty). Returns Ok when the range is not
  // yet covered or the results agree; Terminal naming the range, both workers
  // and both results when they do not (failed() is then true, for good);
  // Invalid, changing nothing, when the worker holds no check or `part` is
  // not inside it or overlaps a part handed in before.
  Status OnRecomputed(balance::WorkerId worker, balance::Range part, const workload::Result& result,
                      double now);

  // A report of `worker`, which holds a check: its seconds count for the
  // check (AddCost) and its `completed` ranges, with `results` in the same
  // order, are parts of it (OnRecomputed; a mismatch fails the job). Returns
  // the check's range while parts of it are still to come, nullopt once it
  // is compared.
  std::optional<balance::Range> OnCheckReport(balance::WorkerId worker,
                                              const std::vector<protocol::Completion>& completed,
                                              const std::vector<workload::Result>& results,
                                              double cpu_s, double busy_s, double now);

  // The reply for `worker`: the policy's `reply`, or a check to recompute
  // when the policy has nothing for it; "done" when verification failed,
  // and "wait" instead of "done" while a check may still come
  // (`policy_finished`: the policy has finished the job). Records whether
  // the worker waits (SetWaiting). Off, it returns `reply` and records
  // nothing.
  balance::Reply WithChecks(balance::WorkerId worker, balance::Reply reply, bool policy_finished);

  // `worker` is gone: the check it held becomes pending again.
  void Release(balance::WorkerId worker);
  // A worker joined the job: it is the next WorkerId.
  void AddWorker(std::string name);

  // Whether `worker` waits for work (the last answer it got was "wait").
  void SetWaiting(balance::WorkerId worker, bool waiting);
  // Waiting workers that could now take a pending check, each named once
  // (it is no longer counted as waiting until SetWaiting again).
  std::vector<balance::WorkerId> TakeSignals();

  VerificationView View() const;

 private:
  struct Check {
    balance::Range range;
    balance::WorkerId first = 0;  // who computed it
    workload::Result result;      // what it reported
    // The recomputation so far: the parts handed in and their merged result.
    balance::IntervalSet done;
    workload::Result again;
  };
  // The first pending check `worker` may take, or pending_.end().
  std::deque<Check>::iterator Find(balance::WorkerId worker);

  VerifyOptions options_;
  std::vector<std::string> workers_;
  std::deque<Check> pending_;
  std::map<balance::WorkerId, Check> assigned_;
  std::vector<bool> waiting_;
  VerificationView view_;
};

}  // namespace ballast::coordinator
