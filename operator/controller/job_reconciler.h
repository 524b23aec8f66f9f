// JobReconciler: the level-triggered reconciler of WeightedJobs. Each pass
// reads the job, its pods, the nodes and the profile from the informers'
// caches and the coordinator's view of the job, and makes the world match:
//
//   spec invalid / profile missing  -> Failed (InvalidSpec, InvalidPolicy,
//                                       ProfileNotFound, InvalidProfile), the
//                                       message naming the field's path
//                                       (weighted_job.h, fuzzy/profile_json.h)
//   the API server refuses the job's -> Failed (WorkerPodRefused,
//   pods or Secret (Invalid)            TokenSecretUnusable): retrying the
//                                       same objects cannot help
//   no session at the coordinator   -> weigh the eligible nodes with the
//                                       profile and register the job (resuming
//                                       from status.checkpoint when there is one)
//   a node's pod missing            -> create it (deterministic name, owned by
//                                       the job, affinity to the node)
//   a pod Failed                    -> the worker is lost (its work returns to
//                                       the pool), the pod is deleted and made
//                                       again while failures <= backoffLimit
//   a node not Ready                -> the worker is lost, its pod deleted
//   spec.suspend                    -> checkpoint, forget the session, delete
//                                       the pods; phase Suspended
//   all items finished              -> Complete, with the efficiency measured
//                                       and, when every node declares a speed,
//                                       nominal (job_efficiency.h); the session
//                                       lingers while the pods exit, then is
//                                       forgotten
//   past activeDeadlineSeconds      -> Failed (DeadlineExceeded), pods deleted
//   finished + ttlSecondsAfterFinished -> the job is deleted
//
// and writes status (conditions, per-node table, progress, result, the
// checkpoint) when it changed: at once when the phase or a condition moved,
// otherwise at most every status_interval. The checkpoint in status is what a
// restarted operator resumes from.
//
// A pass never waits for the API server on its hot path: a new job's token
// Secret and its pods, and every status write, go to a pool of writer
// threads. A job has at most one create task and one status task in flight;
// while its create task runs, and until the pod cache shows what it created,
// its passes create nothing more (no duplicate requests); the status task
// always writes the newest status a pass handed it. A task that failed
// queues the job again (`requeue`) and makes its next pass fail with the
// task's error, so the driver's backoff and logging apply as to any failed
// pass (an Invalid or Terminal error is not retried: common/status.h); created pods queue the job
// through the pod cache. Deletes (failed pods, suspend, TTL) and a restarted operator's reading of
// an existing Secret stay in the pass: they are rare.
//
// Thread-safety: Reconcile may run on several threads for different keys at
// once (the work queue never hands one key to two workers).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "coordinator/job_host.h"
#include "fuzzy/profile.h"
#include "operator/controller/event_recorder.h"
#include "operator/controller/worker_objects.h"
#include "operator/kube/client.h"
#include "operator/kube/informer.h"

namespace ballast::controller {

struct ReconcilerOptions {
  // coordinator_url, default image and metrics port of every worker pod.
  WorkerPodSettings pods;
  // A running job's status (and checkpoint) is written at most this often,
  // unless its phase or a condition changed.
  std::chrono::milliseconds status_interval{2000};
  // A worker pod that has not reported this long after registration is lost.
  double start_timeout_s = 120;
  // A finished job stays at the coordinator this long at most while its pods
  // learn that it is done and exit.
  std::chrono::milliseconds linger{30000};
  // Threads that send a pass's writes (Secret, pods, status).
  int write_threads = 4;
  // Called from a writer thread when a job's write task failed (or found
  // another token), so the job is looked at again: the driver queues the
  // key. May be empty.
  std::function<void(const std::string& key)> requeue;
};

// The informer caches a reconciler reads; they must outlive it.
struct Caches {
  const kube::Informer& jobs;
  const kube::Informer& pods;  // indexed by the job label (kJobLabel)
  const kube::Informer& nodes;
  const kube::Informer& profiles;
};

struct ReconcileResult {
  // Look again after this long (nullopt: only when something changes).
  std::optional<std::chrono::milliseconds> requeue_after;
};

class JobReconciler {
 public:
  // Every reference must outlive the reconciler.
  JobReconciler(kube::KubeClient& client, coordinator::JobHost& coordinator, Caches caches,
                EventRecorder& events, ReconcilerOptions options);
  ~JobReconciler();
  JobReconciler(const JobReconciler&) = delete;
  JobReconciler& operator=(const JobReconciler&) = delete;

