// Decide: what the operator does with one WeightedJob, as a pure function of
// what it sees — the job and its parsed spec, the job's pods, the nodes (as
// typed views, kube_views.h, which the reconciler reads from the API
// server's JSON), the WeightProfile, the coordinator's view of the job, the
// writes still in flight and the time — and of what it remembers from
// earlier passes (JobMemory). It returns the status the job should have,
// the memory for the next pass, and the actions that make the world match
// (plain data, carried out by the Executor). No I/O, no clock, no
// randomness of its own: `now` and a fresh token are inputs, so tests are
// exact and take microseconds.
//
// What it does in each state of the job — the job's state machine — is
// written once, in docs/operator.md, "What the operator does with a job"
// (and, for the priors and the nodes' baselines, in that page's "History as
// the prior"). Which decide*.cc file decides which part, and the actions
// below: docs/operator-internals.md, "Decide's files".
//
// Thread-safety: a pure function.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "coordinator/job_types.h"
#include "coordinator/recorded_speeds.h"
#include "core/fuzzy/history_prior.h"
#include "core/fuzzy/model.h"
#include "core/health/deviation.h"
#include "core/history/history_source.h"
#include "operator/api/kube_views.h"
#include "operator/api/weighted_job.h"
#include "operator/controller/architectures.h"
#include "operator/controller/create_refusals.h"
#include "operator/controller/job_efficiency.h"
#include "operator/controller/kueue.h"
#include "operator/controller/status_pacing.h"
#include "operator/controller/worker_objects.h"

namespace ballast::controller {

// The time of a pass, in the three forms it is used in.
struct PassTime {
  double wall = 0;      // seconds since the epoch (deadlines, TTL)
  SteadyTime steady{};  // status pacing, linger
  std::string rfc3339;  // conditions, startTime, completionTime
};

// What the operator remembers of a job between passes: only what no view
// or status gives back. Everything else (the pods, the nodes, the session's
// progress, the phase, whether the coordinator runs a session: in.view, and
// what the Executor wrote for the job: in.writes) is read again each pass;
// docs/operator-internals.md tables what is kept where. Each part has one owner
// among the decision's steps (decide_internal.h); a restarted operator
// builds it from the job's status by MemoryFromStatus, then at registration
// from what is sealed beside the checkpoint (RestoreSealed).

// The job's token, which its workers read from its Secret (decide.cc:
// TakeWrites, EnsureToken). Whether that Secret exists yet is the
// Executor's to say (WritesInFlight::secret_exists). Kept: reading it
// back is an API request, made once (JobReconciler::ReadToken, after a restart).
struct TokenMemory {
  std::string value;  // "" until made or read
};

// What the job's session knows of one node (SessionMemory::nodes): its
// worker when the node is in the session, and what the session counts on
// from before it started. A node may have a record and no worker: one an
// earlier session of the job ran on (its items) or one the history knows
// (its baseline), which may join the session mid-job (decide_join.cc).
struct SessionNode {
  std::string name;
  // Its worker in the session: its weight (status.nodes[].weight), the
  // reference its efficiency is measured with (job_efficiency.h) and its
  // prior (status.nodes[].prior).
  struct Worker {
    fuzzy::NodeWeight weight;
    NodeReference reference;
    api::NodePriorRow prior;
  };
  std::optional<Worker> worker;  // nullopt: not in the session (yet)
  // Its items before the session: status.nodes[].items at registration. A
  // node an earlier session ran on and this one does not loses its row in
  // status (a row goes with its worker); its items stay here, so that its
  // row counts on from them should it join.
  uint64_t items_before = 0;
  // What the history said of it at registration (input.history; of its
  // entries the one JudgeDeviations judges against, health/deviation.h):
  // its baseline when the job succeeds.
  std::optional<fuzzy::NodeHistory> baseline;
};

// The job's session at the coordinator (decide_register.cc starts it,
// decide_join.cc adds the nodes that join mid-job).
// Whether the coordinator runs it is not kept: the coordinator's view says
// (DecideInput::view; the Executor registers a session before the next pass).
struct SessionMemory {
  // One record per node it knows: its workers first, in session order (by
  // name at registration, then as they joined), then the others. Empty for
  // a session an earlier operator started (no baseline: nothing is judged).
  // Kept: made at registration from the profile and the history, which may
  // have changed since; status.nodes rounds the weights and drops a row
  // with its worker.
  std::vector<SessionNode> nodes;
  // Kept: no view or status says either (status.startTime is the job's
  // start, not this session's; the coordinator's times are its own clock's).
  bool resumed = false;        // started from a checkpoint
  double registered_wall = 0;  // when it started, seconds since the epoch

