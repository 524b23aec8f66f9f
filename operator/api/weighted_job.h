// WeightedJobSpec and WeightedJobStatus: a WeightedJob's spec and status as
// the operator uses them.
//
// The spec is parsed
// once (per generation) from the JSON object the API server hands over — not
// through the YAML file reader, and with errors that name the field's path:
//
//   spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got "abc"
//
// The keys `ballast run` shares are read by job::JobSpecFromJson (the same
// rules and defaults as the YAML job file); the Kubernetes-only keys here.
//
// The status serializes to exactly the JSON the CRD's status schema declares
// (crds/ballast.io_weightedjobs.yaml): absent optionals are absent keys.
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

#include "core/common/status.h"
#include "core/history/history_key.h"
#include "core/job/job_spec.h"
#include "operator/api/pod_template.h"

namespace ballast::api {

struct WeightedJobSpec {
  job::JobSpec job;  // workload, policy, profile, leaseSeconds, backoffLimit, deadline
  // spec.template with the short forms (spec.worker, spec.nodeSelector,
  // spec.tolerations, spec.workload.exec.image) written in (pod_template.h).
  PodTemplate pod_template;
  // spec.worker.image: the image ballast-worker comes from (unset: the
  // operator's). For primes and matmul the worker container's image too; an
  // exec job whose worker container has another image bundles the worker
  // from it (docs/workloads.md).
  std::optional<std::string> worker_image;
  bool suspend = false;
  // spec.workerStartTimeoutSeconds, 1 to 86400: how long a worker pod may
  // wait for what it needs to start (its image, a Secret or ConfigMap it
  // names) before its node is given up; unset: the operator's
  // --worker-start-timeout.
  std::optional<int64_t> worker_start_timeout_s;
};

// status.phase.
enum class JobPhase { kPending, kRunning, kSucceeded, kFailed, kSuspended };

// status.conditions[].type, in the metav1.Condition shape.
enum class ConditionType {
  kReady,
  kProgressing,
  kComplete,
  kFailed,
  kSuspended,
  kWorkersRefused,
  kAdmitted,  // a queued job's admission by Kueue (kueue.h)
};

// The reasons the operator gives, in conditions and in Events; written as
// their CamelCase names (ReasonName).
enum class Reason {
  // The job fails.
  kInvalidSpec,
  kInvalidPolicy,
  kProfileNotFound,
  kInvalidProfile,
  kDeadlineExceeded,
  kBackoffLimitExceeded,
  kNoWorkerCanStart,
  kWorkerPodRefused,
  kTokenSecretUnusable,
  kVerificationFailed,
  kTooManyFailedItems,  // more items failed than spec.failurePolicy.maxFailedItems
  kItemsChanged,        // the listed items are not the ones the job started with
  kFailedItems,         // every item attempted, some failed, failurePolicy.maxFailedItems unset
  // The job runs, waits or ends.
  kNoEligibleNodes,
  kWaitingForWorkers,
  kWaitingForItems,  // the itemsFrom ConfigMap (or its key) does not exist yet
  kWorkersRunning,
  kStarted,
  kResumed,
  kCompleted,
  kAllItemsFinished,
  kCompletedWithFailedItems,  // finished; some items failed, within maxFailedItems
  kAccepted,                  // an operator took the job in (its first status)
  kSuspended,
  kSuspendedByUser,
  kNotSuspended,
  // Events about one node or worker.
  kWorkerFailed,
  kWorkerCannotStart,
  kWorkerStartBlocked,  // the kubelet cannot start a worker yet (a missing Secret, image)
  // A pod mounting the worker's bundle as an image volume could not start:
  // the node's next pod copies it (controller/worker_bundle.h).
  kWorkerBundleFallback,
  kCoordinatorUnreachable,
  kNodeNotReady,
  kNodeReady,
  kNodeLabelDefaulted,
  kHistoryUnavailable,
  kArchitectureNotSupported,
  kNodeJoined,          // a node became eligible mid-job: its worker joins the session
  kNodeLeft,            // a Ready node the job would no longer be placed on (cordoned, relabelled)
  kNodeEligible,        // such a node can run the job's worker again
  kCheckpointTooLarge,  // over kMaxCheckpointBytes: the last one that fit stays
  kCheckpointRejected,  // status.checkpoint is not sealed by the operator: started again
  kConditionsRestored,  // status.conditions said finished while the job runs
  kStatusRestored,      // status.startTime/failedPods differed from the sealed claims
  kItemsFailed,         // items failed all their attempts (Warning, as they are reported)
  // The API server refused the job's worker pods (create_refusals.h): the
  // WorkersRefused condition's reason and the Warning event's.
  kPodSecurity,            // the namespace's PodSecurity level
  kPriorityClassNotFound,  // the template's priorityClassName names none
  kAdmissionDenied,        // an admission webhook
  kQuotaExceeded,          // a ResourceQuota: waits
  kForbidden,              // another 403 (RBAC, a namespace being deleted): waits
  kCreateFailed,           // 5xx, 429, a timeout, a connection error: waits
  kWorkersCreated,         // accepted again after refusals (WorkersRefused False)
  // A finished job measured a node against its own baseline (core/health/deviation.h).
  kNodeBelowBaseline,  // Slow: a Warning on the job and on the Node
  kNodeAboveBaseline,  // Normal and well above it (fast): noted on both
  // A job queued in Kueue (kueue.h): the Admitted condition's reasons.
  kWaitingForQueue,  // its Workload waits for Kueue to admit it
  kAdmitted,         // Kueue admitted its Workload: it runs
  kEvicted,          // Kueue evicted its Workload (preempted, ...): suspended
};

// "Pending", "Ready", "InvalidSpec", ...: the names Kubernetes users see.
const char* JobPhaseName(JobPhase phase);
const char* ConditionTypeName(ConditionType type);
const char* ReasonName(Reason reason);
// The inverses; nullopt for a name not in the enum.
std::optional<JobPhase> JobPhaseNamed(std::string_view name);
std::optional<ConditionType> ConditionTypeNamed(std::string_view name);
std::optional<Reason> ReasonNamed(std::string_view name);

// Why a spec was refused: the reason of the Failed condition and the message.
struct SpecError {
  // kInvalidPolicy when the error is about spec.policy (status.IsAbout).
  Reason reason = Reason::kInvalidSpec;
  // Invalid "<path>: expected ..., got ...", the path as data (path()).
  Status status;
};

// The spec `spec` of the WeightedJob `name`, or the error that fails the job.
// Never throws.
struct ParsedSpec {
  std::optional<WeightedJobSpec> spec;  // set when valid
  SpecError error;                      // set when not
  // spec.ttlSecondsAfterFinished, an integer in [0, 2^31 - 1], and
  // spec.podTTLSecondsAfterFinished, in [-1, 2^31 - 1] (-1 keeps the
  // finished worker pods; unset: the operator's default). Read first, and
  // kept when the rest of the spec is invalid: a job failed for its spec is
  // deleted after it too. A value out of range is the spec's error.
  std::optional<int64_t> ttl_seconds_after_finished;
  std::optional<int64_t> pod_ttl_seconds_after_finished;
};
ParsedSpec ParseWeightedJobSpec(const nlohmann::json& spec, const std::string& name);

// What the history of node speeds is kept under for jobs of `spec`
// (docs/history.md, "What a history is kept under"): the workload kind
// (primes, matmul), and for exec the kind and the worker container's image
// without its tag or digest ("exec:registry.local/recompress"), so that a
// shell script and a Python script on the same boards each keep their own:
// the boards' speeds relative to each other differ between them (a start
// cost per item weighs most on the slowest board). A new tag of the same
// image keeps its history. "exec" when the template names no image.
history::HistoryKey HistoryKey(const WeightedJobSpec& spec);

// A condition in the metav1.Condition shape.
// A condition read back from the status whose type or reason this operator
// does not know is dropped (StatusFromJson); the next write leaves it out.
struct StatusCondition {
  ConditionType type = ConditionType::kReady;
  bool status = false;  // written "True" or "False"
  Reason reason = Reason::kWaitingForWorkers;
  std::string message;
  int64_t observed_generation = 0;
  std::string last_transition_time;  // RFC 3339
  bool operator==(const StatusCondition&) const = default;
};

// The prior a node's worker started from (status.nodes[].prior): the fuzzy
// weight shrunk toward the node's measured history (fuzzy/history_prior.h).
struct NodePriorRow {
  std::string source;  // profile, history, blended
  double value = 0;    // in the fuzzy weights' scale
  double samples = 0;
  double age_seconds = 0;
  bool operator==(const NodePriorRow&) const = default;
};

// One row of status.nodes.
struct NodeRow {
  std::string name;
  double weight = 0;
  double score = 0;
  double estimated_speed = 0;  // items per busy second
  uint64_t items = 0;
  // The declared cost of its items this session, in the job's own cost units
  // (status.totalCost), and that cost per busy second: what top's bars and
  // ETA follow.
  std::optional<double> cost;
  std::optional<double> cost_speed;
  uint64_t steals = 0;
  // Busy seconds it spent on items another node had handed in first (an
  // endgame copy that lost, or items past a steal's cut it had begun):
  // their results were dropped. Set when there were any.
  std::optional<double> duplicate_seconds;
  std::string pod;
  std::optional<NodePriorRow> prior;
  // Set when the job succeeded: cost units per busy second, and the prior's
  // share of the job's speed over the measured share, minus 1.
  std::optional<double> measured_speed;
  std::optional<double> prior_error;
  // Set when the job succeeded and judged the node against its own baseline
  // (core/health/deviation.h): measured / baseline, and "slow", "normal" or
  // "fast".
  std::optional<double> baseline_ratio;
  std::optional<std::string> baseline_verdict;
  // Set when the job succeeded and the node's board power is known
  // (health::NodePower): its estimated energy in the job, joules.
  std::optional<double> energy_joules;
  bool operator==(const NodeRow&) const = default;
};

// One row of status.excludedNodes: a node the job selects that carries no
// worker, and why.
struct ExcludedNode {
  std::string name;
  // ArchitectureNotSupported, or the kubelet's reason the worker's image
  // could not start (ErrImagePull, ImagePullBackOff, ErrImageNeverPull, ...).
  std::string reason;
  std::string message;
  // What kept the worker from starting, short: "the Secret s3-creds does not
  // exist" (decide_faults.cc, NameStartTrouble); "" for architectures.
  std::string cause;
  bool operator==(const ExcludedNode&) const = default;
};

// status.costModel: what the job's policy takes an item to cost
// (core/balance/learned_cost.h), written while a policy learns costs (the
// adaptive policy with learnCosts, on a job that declares costs): the
// declared cost plus a start cost per item, learned from the reports.
struct CostModelStatus {
  // Per item, in the job's cost units (status.totalCost); 0 while the
  // declared costs stand.
  double start_cost = 0;
  // The start cost was learned from this run's reports; false: the declared
  // costs stand (the prior), the fit has not told a start cost apart yet.
  bool learned = false;
  uint64_t samples = 0;  // reports the latest fit took in
  // Over the job's nodes together: busy seconds per cost unit of the model
  // (declared cost plus start_cost per item), and start_cost in those
  // seconds; absent before a node has reported computing time.
  std::optional<double> seconds_per_cost;
  std::optional<double> start_seconds;
  bool operator==(const CostModelStatus&) const = default;
};

struct WeightedJobStatus {
  std::optional<JobPhase> phase;
  std::optional<int64_t> observed_generation;
  std::vector<StatusCondition> conditions;  // absent when empty
  std::optional<std::vector<NodeRow>> nodes;
  std::vector<ExcludedNode> excluded_nodes;  // absent when empty
  std::optional<std::string> progress;
  std::optional<uint64_t> completed_items;
  // The declared cost of the completed items and of the whole job, in the
  // units the job declares its items' costs in (a listed item's cost: bytes,
  // seconds; one per item where the items carry no costs): progress by cost
  // (kubectl ballast top). A status without totalCost (an older operator's)
  // counts costs where the whole job costs `items`.
  std::optional<double> completed_cost;
  std::optional<double> total_cost;
  std::optional<uint64_t> items;
  std::optional<int64_t> workers;
  std::optional<int64_t> failed_pods;
  // Items that failed all their attempts, and the values of the first
  // kShownFailedValues of them when the job lists its items.
  std::optional<uint64_t> failed_items;
  std::vector<std::string> failed_item_values;  // absent when empty
  std::optional<nlohmann::json> result;         // the workload's result JSON
  std::optional<std::string> start_time;
  std::optional<std::string> completion_time;
  // The digest of the listed items the job started with (workload::ItemsDigest).
  std::optional<std::string> items_digest;
  std::optional<double> makespan_seconds;
  // The limit and the efficiency against it (job_efficiency.h): the speeds
  // it is measured against, and which bound of the limit held.
  std::optional<double> ideal_seconds;
  std::optional<double> efficiency;
  std::optional<std::string> efficiency_reference;  // ReferenceSourceName
  std::optional<std::string> limit_bound;           // balance::LimitBoundName
  // The job's own estimate of both, from the speeds it learned in the run.
  std::optional<double> estimated_ideal_seconds;
  std::optional<double> estimated_efficiency;
  // status.timing: end to end against compute, and what came between
  // (job_timing.h TimingToJson); set when the job succeeded.
  std::optional<nlohmann::json> timing;
  std::optional<CostModelStatus> cost_model;
  // status.energy: the job's estimated energy (health::EstimateJobEnergy,
  // EnergyColumns in decide_history.cc); set when the job succeeded.
  std::optional<nlohmann::json> energy;
  // One line that explains the efficiency figures: where the time before the
  // first report went (NOTE column).
  std::optional<std::string> efficiency_note;
  // The NOTE column: while the job runs, what keeps a worker from starting
  // (a missing Secret, ConfigMap or image, and when its node is given up);
  // once it succeeded, efficiency_note.
  std::optional<std::string> note;
  std::optional<nlohmann::json> checkpoint;  // coordinator::CheckpointToJson
  bool operator==(const WeightedJobStatus&) const = default;

