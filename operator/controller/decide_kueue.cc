// Decide's part for a job queued in Kueue (kueue.h; decide_internal.h).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "operator/controller/decide_internal.h"

namespace ballast::controller::decide {

namespace {

constexpr std::chrono::milliseconds kHeldRetry{10000};
constexpr std::chrono::milliseconds kLeavingRetry{500};

// What the Kueue steps take of the pass: its view, its sink, the Workload's
// patches (kueue), and what stopping the session reaches (the checkpoint's
// slice: the token, the faults, Announced) and forgetting the released nodes
// (the faults) when the Workload is gone.
struct Queued {
  const PassView& view;
  JobSink& sink;
  KueueMemory& kueue;
  const TokenMemory& token;
  NodeFaults& faults;
  Announced& announced;

  CheckpointSlice Seal() const { return {token, faults, announced}; }
};

// Patches the Workload's status (or, `status` false, the object), unless a
// patch against the version the cache shows is on its way already.
void Patch(KueueMemory& kueue, PassOut& out, const api::WorkloadView& workload,
           nlohmann::json patch, bool status = true) {
  if (kueue.patched_version == workload.resource_version) return;
  kueue.patched_version = workload.resource_version;
  out.actions.push_back(PatchWorkload{workload.meta.name, std::move(patch), status});
}

std::string Joined(const std::vector<std::string>& names) {
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ","));
}

// Makes the job's Workload: one pod set of as many pods as the job has
// nodes to run on now; returns true. No node: the job waits for one, as any
// job does (false).
bool RequestWorkload(const PassView& view, const NodeFaults& faults, JobSink& sink) {
  const Eligible eligible = EligibleNodes(view, faults);
  if (eligible.facts.empty()) {
    WaitForNodes(view, sink, eligible.excluded);
    return false;
  }
  const size_t nodes = eligible.facts.size();
  const QueueInput& queue = *view.in.queue;
  WorkerPodSettings settings = view.options.pods;
  settings.coordinator_job = view.in.id;
  sink.actions.push_back(CreateWorkload{BuildWorkload(view.in.job.meta, view.spec(), settings,
                                                      queue.queue, static_cast<int32_t>(nodes),
                                                      queue.priority_class, queue.priority)});
  // Until the Workload cache shows it, a create again is AlreadyExists.
  if (view.in.writes.workload_requested) return true;
  sink.Event(false, api::Reason::kWaitingForQueue,
             fmt::format("created Workload {} for {} workers in LocalQueue {}; the job starts "
                         "when Kueue admits it",
                         WorkloadName(view.in.name, view.uid), nodes, queue.queue));
  return true;
}

// The job waits for Kueue: Pending (Suspended once it was evicted, until it
// is admitted again), Ready and Admitted False, naming the queue, the
// Workload and what Kueue says.
void Hold(const PassView& view, JobSink& sink, api::Reason reason, const std::string& message) {
  api::WeightedJobStatus& status = sink.status;
  const bool suspended = status.Is(api::JobPhase::kSuspended);
  status.phase = suspended ? api::JobPhase::kSuspended : api::JobPhase::kPending;
  status.workers = 0;
  const auto& now = view.in.now.rfc3339;
  const int64_t generation = view.in.job.generation;
  // Why it waits goes out at once when it changes (not admitted yet,
  // evicted); Kueue's words within the status interval.
  const auto before = std::find_if(
      status.conditions.begin(), status.conditions.end(),
      [](const api::StatusCondition& c) { return c.type == api::ConditionType::kAdmitted; });
  sink.write_at_once |=
      before == status.conditions.end() || before->status || before->reason != reason;
  api::SetCondition(status, Condition(api::ConditionType::kReady, false, reason, message),
                    generation, now);
  api::SetCondition(status, Condition(api::ConditionType::kAdmitted, false, reason, message),
                    generation, now);
  sink.HandStatus(false);
  if (!sink.requeue_after) sink.requeue_after = kHeldRetry;
}

// Why Kueue has not admitted `workload` yet, in its own words.
std::string Waiting(const PassView& view, const api::WorkloadView* workload) {
  const std::string& queue = view.in.queue->queue;
  const std::string name = WorkloadName(view.in.name, view.uid);
  std::string message =
      fmt::format("waiting for Kueue to admit Workload {} in LocalQueue {}", name, queue);
  if (!workload) return message;
  const auto reserved = workload->conditions.find("QuotaReserved");
  if (reserved != workload->conditions.end() && !reserved->second.message.empty()) {
    message += ": " + reserved->second.message;
  } else if (workload->QuotaReserved()) {
    message += ": quota reserved in ClusterQueue " + workload->cluster_queue +
               ", waiting for its admission checks";
  }
  return message;
}

