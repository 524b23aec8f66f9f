// The parts of Decide (decide.h) shared by its files: the state of one pass
// and the steps the files take in turn. Private to decide*.cc and their
// tests.
//
// Thread-safety: a Pass belongs to one call of Decide.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "operator/controller/decide.h"

namespace ballast::controller::decide {

// Seconds since the epoch of an RFC 3339 UTC time; nullopt when it does not parse.
std::optional<double> ParseRfcTime(const std::string& text);
// "a; b; c" of at most `shown` items, then "; and N more": an Event's message
// stays readable (and small) at a thousand nodes.
std::string ListSome(const std::vector<std::string>& items, size_t shown = 10,
                     const char* separator = "; ");
// The fuzzy model's warnings ("node NAME: what"), one message per distinct
// what: "node a: what" when one node has it, else "what, on N nodes: a, b,
// ..." (ListSome); in the order first seen. Other warnings pass unchanged.
std::vector<std::string> GroupNodeWarnings(const std::vector<std::string>& warnings);
// A condition of `type` whose status is `value`.
StatusCondition Condition(ConditionType type, bool value, Reason reason,
                          const std::string& message);

struct Pass {
  Pass(const DecideInput& input, const JobMemory& previous, const DecideOptions& decide_options)
      : in(input),
        options(decide_options),
        memory(previous),
        status(previous.status),
        uid(input.job.meta.uid) {
    Index();
  }

  // The job's spec; once Kueue admitted a queued job, with its flavors'
  // node labels and tolerations (PlaceOnFlavors). Requires a valid spec.
  const WeightedJobSpec& spec() const { return placed ? *placed : *in.spec->spec; }
  // The input's pod, node and session worker of a name; nullptr when there
  // is none (the first, as listed, where a name repeats). Looked up in maps
  // built once: a pass asks for each of the job's nodes, up to thousands.
  const PodView* PodNamed(std::string_view name) const;
  const NodeView* NodeNamed(std::string_view name) const;
  const coordinator::WorkerView* WorkerNamed(std::string_view name) const;  // requires in.view
  // Appends a RecordEvent.
  void Event(bool warning, Reason reason, std::string message);
  // Sets the phase and the Ready / Progressing conditions that go with it;
  // an Event when the phase changes.
  void Transition(JobPhase phase, bool warning, Reason reason, const std::string& message);
  // Hands `status` to the writer when it changed and `force`,
  // write_at_once, or its pacing says the change is due (status_pacing.h).
  void HandStatus(bool force);
  // DeletePod for every pod of the job that is not finished or going.
  void DeletePods();
  // True while a pod of the job that has not Succeeded is left: a stopping
  // job waits for them. A Succeeded one (a worker released in the tail, which
  // DeletePods leaves, as a Job's finished pods stay) has stopped already.
  bool OwnedPodsLeft() const;

  const DecideInput& in;
  const DecideOptions& options;
  JobMemory memory;
  WeightedJobStatus status;
  const std::string uid;
  std::vector<Action> actions;
  std::optional<std::chrono::milliseconds> requeue_after;
  // The phase moved, or the conditions must be restated: the status goes out
  // in this pass (a condition alone waits up to the status interval).
  bool write_at_once = false;
  bool status_handed = false;       // this pass handed a status to the writer
  bool restate_conditions = false;  // the status write carries the conditions whole
  // The earliest deadline of a fault being watched (WatchImage), or of a
  // create's backoff (GateCreates).
  std::optional<std::chrono::milliseconds> fault_deadline;
  // A queued job admitted by Kueue: its spec placed on the admitted flavors,
  // and how many nodes its session may hold (the Workload's count less the
  // pods it gave back), which caps the nodes that join mid-job.
  std::optional<WeightedJobSpec> placed;
  std::optional<size_t> node_limit;