  // One pass over the job `key` ("namespace/name"). Returns when to look
  // again, or an error: Unavailable, Conflict, NotFound (an API request that
  // failed) the driver retries with backoff; Invalid or Terminal (a request
  // the API server refuses as it is, an object that cannot be read) it logs
  // once and does not retry. Never throws.
  StatusOr<ReconcileResult> Reconcile(const std::string& key);

  // The coordinator's id of a job: "<namespace>.<name>" (a namespace has no
  // dots, so it is unambiguous, and it is safe in a URL path).
  static std::string CoordinatorJobId(const std::string& ns, const std::string& name);

  // Jobs the reconciler holds state for (registered or finishing).
  size_t TrackedJobs() const;

  struct JobState;
  struct Pass;
  struct Writes;

 private:
  StatusOr<ReconcileResult> Run(Pass& pass);
  StatusOr<ReconcileResult> Fail(Pass& pass, const std::string& reason, const std::string& message);
  StatusOr<ReconcileResult> AfterFinish(Pass& pass);
  StatusOr<ReconcileResult> Suspend(Pass& pass);
  Status EnsureToken(Pass& pass);
  // Takes what the job's write tasks left for this pass: their errors, a
  // Secret created, a token adopted from an existing Secret of this job.
  Status TakeWriteResults(Pass& pass);
  // Creates the job's token Secret `secret` (holding `token`) in `ns`, or
  // finds it made already: the token in effect, which differs from `token`
  // when an earlier operator of this job created the Secret. Deletes a
  // Secret of this name that an earlier job left, and reports Unavailable.
  StatusOr<std::string> CreateOrReadSecret(const std::string& ns, const nlohmann::json& secret,
                                           const std::string& uid, const std::string& token);
  // Hands the Secret (if still to be made) and `pods` to a writer thread.
  void SubmitCreates(Pass& pass, std::vector<nlohmann::json> pods);
  // The task SubmitCreates hands over, on a writer thread.
  void RunCreates(const std::string& key, const std::string& ns, const std::string& uid,
                  const std::string& token, const std::optional<nlohmann::json>& secret,
                  const std::vector<nlohmann::json>& pods, Writes& writes);
  // Hands `status` to the job's status task, starting one if none runs.
  void SubmitStatus(Pass& pass);
  void WriteStatuses(const std::string& key, const kube::ResourceRef& ref,
                     std::shared_ptr<Writes> writes);
  StatusOr<fuzzy::Profile> ResolveProfile(Pass& pass);
  Status Register(Pass& pass, const fuzzy::Profile& profile);
  Status ManagePods(Pass& pass);
  // Creates `pods` in namespace `ns`, several at once; the first error.
  Status CreatePods(const std::string& ns, const std::vector<nlohmann::json>& pods);
  Status WriteStatus(Pass& pass, bool force);
  void Transition(Pass& pass, const std::string& phase, bool warning, const std::string& reason,
                  const std::string& message);
  Status DeletePods(Pass& pass);
  kube::ObjectPtr PodOf(const Pass& pass, const std::string& node) const;
  void Forget(const std::string& key);
  JobState& StateFor(const std::string& key, const nlohmann::json& job);

  kube::KubeClient& client_;
  coordinator::JobHost& coordinator_;
  const Caches caches_;
  EventRecorder& events_;
  const ReconcilerOptions options_;

  mutable std::mutex mu_;  // guards the map; a JobState is used by one worker at a time
  std::map<std::string, std::unique_ptr<JobState>> states_;

  struct WritePool;
  std::unique_ptr<WritePool> writers_;  // last: joined first, while the rest is alive
};

}  // namespace ballast::controller