// Kueue took the admission back (Evicted: preempted, deactivated, ...):
// the job stops as for spec.suspend, keeping its checkpoint; once no pod is
// left the Workload's quota is handed back and the job waits to be admitted
// again.
void Evict(const Queued& q, const api::WorkloadView& workload) {
  const PassView& view = q.view;
  JobSink& sink = q.sink;
  const auto evicted = workload.conditions.find("Evicted");
  const std::string why =
      evicted != workload.conditions.end()
          ? fmt::format("{}: {}", evicted->second.reason, evicted->second.message)
          : "its admission was withdrawn";
  const bool was_running = sink.Registered();
  if (!StopSession(view, q.Seal(), sink)) {
    sink.requeue_after = kLeavingRetry;
    if (was_running) return;  // the workers hand back their leases first
  }
  // The checkpoint was taken from the session just removed: it goes out now.
  if (was_running) sink.write_at_once = true;
  const std::string message = fmt::format(
      "Kueue evicted Workload {} ({}); {} of {} items kept, the job resumes when it is "
      "admitted again",
      workload.meta.name, why, sink.status.completed_items.value_or(0),
      view.spec().job.workload.items);
  // A job that never started stays Pending: it has nothing to keep.
  if (sink.status.start_time && !sink.status.Is(api::JobPhase::kSuspended)) {
    sink.Transition(api::JobPhase::kSuspended, false, api::Reason::kEvicted, message);
    api::SetCondition(
        sink.status,
        Condition(api::ConditionType::kSuspended, true, api::Reason::kEvicted, message),
        view.in.job.generation, view.in.now.rfc3339);
  }
  if (view.OwnedPodsLeft()) {
    Hold(view, sink, api::Reason::kEvicted, message);
    return;
  }
  // Resuming tries every node again.
  if (ForgetGivenUp(sink.status)) sink.write_at_once = true;
  if (workload.QuotaReserved()) {
    Patch(q.kueue, sink, workload, ClearAdmissionPatch(workload, view.in.now.rfc3339));
  }
  Hold(view, sink, api::Reason::kEvicted, message);
}

// Kueue's words when Kueue itself deactivated `workload`: its Evicted
// condition's reason is DeactivatedDueTo<cause> (RequeuingLimitExceeded,
// MaximumExecutionTimeExceeded, EvictedByAdmissionCheck), where a Workload
// deactivated by its owner or by hand says Deactivated alone. "" otherwise.
std::string DeactivatedByKueue(const api::WorkloadView& workload) {
  const auto evicted = workload.conditions.find("Evicted");
  if (evicted == workload.conditions.end() || !evicted->second.status ||
      !evicted->second.reason.starts_with("DeactivatedDueTo")) {
    return "";
  }
  return fmt::format("{}: {}", evicted->second.reason, evicted->second.message);
}

// Admitted to a flavor no ResourceFlavor is (an admission written by hand,
// or one whose flavor the cache does not show): its nodes are not known,
// and placed on none of their labels the job would run anywhere, outside
// the quota it was admitted to. A job not started yet waits, saying so, and
// true is returned. (A running job keeps its pods; Kueue's finalizer keeps a
// flavor in use from going.)
bool HeldForUnknownFlavors(const PassView& view, JobSink& sink, const api::WorkloadView& workload) {
  const std::vector<api::FlavorView>& flavors = view.in.queue->flavors;
  std::vector<std::string> unknown;
  for (const std::string& name : workload.flavors) {
    const bool known =
        std::any_of(flavors.begin(), flavors.end(),
                    [&](const api::FlavorView& flavor) { return flavor.name == name; });
    if (!known) unknown.push_back(name);
  }
  if (unknown.empty() || sink.Registered() || view.OwnedPodsLeft()) return false;
  Hold(view, sink, api::Reason::kWaitingForQueue,
       fmt::format("Kueue admitted Workload {} to flavor {}, which no ResourceFlavor of the "
                   "cluster is: the nodes it stands for are not known, so the job does not "
                   "start (it would run on any node)",
                   workload.meta.name, Joined(unknown)));
  return true;
}

