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

bool StopSession(const PassView& view, const CheckpointSlice& seal, JobSink& sink) {
  sink.DeletePods();
  const bool pods_left = view.OwnedPodsLeft();
  api::WeightedJobStatus& status = sink.status;
  if (sink.Registered()) {
    // Workers hand back their leases as they stop; save what they finished
    // once they are gone.
    if (pods_left) return false;
    if (const auto& checkpoint = view.in.checkpoint) {
      KeepCheckpoint(view, seal, status, sink, *checkpoint);
      const auto& workload = view.spec().job.workload;
      status.completed_items = checkpoint->completed.size();
      status.progress = api::ProgressText(checkpoint->completed.size(), workload.items);
      status.result = checkpoint->result.ToStatusJson(workload.item_values.get());
    }
    sink.EndSession();
  }
  status.workers = 0;
  return !pods_left;
}

}  // namespace decide

// The flow of a pass, from here to Run, takes the whole Pass: it is where
// each step is handed the parts of the memory it owns (a failure, a finish,
// a suspension reach most of them: the checkpoint's slice, the session and
// the clock for the timing, Kueue's part for the Workload).
namespace {

using decide::Pass;

constexpr milliseconds kPodsLeavingRetry{500};
constexpr milliseconds kAtOnce{1};  // a session was just registered: look at it

// The memory keeping the checkpoint takes (decide::KeepCheckpoint).
decide::CheckpointSlice Seal(Pass& pass) {
  return {pass.memory.token, pass.memory.faults, pass.memory.announced};
}

// Deletes the job's finished worker pods (and so their logs) once the pod
// TTL has passed since the job finished at `finished` (seconds since the
// epoch); comes back then. Pods still running are left to the linger.
void DeleteFinishedPods(const decide::PassView& view, decide::JobSink& sink, double finished) {
  const int64_t ttl =
      view.in.spec->pod_ttl_seconds_after_finished.value_or(view.options.worker_pod_ttl_s);
  if (ttl < 0) return;
  bool any = false;
  for (const api::PodView& pod : view.in.pods) {
    const bool done = pod.phase == api::PodPhase::kSucceeded || pod.phase == api::PodPhase::kFailed;
    any |= pod.meta.OwnedBy(view.uid) && done && !pod.meta.deleting;
  }
  if (!any) return;
  const double left = finished + static_cast<double>(ttl) - view.in.now.wall;
  if (left > 0) {
    sink.RequeueBy(milliseconds(static_cast<int64_t>(left * 1000) + 1));
    return;
  }
  for (const api::PodView& pod : view.in.pods) {
    const bool done = pod.phase == api::PodPhase::kSucceeded || pod.phase == api::PodPhase::kFailed;
    if (pod.meta.OwnedBy(view.uid) && done && !pod.meta.deleting) {
      sink.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
    }
  }
}

// Whether a finished job's session ends in this pass: at once for a failed
// job; a job that succeeded stays registered while its workers hear "done"
// and exit, and while pods made but not in the pod cache yet (a short job
// can finish first) are waited for (the timing reads the first reporter's
// pod), up to the linger.
bool SessionEnds(const decide::PassView& view, const api::WeightedJobStatus& status, bool failed) {
  if (failed) return true;
  bool pods_running = false;
  for (const api::PodView& pod : view.in.pods) {
    if (!pod.meta.OwnedBy(view.uid)) continue;
    pods_running |= pod.phase == api::PodPhase::kRunning || pod.phase == api::PodPhase::kPending;
  }
  const bool pods_unseen = view.in.writes.creating || !view.in.writes.on_their_way.empty();
  // The linger counts from status.completionTime, which the pass that saw
  // the session done wrote (Succeed), not from a moment kept apart: the
  // trade is wall time to the second (the time is floored to it, and a
  // clock step moves it), so the session may end up to a second early
  // against a linger of 30 s, or later or earlier by a clock step.
  const auto done = decide::ParseRfcTime(status.completion_time.value_or(""));
  const double linger_s = std::chrono::duration<double>(view.options.linger).count();
  const bool lingered =
      status.Is(api::JobPhase::kSucceeded) && done && view.in.now.wall - *done > linger_s;
  return !(pods_running || pods_unseen) || lingered;
}

void AfterFinish(Pass& pass) {
  const bool failed = pass.status.Is(api::JobPhase::kFailed);
  JobMemory& memory = pass.memory;
  const bool ending = pass.Registered() && SessionEnds(pass, pass.status, failed);
  decide::RefineTiming(pass, memory.session, memory.clock, memory.announced, pass, ending);
  if (pass.in.queue) decide::FinishWorkload(pass, pass.status, memory.kueue, pass);
  if (failed) pass.DeletePods();
  if (pass.Registered()) {
    if (!ending) {
      pass.requeue_after = kPodsLeavingRetry;
      return;
    }
    pass.EndSession();
  }
  const std::optional<int64_t> ttl = pass.in.spec->ttl_seconds_after_finished;
  const auto finished = decide::ParseRfcTime(pass.status.completion_time.value_or(""));
  if (finished) DeleteFinishedPods(pass, pass, *finished);
  if (!ttl || !finished) return;
  const double left = *finished + static_cast<double>(*ttl) - pass.in.now.wall;
  if (left > 0) {
    pass.RequeueBy(milliseconds(static_cast<int64_t>(left * 1000) + 1));
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
  decide::FailSession(pass, Seal(pass), pass, reason, message);
  AfterFinish(pass);
}

void Suspend(Pass& pass) {
  const bool stopped = decide::StopSession(pass, Seal(pass), pass);
  if (!stopped && pass.Registered()) {
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
void TakeWrites(const DecideInput& in, TokenMemory& token, decide::JobSink& sink) {
  const WritesInFlight& writes = in.writes;
  if (writes.adopted_token && *writes.adopted_token != token.value) {
    // An earlier operator made this job's Secret before it could record the
    // job's start: the workers read that token, so the session takes it.
    token.value = *writes.adopted_token;
    if (sink.Registered()) sink.EndSession();
  }
}

// Takes the token to use: the one held, one the reconciler read from the
// job's Secret, or a fresh one whose Secret is still to be made.
void EnsureToken(const DecideInput& in, TokenMemory& token) {
  if (!token.value.empty()) return;
  if (in.secret_token) {
    token.value = *in.secret_token;
    return;
  }
  token.value = in.fresh_token;
}

// The job's session at the coordinator, or why there is none yet.
void Register(Pass& pass, const fuzzy::Profile& profile) {
  JobMemory& memory = pass.memory;
  auto registration =
      decide::Registration(pass, memory.token, memory.faults, memory.session, pass, profile);
  if (!registration) return;  // failed or pending: the pass said why
  pass.StartSession(std::move(*registration));
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
void RestoreConditions(const decide::PassView& view, decide::JobSink& sink) {
  if (!view.in.job.claims_finished || sink.status.Finished()) return;
  sink.RestateConditions();
  sink.Event(true, api::Reason::kConditionsRestored,
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

// A queued job's admission by Kueue (decide::Admission); once admitted, the
// pass places its spec on the admitted flavors and caps the nodes that join.
bool Admit(Pass& pass) {
  JobMemory& memory = pass.memory;
  auto admitted =
      decide::Admission(pass, memory.token, memory.faults, memory.announced, memory.kueue, pass);
  if (!admitted) return false;  // held, or stopped by Kueue
  pass.placed = std::move(admitted->placed);
  pass.node_limit = admitted->node_limit;
  return true;
}

// A running session: its pods, its outcome, a queued job's reclaimable pods,
// the status handed, and when to look again.
void RunSession(Pass& pass, std::optional<double> deadline, std::optional<double> started) {
  JobMemory& memory = pass.memory;
  const decide::PodCount count =
      decide::ManagePods(pass, memory.token, memory.faults, memory.session, pass.status, pass);
  decide::SessionOutcome(pass, memory.session, memory.clock, Seal(pass), pass, count);
  if (pass.in.queue) {
    decide::ReportReclaimable(pass, memory.session, memory.faults, memory.kueue, pass);
  }
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

void Run(Pass& pass) {
  JobMemory& memory = pass.memory;
  TakeWrites(pass.in, memory.token, pass);
  if (pass.status.Finished()) return AfterFinish(pass);
  RestoreConditions(pass, pass);
  const api::ParsedSpec& parsed = *pass.in.spec;
  if (!parsed.spec) return Fail(pass, parsed.error.reason, parsed.error.status.message());
  if (!pass.in.refusal.empty()) return Fail(pass, pass.in.refusal_reason, pass.in.refusal);
  if (auto refused =
          decide::TakeCreateOutcome(pass, memory.faults.create_backoff, pass.status, pass)) {
    return Fail(pass, api::Reason::kWorkerPodRefused, *refused);
  }
  if (pass.in.items_missing) return WaitForItems(pass, *pass.in.items_missing);
  memory.clock.items_missing_since.reset();
  if (!ItemsUnchanged(pass)) return;
  const auto deadline = pass.spec().job.active_deadline_s;
  const auto started = decide::ParseRfcTime(pass.status.start_time.value_or(""));
  if (deadline && started && pass.in.now.wall - *started > *deadline) {
    return Fail(pass, api::Reason::kDeadlineExceeded,
                fmt::format("the job ran longer than activeDeadlineSeconds ({:.0f} s)", *deadline));
  }
  std::optional<fuzzy::Profile> profile;
  if (!pass.Registered() && !(profile = ResolveProfile(pass))) return;
  EnsureToken(pass.in, memory.token);
  if (pass.spec().suspend) {
    Suspend(pass);
    // Its quota back to the queue.
    if (pass.in.queue) decide::SuspendWorkload(pass, memory.kueue, pass);
    return;
  }
  if (pass.in.queue && !Admit(pass)) return;  // held, or stopped by Kueue
  if (!pass.Registered()) return Register(pass, *profile);
  RunSession(pass, deadline, started);
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
