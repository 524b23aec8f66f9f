// Executor: carries out the actions Decide (decide.h) returns for a job —
// the coordinator's part through the narrow coordinator::JobHost, the API
// server's through the KubeClient, events through the EventRecorder — and
// keeps what lives between passes of a job's writes: the pool of writer
// threads and the create expectations.
//
// A pass never waits for the API server on its hot path: CreateObjects (the
// token Secret, then the pods, several at once) and WriteStatus go to the
// writer pool. A job has at most one create task and one status task in
// flight; pods a task created are "on their way" until the pod cache shows
// them (or 30 s pass), and are not created again meanwhile; the status task
// always writes the newest status handed over, as a merge patch against the
// last one the API server acknowledged. A create task stops after the first
// batch of pods with a refusal. What a task left — an error, a Secret made,
// a token found in an existing Secret, every pod made — is collected by the
// job's next pass (Collect). A task that failed, or found another token,
// calls `requeue` so that the job has a next pass. Deletes, registration and
// events run in the pass: they are rare or do not wait.
//
// Thread-safety: every method may be called from several threads for
// different jobs at once; one job's methods are called by one thread at a
// time (the work queue's guarantee).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "coordinator/job_host.h"
#include "core/common/status.h"
#include "net/kube/client.h"
#include "operator/controller/decide.h"
#include "operator/runtime/event_recorder.h"

namespace ballast::runtime {

// Which job the actions are for.
struct JobRef {
  std::string key;  // "namespace/name": what `requeue` gets
  std::string ns, name, uid;
  std::string id;                       // at the coordinator
  const nlohmann::json* job = nullptr;  // the object, for events
};

// What the job's write tasks left since the last Collect.
struct Collected {
  controller::WritesInFlight writes;
  Status create_error;  // the last create task's failure
  Status status_error;  // the last status task's failure (the task is handed again)
};

class Executor {
 public:
  // References must outlive the executor. `requeue` (may be empty) is called
  // from a writer thread when a task failed or found another token.
  Executor(kube::KubeClient& client, coordinator::JobHost& coordinator, EventRecorder& events,
           int write_threads, std::function<void(const std::string& key)> requeue);
  ~Executor();  // runs the queued tasks, then joins
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // The job's writes in flight and what its tasks left; `cached_pods` are
  // the names of the job's pods the pod cache holds (an expectation ends
  // when its pod is there, or after 30 s). A status write that failed
  // transiently is handed to a task again.
  Collected Collect(const std::string& key, const std::set<std::string>& cached_pods,
                    controller::SteadyTime now);

  // Carries out `actions` in order. Returns the first error that the pass
  // must report: AddJob's (after a Conflict it removes and adds again), or a
  // delete's other than NotFound (and Conflict, for a uid precondition).
  // WorkerLost of an unknown worker, and events, are best effort.
  Status Execute(const JobRef& job, const std::vector<controller::Action>& actions);

  // Creates the job's token Secret `secret` holding `token`, or reads the
  // existing one of this job: the token in effect, and from then on the job
  // `key`'s writes report the Secret as existing. Unavailable after deleting
  // a Secret of this name an earlier job left; Invalid when the Secret holds
  // no token. Waits for the API server (a restarted operator's first pass).
  StatusOr<std::string> CreateOrReadSecret(const std::string& key, const std::string& ns,
                                           const nlohmann::json& secret, const std::string& uid,
                                           const std::string& token);

  // Forgets the job's writes (it was deleted, or created again under its name).
  void Forget(const std::string& key);

  // The status the API server has for the job, as far as this executor
  // knows; seeds a job seen the first time.
  void Seed(const std::string& key, const nlohmann::json& status);

  struct Writes;

 private:
  std::shared_ptr<Writes> WritesOf(const std::string& key);
  void SubmitCreates(const JobRef& job, const controller::CreateObjects& create);
  void RunCreates(const std::string& key, const std::string& ns, const std::string& uid,
                  const controller::CreateObjects& create, Writes& writes);
  // Creates `pods` in batches until a batch has a failure (returned, the
  // first); made[i] tells whether pods[i] was made (or exists: Conflict).
  Status CreatePods(const std::string& ns, const std::vector<nlohmann::json>& pods,
                    std::vector<bool>& made);
  void SubmitStatus(const std::string& key, const std::string& ns, const std::string& name,
                    const nlohmann::json& status, bool restate_conditions);
  void WriteStatuses(const std::string& key, const kube::ResourceRef& ref,
                     std::shared_ptr<Writes> writes);
  Status Register(const coordinator::JobConfig& config);
  // CreateOrReadSecret without marking the job's writes.
  StatusOr<std::string> MakeOrReadSecret(const std::string& ns, const nlohmann::json& secret,
                                         const std::string& uid, const std::string& token);
  Status DeleteObject(const kube::ResourceRef& ref, const std::string& uid, bool background);
  // The Event of `record`, on the job or on the node it names.
  void Record(const JobRef& job, const controller::RecordEvent& record);
  // Kueue's Workload of the job: created, or patched (its status or its
  // object); what the next pass cannot mend alone is returned.
  Status CreateWorkloadOf(const JobRef& job, const controller::CreateWorkload& create);
  Status Patch(const JobRef& job, const controller::PatchWorkload& patch);

  kube::KubeClient& client_;
  coordinator::JobHost& coordinator_;
  EventRecorder& events_;
  const std::function<void(const std::string&)> requeue_;

  std::mutex mu_;  // guards the map
  std::map<std::string, std::shared_ptr<Writes>> writes_;

  struct Pool;
  std::unique_ptr<Pool> pool_;  // last: joined first, while the rest is alive
};

}  // namespace ballast::runtime