// The job of an inactive Workload: stopped first when it runs; then held
// when Kueue itself deactivated it, else queued again.
void Inactive(const Queued& q, const api::WorkloadView& workload) {
  // Deactivated under a running job (by hand, or by Kueue): it stops as
  // when evicted, keeping its checkpoint, rather than read as Pending
  // while its workers still compute.
  if (q.sink.Registered() || q.view.OwnedPodsLeft()) {
    Evict(q, workload);
    return;
  }
  // Deactivated by Kueue itself (its requeuing limit, a maximum execution
  // time, an admission check): Kueue's decision that the job may not run
  // now. Not undone: the job waits, saying why, until someone activates
  // the Workload again (as Kueue's own Job integration leaves such a Job
  // suspended).
  if (const std::string why = DeactivatedByKueue(workload); !why.empty()) {
    Hold(q.view, q.sink, api::Reason::kEvicted,
         fmt::format("Kueue deactivated Workload {} ({}); the job waits until its spec.active "
                     "is true again",
                     workload.meta.name, why));
    return;
  }
  // Deactivated while the job was suspended (or by hand): queued again.
  Patch(q.kueue, q.sink, workload, ActivePatch(workload, true), /*status=*/false);
  Hold(q.view, q.sink, api::Reason::kWaitingForQueue, Waiting(q.view, &workload));
}

// The job has no Workload of its own: none yet, one being deleted, or one
// of its name that is not its own. Deleted under a running job (or not made
// yet): the session stops, then a Workload is asked for.
void WithoutOwnWorkload(const Queued& q, const api::WorkloadView* workload) {
  JobSink& sink = q.sink;
  if (sink.Registered() || q.view.OwnedPodsLeft()) {
    if (!StopSession(q.view, q.Seal(), sink)) {
      sink.requeue_after = kLeavingRetry;
      return;
    }
  }
  // A new Workload counts no pod reclaimable: every node runs again.
  ForgetReleased(q.view, q.token, q.faults, sink.status);
  if (!workload && !RequestWorkload(q.view, q.faults, sink)) return;  // no node to run on
  // One of the job's Workload's name that does not name the job its owner
  // (made, or its owner reference edited, by hand): not the job's to use,
  // and while it is there the job's own cannot be made. Said, not waited
  // on in silence as if Kueue were slow.
  Hold(q.view, sink, api::Reason::kWaitingForQueue,
       workload && !workload->meta.deleting
           ? fmt::format("Workload {} is not this job's (its owner references do not name "
                         "the job: made or edited by hand?); the job makes its own once it "
                         "is deleted",
                         workload->meta.name)
           : Waiting(q.view, nullptr));
}

}  // namespace

std::optional<Admitted> Admission(const PassView& view, const TokenMemory& token,
                                  NodeFaults& faults, Announced& announced, KueueMemory& kueue,
                                  JobSink& sink) {
  const Queued q{view, sink, kueue, token, faults, announced};
  const QueueInput& queue = *view.in.queue;
  const api::WorkloadView* workload = queue.workload ? &*queue.workload : nullptr;
  const bool owned = workload && workload->meta.OwnedBy(view.uid) && !workload->meta.deleting;
  if (!owned) {
    WithoutOwnWorkload(q, workload);
    return std::nullopt;
  }
  if (!workload->active) {
    Inactive(q, *workload);
    return std::nullopt;
  }
  if (workload->Evicted() || !workload->Admitted()) {
    if (workload->Evicted() || sink.Registered() || view.OwnedPodsLeft()) {
      Evict(q, *workload);
      return std::nullopt;
    }
    Hold(view, sink, api::Reason::kWaitingForQueue, Waiting(view, workload));
    return std::nullopt;
  }
  if (HeldForUnknownFlavors(view, sink, *workload)) return std::nullopt;
  // Admitted: on the admitted flavors' nodes, within the admitted pods.
  Admitted admitted{PlaceOnFlavors(*view.in.spec->spec, queue.flavors),
                    static_cast<size_t>(std::max(0, workload->count - workload->reclaimable))};
  const std::string message =
      fmt::format("Kueue admitted Workload {} to ClusterQueue {} flavor {}", workload->meta.name,
                  workload->cluster_queue, Joined(workload->flavors));
  // The admission announced is the Admitted condition's, written at once:
  // neither a later pass nor a restarted operator says it again.
  api::WeightedJobStatus& status = sink.status;
  const auto before = std::find_if(
      status.conditions.begin(), status.conditions.end(),
      [](const api::StatusCondition& c) { return c.type == api::ConditionType::kAdmitted; });
  if (before == status.conditions.end() || !before->status || before->message != message) {
    sink.Event(false, api::Reason::kAdmitted, message);
    api::SetCondition(
        status, Condition(api::ConditionType::kAdmitted, true, api::Reason::kAdmitted, message),
        view.in.job.generation, view.in.now.rfc3339);
    sink.write_at_once = true;
  }
  return admitted;
}

