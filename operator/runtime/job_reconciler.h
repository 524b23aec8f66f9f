// JobReconciler: the level-triggered reconciler of WeightedJobs, in three
// steps per pass:
//
//   gather   the job (its spec parsed once per generation:
//            weighted_job.h), its pods, the nodes and the profile from the
//            informers' caches; the coordinator's view and checkpoint of the
//            job; what the job's writes in flight left (Executor::Collect);
//            for a job that started under an earlier operator, the token its
//            Secret holds
//   decide   Decide (decide.h): pure; the status the job should have, the
//            memory for the next pass, the actions
//   execute  Executor::Execute (executor.h): the coordinator's and the API
//            server's part of the actions; creates and status writes go to
//            its writer pool, so a pass never waits for them
//
// What Decide does in each state, and why: docs/operator.md, "What the operator does with a job".
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

#include "coordinator/job_host.h"
#include "core/common/status.h"
#include "core/history/history_source.h"
#include "net/kube/client.h"
#include "net/kube/informer.h"
#include "operator/controller/decide.h"
#include "operator/controller/worker_objects.h"
#include "operator/runtime/event_recorder.h"
#include "operator/runtime/executor.h"

namespace ballast::runtime {

struct ReconcilerOptions {
  // What every pass decides with (decide.h): the worker pods' settings, the
  // status pacing, the timeouts, the history prior's trust, the backoff of
  // refused creates.
  controller::DecideOptions decide;
  // Where the history of measured speeds comes from (history_source.h);
  // null: every job starts on the fuzzy weights alone. Looked up for a job
  // about to start a session; told what a succeeded job measured.
  std::shared_ptr<history::HistorySource> history;
  // Threads that send a pass's writes (Secret, pods, status).
  int write_threads = 4;
  // Called from a writer thread when a job's write task failed (or found
  // another token), so the job is looked at again: the driver queues the
  // key. May be empty.
  std::function<void(const std::string& key)> requeue;
  // Admit jobs labelled kueue.x-k8s.io/queue-name through Kueue (kueue.h):
  // the caches of Workloads and ResourceFlavors must be given.
  bool kueue = false;
};

// The informer caches a reconciler reads; they must outlive it.
struct Caches {
  const kube::Informer& jobs;
  const kube::Informer& pods;  // indexed by the job label (kJobLabel)
  const kube::Informer& nodes;
  const kube::Informer& profiles;
  // With ReconcilerOptions::kueue: Workloads (indexed by the job label) and
  // ResourceFlavors; null otherwise.
  const kube::Informer* workloads = nullptr;
  const kube::Informer* flavors = nullptr;
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
  // `flush_status`: the operator is stopping; the pass hands a running
  // job's status (and checkpoint) to the writer whatever the pacing, and
  // destroying the reconciler writes it.
  StatusOr<ReconcileResult> Reconcile(const std::string& key, bool flush_status = false);

  // The coordinator's id of a job: "<namespace>.<name>" (a namespace has no
  // dots, so it is unambiguous, and it is safe in a URL path).
  static std::string CoordinatorJobId(const std::string& ns, const std::string& name);
  // The work queue's key ("namespace/name") of a coordinator job id: a
  // namespace holds no '.', so the first one ends it.
  static std::string KeyOfCoordinatorJobId(const std::string& id);

  // Jobs the reconciler holds state for (registered or finishing).
  size_t TrackedJobs() const;

  struct JobState;

 private:
  // One pass over the job `job` (as cached; `view` read from it).
  StatusOr<ReconcileResult> RunPass(const std::string& key, const nlohmann::json& job,
                                    const api::JobView& view, JobState& state, bool flush_status);
  // The inputs of Decide that come from the caches and the coordinator.
  void GatherWorld(const JobState& state, controller::DecideInput& input) const;
  // input.writes and input.create_refusal: what the executor's writes of the
  // job `key` came to since the last pass (a status write that failed is
  // returned).
  Status GatherWrites(const std::string& key, controller::DecideInput& input);
  // input.queue, for a job labelled kueue.x-k8s.io/queue-name (with --kueue):
  // its Workload and admitted flavors from the caches, and the value of the
  // WorkloadPriorityClass it names while it has no Workload (a request that
  // failed is returned).
  Status GatherQueue(const JobState& state, controller::DecideInput& input) const;
  // input.history, for a job about to start a session.
  void LookUpHistory(const JobState& state, controller::DecideInput& input) const;
  // Hands the RecordSpeeds among `actions` to the history source.
  void RecordHistory(const std::string& key, const std::vector<controller::Action>& actions) const;
  // The token in the job's Secret, for a job that started under an earlier
  // operator; sets input.refusal when the Secret cannot be used.
  Status ReadToken(const std::string& key, const JobState& state, controller::DecideInput& input);
  // A job whose items are a ConfigMap's key (spec.itemsFrom.configMap):
  // reads them into state.spec, once per generation. A ConfigMap or key that
  // does not exist, or a list that does not read, makes the spec invalid
  // (InvalidSpec naming the ConfigMap, the key and the line), as a missing
  // WeightProfile fails the job; a request that failed is returned (retried).
  Status ReadListedItems(const std::string& ns, JobState& state, controller::DecideInput& input);
  void Forget(const std::string& key);
  // The state of the job `key` (of metadata.uid `uid`), made from the job's
  // status when it is seen the first time (or created again); Invalid naming
  // a status field of the wrong type.
  StatusOr<JobState*> StateFor(const std::string& key, const nlohmann::json& job,
                               const std::string& uid);

  kube::KubeClient& client_;
  coordinator::JobHost& coordinator_;
  const Caches caches_;
  const ReconcilerOptions options_;

  mutable std::mutex mu_;  // guards the map; a JobState is used by one worker at a time
  std::map<std::string, std::unique_ptr<JobState>> states_;

  Executor executor_;  // last: its writer pool is joined first, while the rest is alive
};

}  // namespace ballast::runtime