 private:
  void Index();
  // Keys view the names in `in`, which outlives the pass.
  std::unordered_map<std::string_view, const PodView*> pods_by_name_;
  std::unordered_map<std::string_view, const NodeView*> nodes_by_name_;
  std::unordered_map<std::string_view, const coordinator::WorkerView*> workers_by_name_;
};

// The session's configuration: the eligible nodes weighed with `profile`,
// resuming from status.checkpoint; records the session in pass.memory and
// the Started / Resumed event. nullopt when the job waits for nodes (Pending,
// NoEligibleNodes) or failed (InvalidProfile, InvalidCheckpoint).
std::optional<coordinator::JobConfig> Registration(Pass& pass, const fuzzy::Profile& profile);

// The nodes the job would run on now (eligible, in name order), and why each
// other node cannot (Ineligibility and the rest).
std::vector<std::string> EligibleNodeNames(const Pass& pass, std::vector<std::string>* excluded);
// Pending, Ready False NoEligibleNodes naming why; looks again in 10 s.
void WaitForNodes(Pass& pass, const std::vector<std::string>& excluded);
// Stops the job's session for a suspension: deletes its pods; once they are
// gone keeps the checkpoint in status (with its progress and result) and
// removes the session. Returns true when no session and no pod is left.
bool StopSession(Pass& pass);
// The nodes whose worker the session released in the job's tail
// (coordinator::WorkerView::released; a queued job's session releases them,
// idle_release.h): their pods exit 0 and are finished, not failed, and are
// not made again.
std::set<std::string> ReleasedNodes(const coordinator::JobView& view);
// Takes the nodes the session released since the last pass into
// memory.released; the status goes out at once when there are new ones (the
// claims sealed beside the checkpoint name them), so that an operator that
// dies after a release makes no pod there again.
void TakeReleases(Pass& pass);
// memory.released from the claims sealed beside status.checkpoint (an
// operator restarted after a release); nothing when the checkpoint does not
// open with the job's token (TrustedCheckpoint says why at registration).
void RestoreReleased(Pass& pass);
// Forgets the released nodes, in memory and in the claims beside
// status.checkpoint: the job's Workload is gone, and with it the
// reclaimablePods that counted them; a new one runs every node again.
void ForgetReleased(Pass& pass);

// --- Kueue (decide_kueue.cc; kueue.h) ------------------------------------------

// For a queued job (in.queue): creates its Workload, holds it until Kueue
// admits it, stops it when Kueue evicts it and hands the quota back. Returns
// true when the job may run (admitted), with pass.placed and
// pass.node_limit set.
bool Admission(Pass& pass);
// For a queued job that runs: status.reclaimablePods of its Workload.
void ReportReclaimable(Pass& pass);
// For a queued job suspended (spec.suspend) and stopped: its Workload
// deactivated, then its admission handed back once Kueue evicted it.
void SuspendWorkload(Pass& pass);
// For a queued job that finished: its Workload's Finished condition.
void FinishWorkload(Pass& pass);

// --- faults of one node's worker (decide_faults.cc) ---------------------------

// Takes the given-up nodes recorded in status.excludedNodes (an operator
// restarted mid-job does not try them again).
void RestoreGivenUp(Pass& pass);
// One Warning event naming the nodes skipped for their architecture, when
// there are any.
void AnnounceArchitectureExclusions(Pass& pass, const std::vector<ExcludedNode>& excluded);
// status.excludedNodes: the architecture exclusions, then the given-up nodes.
void ExcludedStatus(Pass& pass);
// True when `node`'s worker is given up; deletes its pod if one is left.
bool GivenUp(Pass& pass, const std::string& node, const PodView* pod, bool owned);
// For a Pending pod: when a container waits because it cannot start
// (ErrImagePull, ImagePullBackOff, CreateContainerConfigError, ...), says so
// at once (a WorkerStartBlocked Warning naming the cause), and after
// worker_start_timeout gives the node up — WorkerLost, the pod deleted, a
// WorkerCannotStart event — and returns true; before that asks for a pass at
// the deadline.
bool WatchImage(Pass& pass, const std::string& node, const PodView& pod);
// What keeps a container from starting, short, from the kubelet's waiting
// `reason` and `message` and the container's `image`: "the Secret s3-creds
// does not exist", "the ConfigMap ns/c has no key k", "the image x:1 cannot
// be pulled", "the container cannot be created (PreStartHookError)".
std::string NameStartTrouble(const std::string& reason, const std::string& message,
                             const std::string& image);
// For a Running pod: a CoordinatorUnreachable event (once per node) when its
// worker has not reported to the coordinator within worker_start_timeout of
// starting.
void WatchReach(Pass& pass, const std::string& node, const PodView& pod);
// For a failed pod: a CoordinatorUnreachable event when its termination
// message says the worker could not reach the coordinator.
void ReportUnreachableFailure(Pass& pass, const std::string& node, const PodView& pod);

// --- refused creates (decide_refusals.cc) ---------------------------------------

// Takes what the job's last create task left. A refusal (in.create_refusal)
// is counted into memory.create_backoff (TakeRefusal) and sets the condition
// WorkersRefused True, its reason the class, with a Warning event of that
// reason when a row of refusals starts or its class changes; the returned
// message, when there is one, is the job's failure (WorkerPodRefused). Pods
// created after refusals (in.writes.pods_created) end the row: WorkersRefused
// False (WorkersCreated) and a Normal event.
std::optional<std::string> TakeCreateOutcome(Pass& pass);
// While the job's creates are refused for what waiting may change (a quota,
// another 403, a transient failure), the workers of `without_pods` (nodes
// whose pods are missing) are declared lost, once each: their planned share
// goes to the workers that run instead of waiting for the coordinator's
// start timeout; one that starts later reports again. A node leaves
// memory.refused_nodes once its pod exists.
void LoseRefusedWorkers(Pass& pass, const std::vector<std::string>& without_pods);
// Cuts `missing` to the pods memory.create_backoff lets this pass create
// (CreatesAllowed), asking for a pass when the next create may go.
void GateCreates(Pass& pass, std::vector<nlohmann::json>& missing);

// --- history as the prior (decide_history.cc) ---------------------------------

// The session's worker priors, in `weights`' order: the fuzzy weights blended
// with in.history (BlendHistoryPrior), each with its credibility (how far
// `adaptive` trusts it against the first measurements) and the duty its
// worker pod's CPU limit gives it (WorkerDuty). Records them in
// memory.priors; a HistoryUnavailable event when the history source could
// not answer.
std::vector<balance::WorkerPrior> SessionPriors(Pass& pass, const fuzzy::WeightResult& weights);
// Fills status.nodes[].prior from memory.priors (rows of a session started by
// an earlier operator keep the prior their status shows).
void PriorColumns(Pass& pass, std::vector<NodeRow>& rows);
// For a job that just succeeded: status.nodes[].measuredSpeed and
// priorError, and a RecordSpeeds action (coordinator::SpeedsToRecord).
void MeasuredColumns(Pass& pass);
// For a job that just succeeded after `span_seconds`: status.energy and
// status.nodes[].energyJoules, each node's board power from its labels
// (health::NodePower) over its busy and idle time (health::EstimateJobEnergy).
void EnergyColumns(Pass& pass, double span_seconds);

// Pods of a running session: creates the missing, replaces the failed (up to
// backoffLimit), loses the workers of nodes not Ready; then the status the
// view gives (per-node table, progress, result, checkpoint; Succeeded with the
// efficiency figures when done, Failed past backoffLimit).
void ManagePods(Pass& pass);
// For a job that succeeded and whose session lingers while its pods exit:
// status.timing again, with the first reporter's pod as the pod cache shows
// it now (a short job can finish before the cache saw its pod scheduled and
// started); the status handed over when that changed it.
void RefineTiming(Pass& pass);
// status.checkpoint = `checkpoint` when it fits in kMaxCheckpointBytes;
// otherwise the last one stays, with a Warning the first time. A failed
// job's status keeps its newest that fit too: what was finished.
void KeepCheckpoint(Pass& pass, const coordinator::Checkpoint& checkpoint);

}  // namespace ballast::controller::decide