void ReportReclaimable(const PassView& view, const SessionMemory& session, const NodeFaults& faults,
                       KueueMemory& kueue, JobSink& sink) {
  const QueueInput& queue = *view.in.queue;
  if (!queue.workload || !sink.Registered() || !view.in.view) return;
  const api::WorkloadView& workload = *queue.workload;
  // The workers that may still compute: the session's, less those given up,
  // those whose pod finished (the job is done with them: at its end, or
  // released in its tail) and those released whose pod is gone. A worker an
  // earlier session released is not in this one (NodeFault::released).
  std::set<std::string_view> given_up;  // in this pass too
  for (const auto& row : sink.status.excluded_nodes) {
    if (!ArchitectureRow(row)) given_up.insert(row.name);
  }
  int32_t needed = 0;
  for (const std::string& node : session.Nodes()) {
    if (given_up.contains(node)) continue;
    const api::PodView* pod = view.WorkerPod(node);
    const bool owned = pod && pod->meta.OwnedBy(view.uid);
    if (owned && pod->phase == api::PodPhase::kSucceeded) continue;
    if (!owned && faults.Released(node)) continue;
    ++needed;
  }
  const int32_t reclaimable = std::max(0, workload.count - needed);
  // Kueue refuses a count that goes down while admitted.
  if (reclaimable <= workload.reclaimable) return;
  Patch(kueue, sink, workload, ReclaimablePatch(workload, reclaimable));
}

void SuspendWorkload(const PassView& view, KueueMemory& kueue, JobSink& sink) {
  const QueueInput& queue = *view.in.queue;
  if (!queue.workload || !queue.workload->meta.OwnedBy(view.uid)) return;
  if (sink.Registered() || view.OwnedPodsLeft()) return;  // still stopping
  const api::WorkloadView& workload = *queue.workload;
  if (workload.active) {
    Patch(kueue, sink, workload, ActivePatch(workload, false), /*status=*/false);
  } else if (workload.Evicted() && workload.QuotaReserved()) {
    Patch(kueue, sink, workload, ClearAdmissionPatch(workload, view.in.now.rfc3339));
  }
  api::WeightedJobStatus& status = sink.status;
  const auto before = std::find_if(
      status.conditions.begin(), status.conditions.end(),
      [](const api::StatusCondition& c) { return c.type == api::ConditionType::kAdmitted; });
  if (before != status.conditions.end() && !before->status &&
      before->reason == api::Reason::kSuspendedByUser) {
    return;
  }
  api::SetCondition(
      status,
      Condition(api::ConditionType::kAdmitted, false, api::Reason::kSuspendedByUser,
                fmt::format("the job is suspended: its Workload {} is deactivated and its "
                            "quota goes back to the queue",
                            workload.meta.name)),
      view.in.job.generation, view.in.now.rfc3339);
  sink.write_at_once = true;
  sink.HandStatus(false);
}

void FinishWorkload(const PassView& view, const api::WeightedJobStatus& status, KueueMemory& kueue,
                    PassOut& out) {
  const QueueInput& queue = *view.in.queue;
  if (!queue.workload || queue.workload->Finished()) return;
  if (!queue.workload->meta.OwnedBy(view.uid)) return;
  const bool succeeded = status.Is(api::JobPhase::kSucceeded);
  std::string message = succeeded ? "the WeightedJob succeeded" : "the WeightedJob failed";
  for (const api::StatusCondition& condition : status.conditions) {
    if (condition.type == api::ConditionType::kFailed && condition.status) {
      message += ": " + condition.message;
    }
  }
  Patch(kueue, out, *queue.workload,
        FinishPatch(*queue.workload, succeeded, message, view.in.now.rfc3339));
}

}  // namespace ballast::controller::decide