  // Its workers' nodes, in session order.
  std::vector<std::string> Nodes() const;
  size_t NodeCount() const;
  // The record of `name`; nullptr when there is none.
  const SessionNode* Find(std::string_view name) const;
  SessionNode* Find(std::string_view name);
  // The baseline of every node that has one (JudgeDeviations' history).
  std::vector<fuzzy::NodeHistory> Baseline() const;
};

// What the decision keeps of one node's worker (NodeFaults::nodes): the
// faults it saw there, the events it said once about them, and whether the
// session released it. A node with nothing to keep has no record. Kept: the
// views show a fault while it lasts, not that it was counted or said.
struct NodeFault {
  // Why its worker was declared lost (WorkerLost), said once: its node is not
  // Ready or gone (NodeNotReady), or no longer one the job is placed on
  // (NodeLeft). Ends when the node can run the worker again (NodeReady,
  // NodeEligible: which of the two says why it was lost).
  enum class Lost { kNo, kNotReady, kLeft };
  Lost lost = Lost::kNo;
  // Its worker declared lost while the job's creates are refused and its pod
  // is missing (LoseRefusedWorkers); ends once its pod exists. Kept apart
  // from `lost`: a node can be both, and each ends by its own rule.
  bool refused = false;
  std::string counted_failure;  // uid of its last failed pod counted against backoffLimit
  // Its pod waiting for what it needs to start (WatchImage), and since when.
  struct ImageWait {
    std::string pod_uid;
    SteadyTime since{};
    bool operator==(const ImageWait&) const = default;
  };
  std::optional<ImageWait> image_wait;
  // A pod that mounts the worker's bundle as an image volume could not start
  // its containers here (worker_bundle.h): the job's later pods on the node
  // copy it with the init container. Not kept across a restart: a restarted
  // operator tries the image volume once more.
  bool image_volume_refused = false;
  bool unreachable_said = false;  // a CoordinatorUnreachable event
  // A queued job's session released its worker in the job's tail
  // (coordinator/idle_release.h): its pod exited 0 and its quota is
  // reclaimable; no pod is made there again while the job's Workload lives
  // (its reclaimablePods keep it: through a restart, a suspension or an
  // eviction). Sealed beside the checkpoint (claims.releasedNodes), which is
  // where a restarted operator reads it back (RestoreSealed).
  bool released = false;

  bool operator==(const NodeFault&) const = default;
};

// What became of the job's nodes and pods (decide_nodes.cc; their faults:
// decide_faults.cc, decide_refusals.cc; released nodes: decide_claims.cc).
// The pod failures counted against backoffLimit (status.failedPods), the
// nodes skipped for their architecture and those whose worker was given up
// (status.excludedNodes) are not here: the status holds them, and a pass
// reads them from the status it starts from.
struct NodeFaults {
  std::map<std::string, NodeFault> nodes;  // by node name; only nodes with something to keep
  // The job's creates refused in a row (create_refusals.h). Kept: the
  // WorkersRefused condition says the class and message, not the count or
  // the times the backoff counts from.
  CreateBackoff create_backoff;

