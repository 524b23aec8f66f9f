// Decide: the flow of one pass (decide.h), from the job's spec to its
// session's outcome. The pass itself is in decide_pass.cc, its steps in the
// other decide_*.cc files (decide_internal.h says which).
#include "operator/controller/decide.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "core/common/names.h"
#include "core/fuzzy/profile_json.h"
#include "operator/api/job_status.h"
#include "operator/api/weighted_job.h"
#include "operator/controller/decide_internal.h"
#include "operator/controller/node_selection.h"

namespace ballast::controller {

using std::chrono::milliseconds;

namespace decide {

bool StopSession(Pass& pass) {
  pass.DeletePods();
  const bool pods_left = pass.OwnedPodsLeft();
  JobMemory& memory = pass.memory;
  if (pass.registered) {
    // Workers hand back their leases as they stop; save what they finished
    // once they are gone.
    if (pods_left) return false;
    if (const auto& checkpoint = pass.in.checkpoint) {
      KeepCheckpoint(pass, memory.token, memory.faults, memory.announced, pass.status, pass,
                     *checkpoint);
      pass.status.completed_items = checkpoint->completed.size();
      pass.status.progress =
          api::ProgressText(checkpoint->completed.size(), pass.spec().job.workload.items);
      pass.status.result =
          checkpoint->result.ToStatusJson(pass.spec().job.workload.item_values.get());
    }
    pass.actions.push_back(RemoveJob{});
    pass.registered = false;
  }
  pass.status.workers = 0;
  return !pods_left;
}

}  // namespace decide

namespace {

using decide::Pass;

constexpr milliseconds kNoNodesRetry{10000};
constexpr milliseconds kPodsLeavingRetry{500};
constexpr milliseconds kAtOnce{1};  // a session was just registered: look at it

// Comes back after `wait` at the latest.
void RequeueBy(Pass& pass, milliseconds wait) {
  if (!pass.requeue_after || wait < *pass.requeue_after) pass.requeue_after = wait;
}

// Deletes the job's finished worker pods (and so their logs) once the pod
// TTL has passed since the job finished at `finished` (seconds since the
// epoch); comes back then. Pods still running are left to the linger.
void DeleteFinishedPods(Pass& pass, double finished) {
  const int64_t ttl =
      pass.in.spec->pod_ttl_seconds_after_finished.value_or(pass.options.worker_pod_ttl_s);
  if (ttl < 0) return;
  bool any = false;
  for (const api::PodView& pod : pass.in.pods) {
    const bool done = pod.phase == api::PodPhase::kSucceeded || pod.phase == api::PodPhase::kFailed;
    any |= pod.meta.OwnedBy(pass.uid) && done && !pod.meta.deleting;
  }
  if (!any) return;
  const double left = finished + static_cast<double>(ttl) - pass.in.now.wall;
  if (left > 0) {
    RequeueBy(pass, milliseconds(static_cast<int64_t>(left * 1000) + 1));
    return;
  }
  for (const api::PodView& pod : pass.in.pods) {
    const bool done = pod.phase == api::PodPhase::kSucceeded || pod.phase == api::PodPhase::kFailed;
    if (pod.meta.OwnedBy(pass.uid) && done && !pod.meta.deleting) {
      pass.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
    }
  }
}

// Whether a finished job's session ends in this pass: at once for a failed
// job; a job that succeeded stays registered while its workers hear "done"
// and exit, and while pods made but not in the pod cache yet (a short job
// can finish first) are waited for (the timing reads the first reporter's
// pod), up to the linger.
bool SessionEnds(const Pass& pass, bool failed) {
  if (failed) return true;
  bool pods_running = false;
  for (const api::PodView& pod : pass.in.pods) {
    if (!pod.meta.OwnedBy(pass.uid)) continue;
    pods_running |= pod.phase == api::PodPhase::kRunning || pod.phase == api::PodPhase::kPending;
  }
  const bool pods_unseen = pass.in.writes.creating || !pass.in.writes.on_their_way.empty();
  // The linger counts from status.completionTime, which the pass that saw
  // the session done wrote (Succeed), not from a moment kept apart: the
  // trade is wall time to the second (the time is floored to it, and a
  // clock step moves it), so the session may end up to a second early
  // against a linger of 30 s, or later or earlier by a clock step.
  const auto done = decide::ParseRfcTime(pass.status.completion_time.value_or(""));
  const double linger_s = std::chrono::duration<double>(pass.options.linger).count();
  const bool lingered =
      pass.status.Is(api::JobPhase::kSucceeded) && done && pass.in.now.wall - *done > linger_s;
  return !(pods_running || pods_unseen) || lingered;
}

void AfterFinish(Pass& pass) {
  const bool failed = pass.status.Is(api::JobPhase::kFailed);
  JobMemory& memory = pass.memory;
  const bool ending = pass.registered && SessionEnds(pass, failed);
  decide::RefineTiming(pass, ending);
  if (pass.in.queue) decide::FinishWorkload(pass, pass.status, memory.kueue, pass);
  if (failed) pass.DeletePods();
  if (pass.registered) {
    if (!ending) {
      pass.requeue_after = kPodsLeavingRetry;
      return;
    }
    pass.actions.push_back(RemoveJob{});
    pass.registered = false;
  }
  const std::optional<int64_t> ttl = pass.in.spec->ttl_seconds_after_finished;
  const auto finished = decide::ParseRfcTime(pass.status.completion_time.value_or(""));
  if (finished) DeleteFinishedPods(pass, *finished);
  if (!ttl || !finished) return;
  const double left = *finished + static_cast<double>(*ttl) - pass.in.now.wall;
  if (left > 0) {
    RequeueBy(pass, milliseconds(static_cast<int64_t>(left * 1000) + 1));
    return;
  }
  // The final status first: whoever watches the job sees it finish.
  if (pass.status_handed || !pass.in.writes.status_written) {
    pass.requeue_after = kPodsLeavingRetry;
    return;
  }
  pass.actions.push_back(DeleteJob{pass.uid});
}

void Fail(Pass& pass, api::Reason reason, const std::string& message) {
  decide::FailInPass(pass, reason, message);
  AfterFinish(pass);
}

void Suspend(Pass& pass) {
  const bool stopped = decide::StopSession(pass);
  if (!stopped && pass.registered) {
    pass.requeue_after = kPodsLeavingRetry;  // the workers are leaving
    return;
  }
  // Resuming tries every node again (an image imported since, say).
  if (decide::ForgetGivenUp(pass.status)) pass.write_at_once = true;
  const std::string message =
      fmt::format("spec.suspend is true; {} of {} items kept",
                  pass.status.completed_items.value_or(0), pass.spec().job.workload.items);
  pass.Transition(api::JobPhase::kSuspended, false, api::Reason::kSuspended, message);
  api::SetCondition(pass.status,
                    decide::Condition(api::ConditionType::kSuspended, true,
                                      api::Reason::kSuspendedByUser, message),
                    pass.in.job.generation, pass.in.now.rfc3339);
  pass.HandStatus(false);
  if (!stopped) pass.requeue_after = kPodsLeavingRetry;
}

// The profile the job names, parsed; nullopt after failing the job.
std::optional<fuzzy::Profile> ResolveProfile(Pass& pass) {
  const std::string& name = pass.spec().job.profile;
  if (!pass.in.profile) {
    Fail(pass, api::Reason::kProfileNotFound,
         fmt::format("WeightProfile {} does not exist (spec.profile); `kubectl get "
                     "weightprofiles` lists those that do, and crds/profiles/ holds the shipped "
                     "ones",
                     QuoteForMessage(name)));
    return std::nullopt;
  }
  auto profile = fuzzy::ProfileFromJson(*pass.in.profile);
  if (!profile.ok()) {
    Fail(pass, api::Reason::kInvalidProfile,
         fmt::format("WeightProfile {} is invalid: {}", QuoteForMessage(name),
                     profile.status().message()));
    return std::nullopt;
  }
  return std::move(*profile);
}

// Takes what the job's writes left: a token found in an existing Secret of
// this job, which replaces the session's.
void TakeWrites(Pass& pass) {
  JobMemory& memory = pass.memory;
  const WritesInFlight& writes = pass.in.writes;
  if (writes.adopted_token && *writes.adopted_token != memory.token.value) {
    // An earlier operator made this job's Secret before it could record the
    // job's start: the workers read that token, so the session takes it.
    memory.token.value = *writes.adopted_token;
    if (pass.registered) {
      pass.actions.push_back(RemoveJob{});
      pass.registered = false;
    }
  }
}

// Takes the token to use: the one held, one the reconciler read from the
// job's Secret, or a fresh one whose Secret is still to be made.
void EnsureToken(Pass& pass) {
  JobMemory& memory = pass.memory;
  if (!memory.token.value.empty()) return;
  if (pass.in.secret_token) {
    memory.token.value = *pass.in.secret_token;
    return;
  }
  memory.token.value = pass.in.fresh_token;
}

// The job's session at the coordinator, or why there is none yet.
void Register(Pass& pass, const fuzzy::Profile& profile) {
  auto registration = decide::Registration(pass, profile);
  if (!registration) return;  // failed or pending: the pass said why
  pass.actions.push_back(RegisterJob{std::move(*registration)});
  pass.requeue_after = kAtOnce;
}

// The job's items are not there yet (its itemsFrom ConfigMap or key is
// missing): Pending, saying so at once, until they come or items_wait runs
// out, as a pod waits for its ConfigMap; then it fails, naming what is missing.
void WaitForItems(Pass& pass, const std::string& missing) {
  if (!pass.memory.clock.items_missing_since) {
    pass.memory.clock.items_missing_since = pass.in.now.steady;
  }
  // Said once: when the status the pass starts from does not say it yet
  // (as a restarted operator's, read back, may); the status then goes out
  // at once, so that the next pass, or the next operator, finds it said.
  const auto& conditions = pass.started.conditions;
  const bool said = std::any_of(conditions.begin(), conditions.end(), [](const auto& c) {
    return c.type == api::ConditionType::kReady && c.reason == api::Reason::kWaitingForItems;
  });
  const auto waited = pass.in.now.steady - *pass.memory.clock.items_missing_since;
  const double bound_s = std::chrono::duration<double>(pass.options.items_wait).count();
  if (waited >= pass.options.items_wait) {
    return Fail(pass, api::Reason::kInvalidSpec,
                fmt::format("spec.itemsFrom.configMap: {} (waited {:.0f} s)", missing, bound_s));
  }
  const std::string message = fmt::format(
      "waiting for the job's items: {}; the job fails if it does not exist within {:.0f} s",
      missing, bound_s);
  if (!said) {
    pass.Event(true, api::Reason::kWaitingForItems, message);
    pass.write_at_once = true;
  }
  pass.status.phase = api::JobPhase::kPending;
  api::SetCondition(
      pass.status,
      decide::Condition(api::ConditionType::kReady, false, api::Reason::kWaitingForItems, message),
      pass.in.job.generation, pass.in.now.rfc3339);
  pass.HandStatus(false);
  pass.requeue_after = std::min<milliseconds>(
      milliseconds(2000),
      std::chrono::duration_cast<milliseconds>(pass.options.items_wait - waited) + milliseconds(1));
}

// Only the operator says a job is finished: a status that claims Complete or
// Failed while the job runs (written by someone with status rights; `kubectl
// wait --for=condition=Complete` would return) gets the operator's own
// conditions back in this pass's write.
void RestoreConditions(Pass& pass) {
  if (!pass.in.job.claims_finished || pass.status.Finished()) return;
  pass.memory.written.status.conditions.clear();  // so that the pass writes the status now
  pass.restate_conditions = true;                 // and the executor writes them whole
  pass.write_at_once = true;
  pass.Event(true, api::Reason::kConditionsRestored,
             "status.conditions said the job is finished while it runs; only the operator sets "
             "them: its own are written again");
}

// A job's listed items are fixed at its start: read again after a restart
// and changed, the checkpoint would be of another list. Fails the job, and
// returns false, when they changed; else keeps their digest and count in
// the status.
bool ItemsUnchanged(Pass& pass) {
  const std::string digest = workload::ItemsDigest(pass.spec().job.workload);
  if (pass.status.items_digest && *pass.status.items_digest != digest) {
    Fail(pass, api::Reason::kItemsChanged,
         fmt::format("spec.itemsFrom: the list is not the one the job started with ({} items "
                     "then, {} now): a job's items are fixed at its start; put the list back, or "
                     "delete the job and create it again",
                     pass.status.items.value_or(0), pass.spec().job.workload.items));
    return false;
  }
  if (!digest.empty()) pass.status.items_digest = digest;
  pass.status.items = pass.spec().job.workload.items;
  return true;
}

void Run(Pass& pass) {
  TakeWrites(pass);
  if (pass.status.Finished()) return AfterFinish(pass);
  RestoreConditions(pass);
  const api::ParsedSpec& parsed = *pass.in.spec;
  if (!parsed.spec) return Fail(pass, parsed.error.reason, parsed.error.status.message());
  if (!pass.in.refusal.empty()) return Fail(pass, pass.in.refusal_reason, pass.in.refusal);
  if (auto refused =
          decide::TakeCreateOutcome(pass, pass.memory.faults.create_backoff, pass.status, pass)) {
    return Fail(pass, api::Reason::kWorkerPodRefused, *refused);
  }
  if (pass.in.items_missing) return WaitForItems(pass, *pass.in.items_missing);
  pass.memory.clock.items_missing_since.reset();
  if (!ItemsUnchanged(pass)) return;
  const auto deadline = pass.spec().job.active_deadline_s;
  const auto started = decide::ParseRfcTime(pass.status.start_time.value_or(""));
  if (deadline && started && pass.in.now.wall - *started > *deadline) {
    return Fail(pass, api::Reason::kDeadlineExceeded,
                fmt::format("the job ran longer than activeDeadlineSeconds ({:.0f} s)", *deadline));
  }
  std::optional<fuzzy::Profile> profile;
  if (!pass.registered && !(profile = ResolveProfile(pass))) return;
  EnsureToken(pass);
  if (pass.spec().suspend) {
    Suspend(pass);
    if (pass.in.queue) decide::SuspendWorkload(pass);  // its quota back to the queue
    return;
  }
  if (pass.in.queue && !decide::Admission(pass)) return;  // held, or stopped by Kueue
  if (!pass.registered) return Register(pass, *profile);
  decide::ManagePods(pass);
  if (pass.in.queue) decide::ReportReclaimable(pass);
  pass.HandStatus(pass.in.flush_status);
  if (pass.status.Finished()) return AfterFinish(pass);
  milliseconds next = pass.options.pacing.status_interval;
  if (pass.fault_deadline) next = std::min(next, *pass.fault_deadline);
  if (deadline && started) {
    const double left = *started + *deadline - pass.in.now.wall;
    next = std::min(next, milliseconds(static_cast<int64_t>(std::max(0.0, left) * 1000) + 1));
  }
  pass.requeue_after = next;
}

}  // namespace

Decision Accept(const DecideInput& input, const JobMemory& memory) {
  // How long a job may wait for an operator before its Accepted event is a
  // Warning: longer means none was running or leading.
  constexpr double kLateSeconds = 30;
  const DecideOptions options;
  Pass pass(input, memory, options);
  pass.status.observed_generation = input.job.generation;
  // A job started by an operator that wrote no phase (an earlier version):
  // its time of acceptance is unknown.
  if (!pass.status.start_time) pass.memory.clock.accepted_wall = input.now.wall;
  const auto created = decide::ParseRfcTime(input.job.meta.creation_timestamp);
  const double waited = created ? std::max(0.0, input.now.wall - *created) : 0;
  const bool late = waited >= kLateSeconds;
  std::string message =
      fmt::format("an operator took the job in {:.0f} s after it was created", waited);
  if (late) message += "; until then no operator was running, or none held the leader lease";
  pass.status.phase.reset();  // the schema's default: the transition is this operator's
  pass.Transition(api::JobPhase::kPending, late, api::Reason::kAccepted, message);
  pass.HandStatus(true);
  Decision decision;
  decision.memory = std::move(pass.memory);
  decision.status = std::move(pass.status);
  decision.actions = std::move(pass.actions);
  decision.requeue_after = kAtOnce;
  return decision;
}

Decision Decide(const DecideInput& input, const JobMemory& memory, const DecideOptions& options) {
  Pass pass(input, memory, options);
  pass.status.observed_generation = input.job.generation;
  Run(pass);
  Decision decision;
  decision.memory = std::move(pass.memory);
  decision.status = std::move(pass.status);
  decision.actions = std::move(pass.actions);
  decision.requeue_after = pass.requeue_after;
  return decision;
}

}  // namespace ballast::controller