  // Whether the phase is set and is `wanted`.
  bool Is(JobPhase wanted) const { return phase == wanted; }
  // Succeeded or Failed.
  bool Finished() const { return Is(JobPhase::kSucceeded) || Is(JobPhase::kFailed); }
};

// The most rows status.nodes and status.excludedNodes are written with, so
// that the object stays small at any node count (about 35 KiB of rows at the
// longest node names). A job with more nodes is summarized in
// status.nodeSummary (NodeSummaryToJson); every node's figures stay in the
// coordinator's metrics.
inline constexpr size_t kMaxNodeRows = 100;

// The largest status.checkpoint written, as compact JSON. Its size follows
// the ranges in flight (about 30 bytes per worker); past this the operator
// keeps the last checkpoint that fit: older, so a resume redoes more work,
// and never counts an item twice.
inline constexpr size_t kMaxCheckpointBytes = 128 << 10;

// The rows written when there are more than `max_rows`: those whose worker
// departs most from its predicted speed — first the ones not measured yet
// (no item done), then by |prior_error| once the job succeeded, else by
// |log(speed share / weight share)| — in their original order. All of them
// when there are at most `max_rows`. Pure.
std::vector<NodeRow> NotableRows(const std::vector<NodeRow>& rows, size_t max_rows);

// status.nodeSummary of `rows` (every node's, before NotableRows): nodes,
// shown, steals, the estimated speeds' min / median / max and the priors'
// sources counted.
nlohmann::json NodeSummaryToJson(const std::vector<NodeRow>& rows, size_t shown);

// The status as the CRD declares it: status.nodes and status.excludedNodes
// cut to kMaxNodeRows (NotableRows; the first excluded ones), with
// status.nodeSummary when a row was left out. Never fails.
nlohmann::json StatusToJson(const WeightedJobStatus& status);
// The inverse: Invalid naming the path ("status.failedPods: expected an
// integer >= 0, got \"x\"") for a field of the wrong type; unknown keys are
// ignored (the API server prunes them). Never throws.
StatusOr<WeightedJobStatus> StatusFromJson(const nlohmann::json& status);

// A WeightedJob object as a reader outside the controller sees it (the
// kubectl plugin's top and report): its name, its spec and its status, each
// read by the one reader of its part (ParseWeightedJobSpec, StatusFromJson),
// and the counts status keeps for the rows it leaves out.
struct WeightedJobObject {
  std::string ns;
  std::string name;
  ParsedSpec spec;  // spec.spec unset when the spec is not one this version runs
  WeightedJobStatus status;
  // status.nodeSummary's, written when status.nodes is cut to kMaxNodeRows:
  // every node's count and steals.
  std::optional<uint64_t> node_count;
  std::optional<uint64_t> steals;
  // status.excludedNodeCount, likewise when status.excludedNodes is cut.
  std::optional<uint64_t> excluded_count;
};

// Invalid "kind: expected WeightedJob" for another object, or the status's
// error naming its field. Never throws.
StatusOr<WeightedJobObject> WeightedJobFromJson(const nlohmann::json& object);

// Sets `condition` (type, status, reason, message) in `status.conditions`
// with observedGeneration `generation`, its message's control characters
// written out (EscapeControls: a user's command's output may be in it);
// lastTransitionTime becomes `now` only when the condition is new or its
// status flips. Returns true when anything changed.
bool SetCondition(WeightedJobStatus& status, const StatusCondition& condition, int64_t generation,
                  const std::string& now);
// Removes the condition of `type`; returns true when there was one.
bool RemoveCondition(WeightedJobStatus& status, ConditionType type);

}  // namespace ballast::api
