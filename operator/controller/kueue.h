// Kueue: a WeightedJob labelled kueue.x-k8s.io/queue-name is admitted by
// Kueue (the admission controller of shared clusters: quotas, priorities,
// preemption) before it runs. The operator plays the part a job framework's
// integration plays in Kueue — WeightedJob is one of Kueue's
// integrations.externalFrameworks — and speaks to Kueue only through the
// job's Workload (kueue.x-k8s.io/v1beta2), which it creates and owns:
//
//   no Workload yet              -> CreateWorkload: one pod set "workers", its
//                                   count the nodes the job would run on, its
//                                   template the worker pod's requests,
//                                   selector and tolerations; the job held
//                                   (no session, no pods), Admitted False
//                                   (WaitingForQueue) naming the queue
//   not admitted                 -> held, saying why Kueue waits (its QuotaReserved
//                                   condition's message)
//   Admitted True                -> the admitted flavors' nodeLabels and
//                                   tolerations merged into the job's node choice
//                                   (PlaceOnFlavors); the job starts, or resumes
//   running                      -> status.reclaimablePods: the pod set's count
//                                   less the workers that may still compute (a
//                                   node the flavor leaves out, a worker given up,
//                                   a worker pod that finished); never lowered
//   Evicted True (preempted,     -> the job suspended as for spec.suspend: pods
//     deactivated, ...)             deleted, the checkpoint kept; then the
//                                   Workload's admission cleared (QuotaReserved
//                                   False, Requeued True), as Kueue's own job
//                                   integrations do; it resumes, exact, when
//                                   admitted again
//   finished                     -> the Workload's Finished condition (Succeeded
//                                   or Failed): Kueue releases the quota
//   spec.suspend                 -> once the job stopped, its Workload deactivated
//                                   (spec.active false): Kueue evicts it, and its
//                                   quota is handed back as above; activated
//                                   again when the job is resumed
//   job deleted                  -> the Workload goes with it (owner reference)
//
// The decisions are Decide's (decide_kueue.cc); the typed views of Kueue's
// objects the reconciler reads are the model's (operator/api/kueue_views.h);
// this file holds what Decide sees of a job's queueing and the pure builders
// of what the operator writes.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/api/kube_views.h"
#include "operator/api/kueue_views.h"
#include "operator/api/weighted_job.h"
#include "operator/controller/worker_objects.h"

namespace ballast::controller {

// What Decide sees of a job's queueing (DecideInput::queue; nullopt: the job
// is not queued, or the operator runs without --kueue).
struct QueueInput {
  std::string queue;                          // the LocalQueue (the label's value)
  std::optional<api::WorkloadView> workload;  // the job's own Workload; nullopt: none yet
  // The admitted flavors (WorkloadView::flavors) as read; one that does not
  // exist is missing here.
  std::vector<api::FlavorView> flavors;
  // The WorkloadPriorityClass the job names (kPriorityClassLabel) and its
  // value, when the reconciler read one (only while no Workload exists).
  std::string priority_class;
  std::optional<int32_t> priority;
};

// The name of the Workload of job `job_name` (of metadata.uid `uid`):
// "weightedjob-NAME-UID5", within 253 characters. The uid's first five
// characters tell a job from an earlier one of its name.
std::string WorkloadName(const std::string& job_name, const std::string& uid);

// The Workload of the job `job` (queued in `queue`) whose workers run on
// `count` nodes: one pod set kWorkerPodSet of `count` pods whose template is
// the worker pod's as the scheduler and Kueue see it (requests and limits,
// nodeSelector, tolerations, required node affinity, priorityClassName), the
// job's controller owner reference and the label ballast.io/job.
// `priority_class`/`priority`: the WorkloadPriorityClass, when the job names
// one that exists.
nlohmann::json BuildWorkload(const api::ObjectMeta& job, const api::WeightedJobSpec& spec,
                             const WorkerPodSettings& settings, const std::string& queue,
                             int32_t count, const std::string& priority_class,
                             std::optional<int32_t> priority);

// `spec` with the flavors' nodeLabels added to its node selector (a key the
// job selects already keeps the job's value: Kueue admits only to a flavor
// whose labels agree with it) and their tolerations appended, in the template
// and in its parsed fields: the nodes the job may run on once admitted.
api::WeightedJobSpec PlaceOnFlavors(api::WeightedJobSpec spec,
                                    const std::vector<api::FlavorView>& flavors);

// `conditions` (a Workload's status.conditions) with the condition `type`
// set: status, reason, message, observedGeneration `generation`;
// lastTransitionTime `now` when it is new or its status flips.
nlohmann::json WithCondition(nlohmann::json conditions, const std::string& type, bool status,
                             const std::string& reason, const std::string& message,
                             int64_t generation, const std::string& now);

// The status patch that hands an evicted Workload's quota back, as Kueue's
// job integrations do once their job stopped: admission cleared,
// QuotaReserved and Admitted False, Requeued True (the Workload queues again)
// unless Kueue deactivated it. Conditional on `workload`'s resourceVersion.
nlohmann::json ClearAdmissionPatch(const api::WorkloadView& workload, const std::string& now);
// The status patch that declares the Workload finished (Finished True,
// reason Succeeded or Failed).
nlohmann::json FinishPatch(const api::WorkloadView& workload, bool succeeded,
                           const std::string& message, const std::string& now);
// The status patch setting status.reclaimablePods[workers] to `count`.
nlohmann::json ReclaimablePatch(const api::WorkloadView& workload, int32_t count);
// The patch of the Workload (not its status) setting spec.active: false
// has Kueue evict it and keep it out of its queue (a suspended job), true
// queues it again.
nlohmann::json ActivePatch(const api::WorkloadView& workload, bool active);

}  // namespace ballast::controller