  // Whether the session released `node`'s worker (NodeFault::released).
  bool Released(const std::string& node) const;
  // The nodes whose worker was released, by name.
  std::vector<std::string> ReleasedNodes() const;
  // Drops the records left with nothing to keep.
  void Prune();
};

// Events said once (so that a pass does not say them again). What the
// status already says is not kept here: the failed items the last
// ItemsFailed event counted are status.failedItems, whether the last
// WorkersRunning event said every worker runs is status.workers. Neither
// field below can be read from the status instead.
struct Announced {
  // A CheckpointTooLarge event (KeepCheckpoint). Kept: the status looks the
  // same whether a newer checkpoint was too large or none came (it keeps
  // the last one that fit), so the Warning would be said on every pass.
  bool checkpoint_too_large = false;
  // A short job finished before the pod cache showed its first reporter's
  // pod started: its Completed Event waits for the timing that names where
  // the time went (decide::RefineTiming), or for the session's end. Kept,
  // not read from status.timing: a pod that leaves the cache mid-linger
  // would make the timing look unfinished again, and Completed said twice.
  bool completed_pending = false;
};

// The status as last handed to the writer, and when (JobSink::HandStatus,
// status_pacing.h). A pass starts from it. `at` is kept: the pacing counts
// from the hand-over, which no field of the status records (a condition's
// lastTransitionTime moves only when it flips).
struct WrittenStatus {
  api::WeightedJobStatus status;
  SteadyTime at{};
};

// The moments the decision counts waits from.
struct JobClock {
  // When this operator accepted the job (0: another did), for the timing's
  // wait for an operator. Kept: the Progressing condition's
  // lastTransitionTime says it to the second only, and only until
  // Progressing flips (a suspension, the job's end, before the timing is
  // refined); and it would say it after a restart too, where the timing
  // leaves the wait out.
  double accepted_wall = 0;
  // Since when the job has waited for the ConfigMap of its items. Kept: the
  // Ready condition's lastTransitionTime (reason WaitingForItems) does not
  // say it, as it moves only when Ready flips, not when Ready False turns
  // from another reason (Accepted, NoEligibleNodes) to this one. Whether its
  // WaitingForItems event was said is that condition in status.
  std::optional<SteadyTime> items_missing_since;
};

// A job queued in Kueue (kueue.h; decide_kueue.cc): the resourceVersion of
// the Workload the last status patch was made against: while the cache shows that one, the patch is
// on its way and not made again; a patch the API server refused as stale (Conflict) is made again
// from the newer one. The admission announced is the Admitted condition in status; whether the
// Workload was asked for is the Executor's to say (WritesInFlight::workload_requested).
struct KueueMemory {
  std::string patched_version;
};

struct JobMemory {
  TokenMemory token;
  SessionMemory session;
  NodeFaults faults;
  Announced announced;
  WrittenStatus written;
  JobClock clock;
  KueueMemory kueue;
};

// The memory of a job this operator has not seen before, from its stored
// status (a restart, a new leader): the status as written, which holds what
// was counted (failedPods, failedItems) and excluded (excludedNodes). The
// rest that a restart restores needs the job's token (sealed beside the
// checkpoint) and is taken at registration.
JobMemory MemoryFromStatus(api::WeightedJobStatus status);

// What the Executor reports of the job's writes in flight, and of the
// writes it made for the job since it first saw it (a restarted operator's
// Executor knows of none).
struct WritesInFlight {
  bool creating = false;               // a Secret-and-pods task is queued or running
  std::set<std::string> on_their_way;  // pods created, not in the pod cache yet
  // The job's token Secret exists: a task made it or found it, or the
  // reconciler read it (a job started under an earlier operator). Until
  // then, the Secret goes with the pods as one to make or read back
  // (CreateObjects::restore false).
  bool secret_exists = false;
  std::optional<std::string> adopted_token;  // the Secret found holds this token
  // A CreateWorkload of the job was carried out (whatever the API server
  // said): the WaitingForQueue event was said with it.
  bool workload_requested = false;
  bool status_written = true;  // the API server has the last status handed over
  bool pods_created = false;   // a create task made every pod it was given, since the last pass
};

struct DecideOptions {
  WorkerPodSettings pods;  // coordinator_job is filled in per job
  // How exec pods in the user's image get the worker's bundle
  // (--worker-bundle; per node: worker_bundle.h, ChooseBundleSource).
  BundleMode worker_bundle = BundleMode::kAuto;
  // When a running job's status is written (status_pacing.h); a running job
  // is looked at every pacing.status_interval.
  StatusPacing pacing;
  double start_timeout_s = 120;
  // How long a job waits for the ConfigMap of its items (itemsFrom) to exist
  // before it fails, as a pod waits for a ConfigMap it mounts: it may come
  // later in the same `kubectl apply` (--items-wait).
  std::chrono::milliseconds items_wait{60000};
  ArchitectureSettings architectures;
  // How long a worker pod may wait for its image (ErrImagePull, ...) before
  // its node is given up, and a running worker may take to reach the
  // coordinator before a CoordinatorUnreachable event.
  std::chrono::milliseconds worker_start_timeout{60000};
  std::chrono::milliseconds linger{30000};
  // Seconds after a job finished that its finished worker pods are deleted,
  // their logs with them, unless the job's spec.podTTLSecondsAfterFinished
  // says otherwise; < 0 keeps them.
  int64_t worker_pod_ttl_s = 600;
  // How much history a prior trusts, and when it is stale (fuzzy/history_prior.h).
  fuzzy::HistoryPriorOptions history_prior{};
  // The backoff of refused creates, and when a refusal nothing but a person
  // changes fails the job (create_refusals.h).
  CreateBackoffOptions create_backoff{};
  // When a node is judged below or above its own baseline (health/deviation.h).
  // The operator's histories (the ConfigMap store, Prometheus) count jobs,
  // and a baseline of one job has no spread: its band is the ratio alone,
  // while what one job measures of a node depends on the items it drew (on
  // the real-node bed two equal boards read 0.45 and 1.03 cost units a
  // second when the declared sizes misstated the archives' costs). So a
  // node is judged from its third job on, against two or more.
  health::DeviationOptions deviation = DeviationOfJobs();
  static health::DeviationOptions DeviationOfJobs() {
    health::DeviationOptions options;
    options.min_history_samples = 2;
    return options;
  }
};

// What the history of measured speeds says for a job about to start
// (history_source.h): per node, the speed its earlier jobs of this workload
// kind measured.
using history::HistoryLookup;
using history::HistorySource;

struct DecideInput {
  std::string ns, name;
  std::string id;                                     // the job's id at the coordinator
  api::JobView job;                                   // the WeightedJob (ReadJob)
  const api::ParsedSpec* spec = nullptr;              // of job.generation (required)
  std::vector<api::PodView> pods;                     // pods labelled with the job's name (ReadPod)
  std::vector<api::NodeView> nodes;                   // ReadNode
  std::optional<nlohmann::json> profile;              // the WeightProfile spec.profile names
  std::optional<coordinator::JobView> view;           // nullopt: no session
  std::optional<coordinator::Checkpoint> checkpoint;  // of the session, when there is one
  WritesInFlight writes;
  // The token in the job's Secret, when the reconciler read it (a job that
  // started under an earlier operator, memory.token empty).
  std::optional<std::string> secret_token;
  std::string fresh_token;  // a new random token, used when one must be made
  // The history of the job's workload kind, looked up when the job has no
  // session; nullopt: not looked up (no source), every prior is the fuzzy weight.
  std::optional<HistoryLookup> history;
  // The operator is stopping: a running job's status (its checkpoint, from
  // which the next leader resumes) is handed over whatever the pacing.
  bool flush_status = false;
  // A write the API server refused as built (Invalid): the job fails with
  // reason `refusal_reason` (TokenSecretUnusable).
  api::Reason refusal_reason = api::Reason::kWorkerPodRefused;
  std::string refusal;  // the message; "" when nothing was refused
  // Why the job's items cannot be read yet (its itemsFrom ConfigMap, or its
  // key, does not exist): the job waits for them up to items_wait.
  std::optional<std::string> items_missing;
  // Why the job's last create task (its pods, its token Secret) failed,
  // classified (create_refusals.h); nullopt when it did not.
  std::optional<CreateRefusal> create_refusal;
  // The job's queueing in Kueue, when it is labelled kueue.x-k8s.io/queue-name
  // and the operator runs with --kueue; nullopt: it runs as soon as it can.
  std::optional<QueueInput> queue;
  PassTime now;
};

// --- actions -----------------------------------------------------------------
struct RegisterJob {
  coordinator::JobConfig config;
};
struct RemoveJob {};
struct WorkerLost {
  std::string node;
};
// A node became eligible mid-job: its worker joins the running session
// (coordinator::JobHost::AddWorker) before its pod is created.
struct AddWorker {
  balance::WorkerPrior prior;
  std::optional<double> cores;  // the node's status.capacity.cpu, where it reports one
};
struct CreateObjects {
  // The token Secret: to be made with the job's first pods (its token read
  // back when one of the job's is there already), or, with `restore`, made
  // before and made again only when it is gone (deleted by hand): the pods
  // mount it and would wait for it.
  std::optional<nlohmann::json> secret;
  std::string token;  // the token the session holds
  std::vector<nlohmann::json> pods;
  bool restore = false;
};
struct DeletePod {
  std::string name;
  std::string uid;  // precondition; "" for none
};
struct WriteStatus {
  api::WeightedJobStatus status;
  // Write status.conditions whole even where they equal what was written
  // last: someone else changed them (RestoreConditions).
  bool restate_conditions = false;
};
struct DeleteJob {
  std::string uid;  // precondition
};
struct RecordEvent {
  bool warning = false;
  api::Reason reason = api::Reason::kStarted;
  std::string message;
  // "": the event is about the job. Else about the Node of this name (and
  // uid, "" when unknown) instead: the Executor posts it in namespace
  // default, where `kubectl describe node` finds it.
  std::string node;
  std::string node_uid;
};
// What a job that succeeded measured, as history counts it: the speeds to
// record (node -> cost units per busy second) and the nodes left out, and
// why (coordinator/recorded_speeds.h).
struct RecordSpeeds {
  history::HistoryKey history_key;  // what the job's history is kept under (HistoryKey)
  // As the history is to enter them: a node judged Slow against its own
  // baseline at the edge of its band (health::WinsorizeSpeeds), the others
  // as measured.
  coordinator::RecordedSpeeds recorded;
  std::vector<std::string> winsorized;  // the nodes entered at the band's edge
};

// The job's Workload (kueue.h), to be created (AlreadyExists is success).
struct CreateWorkload {
  nlohmann::json workload;
};
// A merge patch of the Workload `name` (of its status subresource, or of
// the object: spec.active), conditional on the resourceVersion it carries.
struct PatchWorkload {
  std::string name;
  nlohmann::json patch;
  bool status = true;
};

using Action =
    std::variant<RegisterJob, RemoveJob, WorkerLost, AddWorker, CreateObjects, DeletePod,
                 WriteStatus, DeleteJob, RecordEvent, RecordSpeeds, CreateWorkload, PatchWorkload>;

struct Decision {
  JobMemory memory;               // for the next pass
  api::WeightedJobStatus status;  // what the job's status should be
  std::vector<Action> actions;    // in order
  std::optional<std::chrono::milliseconds> requeue_after;
};

// The decision for one pass. `memory` is what the previous pass returned (a
// default one for a job seen the first time, with status = the job's status).
// Never fails: what is wrong with the job becomes its status.
Decision Decide(const DecideInput& input, const JobMemory& memory, const DecideOptions& options);

// The first pass of a job no operator has taken in (its status has no
// observedGeneration; the CRD defaults its phase to Pending): phase Pending,
// Progressing True (Accepted), Ready False, an Accepted event saying how
// long the job waited for an operator (a Warning past 30 s: none was
// running, or none led), the status written at once and a pass right after.
// Reads in.job and in.now only.
Decision Accept(const DecideInput& input, const JobMemory& memory);
// True when `memory` says no operator has taken the job in (Accept's case).
inline bool NeedsAccept(const JobMemory& memory) {
  return !memory.written.status.observed_generation && !memory.written.status.Finished();
}

}  // namespace ballast::controller
