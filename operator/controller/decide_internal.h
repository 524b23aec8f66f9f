// The parts of Decide (decide.h) shared by its files: the state of one pass
// and the steps the files take in turn. Private to decide*.cc and their
// tests.
//
// Thread-safety: a Pass belongs to one call of Decide.
#pragma once

#include <chrono>
#include <map>
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
api::StatusCondition Condition(api::ConditionType type, bool value, api::Reason reason,
                               const std::string& message);

// What a pass reads: its input, the decision's options, the job's spec and
// the status the pass starts from, with the input's objects looked up by
// name. A step takes it const.
class PassView {
 public:
  PassView(const DecideInput& input, const DecideOptions& decide_options,
           const api::WeightedJobStatus& started_from);

  // The job's spec; once Kueue admitted a queued job, with its flavors'
  // node labels and tolerations (PlaceOnFlavors). Requires a valid spec.
  const api::WeightedJobSpec& spec() const { return placed ? *placed : *in.spec->spec; }
  // The input's pod, node and session worker of a name; nullptr when there
  // is none (the first, as listed, where a name repeats). Looked up in maps
  // built once: a pass asks for each of the job's nodes, up to thousands.
  const api::PodView* PodNamed(std::string_view name) const;
  const api::NodeView* NodeNamed(std::string_view name) const;
  const coordinator::WorkerView* WorkerNamed(std::string_view name) const;  // requires in.view
  // The job's worker pod on `node`, by its name; nullptr when there is none.
  const api::PodView* WorkerPod(const std::string& node) const;
  // True while a pod of the job that has not Succeeded is left: a stopping
  // job waits for them. A Succeeded one (a worker released in the tail, which
  // DeletePods leaves, as a Job's finished pods stay) has stopped already.
  bool OwnedPodsLeft() const;
  // How long a worker pod may wait for what it needs to start before its
  // node is given up: the job's spec.workerStartTimeoutSeconds, else the
  // operator's worker_start_timeout.
  std::chrono::milliseconds WorkerStartTimeout() const;
  // The row of status.excludedNodes (in the status the pass starts from)
  // that gave `node`'s worker up; nullptr when it was not.
  const api::ExcludedNode* GivenUpRow(std::string_view node) const;

  const DecideInput& in;
  const DecideOptions& options;
  // The status the pass starts from: as last handed to the writer (a
  // restarted operator's: as stored). What the status counts (failedPods,
  // failedItems) and excludes (excludedNodes) is read from it, not kept
  // apart in memory; a pass that changes those hands its status at once.
  const api::WeightedJobStatus& started;
  const std::string uid;
  // A queued job admitted by Kueue (the pass sets them from Admission): its spec placed
  // on the admitted flavors, and how many nodes its session may hold (the
  // Workload's count less the pods it gave back), which caps the nodes that
  // join mid-job.
  std::optional<api::WeightedJobSpec> placed;
  std::optional<size_t> node_limit;

 private:
  // Keys view the names in `in`, which outlives the pass.
  std::unordered_map<std::string_view, const api::PodView*> pods_by_name_;
  std::unordered_map<std::string_view, const api::NodeView*> nodes_by_name_;
  std::unordered_map<std::string_view, const coordinator::WorkerView*> workers_by_name_;
  std::unordered_map<std::string_view, const api::ExcludedNode*> given_up_;
};

// What a pass emits: the actions in order, and the earliest moment a step
// asks to be looked at again (a fault being watched, WatchImage; a create's
// backoff, GateCreates).
struct PassOut {
  std::vector<Action> actions;
  std::optional<std::chrono::milliseconds> fault_deadline;
  // What keeps a worker from starting, a line per node that waits on it this
  // pass (WatchImage): "node pi3b-0: the Secret s3 does not exist; given up
  // in 44 s". The status's note and the Ready condition carry it.
  std::vector<std::string> start_blocked;
  // The nodes whose worker this pass gave up (WatchImage): ManagePods adds
  // them to status.excludedNodes.
  std::vector<api::ExcludedNode> given_up;
  // The phase moved, or the conditions must be restated, or what the status
  // alone keeps changed: the status goes out in this pass (a condition alone
  // waits up to the status interval).
  bool write_at_once = false;

  // Appends a RecordEvent about the job.
  void Event(bool warning, api::Reason reason, std::string message);
  // Asks for a pass `wait` from now at the latest.
  void WakeBy(std::chrono::milliseconds wait);
  // DeletePod for every pod of the job that is not finished or going.
  void DeletePods(const PassView& view);
};

// What a step that moves the job may do: what every step emits (PassOut),
// and the status being made, its phase (Transition), its handing to the
// writer (HandStatus), when the job is looked at again and whether the
// coordinator runs its session. The memory is not reachable through it: a
// step takes its own parts of the memory beside it, and the status last
// handed to the writer (WrittenStatus) is the sink's alone, to pace the
// writes by.
class JobSink : public PassOut {
 public:
  // The status is made from the one last handed (`written`); `view` is the
  // pass's.
  JobSink(const PassView& view, WrittenStatus& written, bool registered)
      : status(written.status), view_(view), written_(written), registered_(registered) {}
  JobSink(const JobSink&) = delete;
  JobSink& operator=(const JobSink&) = delete;

  // Sets the phase and the Ready / Progressing conditions that go with it;
  // an Event when the phase changes, unless `announce` is false.
  void Transition(api::JobPhase phase, bool warning, api::Reason reason, const std::string& message,
                  bool announce = true);
  // Hands `status` to the writer when it changed and `force`,
  // write_at_once, or its pacing says the change is due (status_pacing.h).
  void HandStatus(bool force);
  using PassOut::DeletePods;
  void DeletePods() { PassOut::DeletePods(view_); }
  // The coordinator runs a session of the job: it has one now (in.view), or
  // this pass registers one (StartSession); false once this pass removes it
  // (EndSession).
  bool Registered() const { return registered_; }
  void StartSession(coordinator::JobConfig config);  // RegisterJob
  void EndSession();                                 // RemoveJob
  // Asks for the next pass `wait` from now at the latest.
  void RequeueBy(std::chrono::milliseconds wait);
  // Forgets what was said of the written status's conditions, so that this
  // pass writes them again, whole (RestoreConditions).
  void RestateConditions();

  api::WeightedJobStatus status;  // the status being made
  // When the job is looked at again; nullopt: when something changes.
  std::optional<std::chrono::milliseconds> requeue_after;
  bool status_handed = false;  // this pass handed a status to the writer

 private:
  const PassView& view_;
  WrittenStatus& written_;
  bool registered_ = false;
  bool restate_conditions_ = false;  // the status write carries the conditions whole
};

// The job's memory held for one call of Decide, so that it is there before
// the sink that paces the writes with a part of it (JobSink's WrittenStatus).
struct PassMemory {
  explicit PassMemory(const JobMemory& previous) : memory(previous) {}
  JobMemory memory;
};

// One call of Decide: what it reads (PassView), the memory it carries on and
// the sink it moves the job with. The top of the pass (decide.cc: Run,
// Accept, and the flow beside them: a finish, a suspension, a failure)
// takes it whole: it hands each step the parts of the memory that step owns.
// The steps take the view const, their own parts of the memory, and the
// sink (those that move the phase, hand the status, requeue or start and
// end the session), or the status and PassOut (those that fill in fields
// of the status or emit).
struct Pass : PassMemory, PassView, JobSink {
  Pass(const DecideInput& input, const JobMemory& previous, const DecideOptions& decide_options)
      : PassMemory(previous),
        PassView(input, decide_options, previous.written.status),
        JobSink(*this, memory.written, input.view.has_value()) {}
};

// What keeping the checkpoint in status takes of the memory (KeepCheckpoint):
// the token it is sealed with, the released nodes claimed beside it, and
// whether its CheckpointTooLarge Warning was said. Taken by the steps that
// keep a session's checkpoint: StopSession, FailSession, SessionOutcome.
struct CheckpointSlice {
  const TokenMemory& token;
  const NodeFaults& faults;
  Announced& announced;
};

// Fails the job in this pass: phase Failed with the Failed condition of
// `reason`, the status handed at once. What follows a finish (the session's
// end, the TTLs) is the caller's; so is a running session's checkpoint
// (FailSession keeps it).
void FailInPass(const PassView& view, JobSink& sink, api::Reason reason,
                const std::string& message);
// FailInPass for a job whose session may run: keeps the checkpoint it has
// first (KeepCheckpoint), so that a failed job's status holds what was finished.
void FailSession(const PassView& view, const CheckpointSlice& seal, JobSink& sink,
                 api::Reason reason, const std::string& message);
// status.failedPods, the worker pods failed against backoffLimit (0 when
// unset, or below 0 as someone with status rights may have written it).
uint32_t FailedPods(const api::WeightedJobStatus& status);
// `value` to three decimals, as status shows seconds and ratios.
double Rounded(double value);

// --- registration (decide_register.cc) -----------------------------------------

// The nodes the job may run on now and what the session needs of them; the
// others with why not.
struct Eligible {
  std::vector<fuzzy::NodeFacts> facts;              // in name order
  std::map<std::string, NodeReference> references;  // for the efficiency (job_efficiency.h)
  std::map<std::string, double> cores;  // status.capacity.cpu, where the node reports it
  std::vector<std::string> excluded;    // why each other node cannot run a worker
  std::vector<api::ExcludedNode> architecture_excluded;
};
// Selected by the job's pod template, of an architecture the operator has a
// worker for, and neither given up (view.GivenUpRow) nor released (faults).
Eligible EligibleNodes(const PassView& view, const NodeFaults& faults);

// The session's configuration: the eligible nodes weighed with `profile`,
// resuming from status.checkpoint; records the session in `session` and
// the Started / Resumed event. Before all this, what a restarted operator
// keeps of the job is restored from its status (RestoreSealed: `faults`).
// nullopt when the job waits for nodes (Pending, NoEligibleNodes) or failed
// (InvalidProfile). The caller starts the session (JobSink::StartSession).
std::optional<coordinator::JobConfig> Registration(const PassView& view, const TokenMemory& token,
                                                   NodeFaults& faults, SessionMemory& session,
                                                   JobSink& sink, const fuzzy::Profile& profile);
// What a restart restores of a job that needs its token: the nodes given up
// (status.excludedNodes), and the claims sealed beside status.checkpoint
// (the nodes released, startTime, failedPods) when the checkpoint opens with
// the job's token. Returns the checkpoint to resume from; one that does not
// open is dropped with a CheckpointRejected Warning (the job starts again
// from its first item). MemoryFromStatus (decide.h) restores the rest.
// Takes the token (the seal), the faults (the released nodes go back into
// them) and the status whose claims it checks.
std::optional<coordinator::Checkpoint> RestoreSealed(const PassView& view, const TokenMemory& token,
                                                     NodeFaults& faults,
                                                     api::WeightedJobStatus& status, PassOut& out);
// Pending, Ready False NoEligibleNodes naming why; looks again in 10 s.
void WaitForNodes(const PassView& view, JobSink& sink, const std::vector<std::string>& excluded);
// Stops the job's session for a suspension: deletes its pods; once they are
// gone keeps the checkpoint in status (with its progress and result) and
// removes the session. Returns true when no session and no pod is left.
bool StopSession(const PassView& view, const CheckpointSlice& seal, JobSink& sink);

// --- nodes that join a running session (decide_join.cc) ------------------------

// Nodes that became eligible since the session started (added, Ready,
// uncordoned, labelled into the selector; under Kueue within view.node_limit)
// join it: AddWorker with their prior, on the session's scales, and a
// NodeJoined event; ManageNode then makes their pods.
void JoinNodes(const PassView& view, const NodeFaults& faults, SessionMemory& session,
               PassOut& out);

// --- the session's nodes and pods (decide_nodes.cc) ----------------------------

// What ManageNode counts while it walks the session's nodes.
struct PodCount {
  // The job's worker pods failed, counted against backoffLimit: the status's
  // failedPods, then those this pass counts.
  uint32_t failed_pods = 0;
  int running = 0;
  int alive = 0;     // pods that may still compute (Pending or Running), or about to be made
  int released = 0;  // workers released in the tail whose pods are finished or gone
  // Released by an earlier session of the job (before the operator
  // restarted, or the job was stopped): not in this one.
  int released_before = 0;
  std::vector<nlohmann::json> missing;     // the pods to create
  std::vector<std::string> missing_nodes;  // their nodes, in the same order
};
// One node of the session: its worker given up, released, lost (node not
// Ready or no longer eligible) or back; its pod to create, watched
// (WatchImage, WatchReach) or failed (counted against backoffLimit).
// `fault`: the node's record (NodeFault::released: the session released its
// worker); `registered_wall`: when the session started (WatchReach).
void ManageNode(const PassView& view, double registered_wall, NodeFault& fault, PassOut& out,
                const std::string& node, PodCount& count);

// --- released nodes and the checkpoint's claims (decide_claims.cc) -------------

// The nodes whose worker the session released in the job's tail
// (coordinator::WorkerView::released; a queued job's session releases them,
// idle_release.h): their pods exit 0 and are finished, not failed, and are
// not made again.
std::set<std::string> ReleasedNodes(const coordinator::JobView& view);
// Takes the nodes the session released since the last pass into their
// records (NodeFault::released). True when there are new ones: the status
// goes out at once (the claims sealed beside the checkpoint name them), so
// that an operator that dies after a release makes no pod there again.
bool TakeReleases(const coordinator::JobView& view, NodeFaults& faults);
// Forgets the released nodes, in memory and in the claims beside
// status.checkpoint: the job's Workload is gone, and with it the
// reclaimablePods that counted them; a new one runs every node again.
// Takes the token: the claims are sealed with it.
void ForgetReleased(const PassView& view, const TokenMemory& token, NodeFaults& faults,
                    api::WeightedJobStatus& status);
// status.checkpoint = `checkpoint`, sealed with the claims now, when it fits
// in kMaxCheckpointBytes; otherwise the last one stays, with a Warning the
// first time. A failed job's status keeps its newest that fit too: what was
// finished.
// Takes the checkpoint's slice of the memory: the token (the seal), the
// released nodes (claimed beside it) and what was announced (the
// CheckpointTooLarge Warning, once).
void KeepCheckpoint(const PassView& view, const CheckpointSlice& seal,
                    api::WeightedJobStatus& status, PassOut& out,
                    const coordinator::Checkpoint& checkpoint);

// --- the outcome of a running session (decide_outcome.cc) ----------------------

// The status the session's view gives (per-node table, progress, result,
// checkpoint) and the phase it leads to: Succeeded with the efficiency
// figures when done, Failed when items or pods failed past their bounds or
// no node could start a worker, else Running or Pending. Reads the session
// and the clock (the timing's moments); `seal.announced` also holds the
// Completed event a short job's success holds back (RefineTiming).
void SessionOutcome(const PassView& view, const SessionMemory& session, const JobClock& clock,
                    const CheckpointSlice& seal, JobSink& sink, const PodCount& count);
// For a job that succeeded and whose session lingers while its pods exit:
// status.timing again, with the first reporter's pod as the pod cache shows
// it now (a short job can finish before the cache saw its pod scheduled and
// started), and the Progressing condition's Completed message with it, so
// that the NOTE and the message agree; the status handed over when that
// changed it. The Completed Event held back for it is told once the
// timing is whole, or when `ending` (the session ends: no more is coming).
void RefineTiming(const PassView& view, const SessionMemory& session, const JobClock& clock,
                  Announced& announced, JobSink& sink, bool ending);

// Pods of a running session: the nodes it released taken (TakeReleases),
// nodes joined, each node managed (ManageNode), the missing pods created
// within the create backoff with the token's Secret. Returns what it
// counted, for SessionOutcome. Fills in the status's failedPods and
// excludedNodes.
PodCount ManagePods(const PassView& view, const TokenMemory& token, NodeFaults& faults,
                    SessionMemory& session, api::WeightedJobStatus& status, PassOut& out);

// --- Kueue (decide_kueue.cc; kueue.h) ------------------------------------------

// A queued job Kueue admitted: its spec placed on the admitted flavors'
// node labels and tolerations (PlaceOnFlavors), and how many nodes its
// session may hold (PassView::placed, PassView::node_limit).
struct Admitted {
  api::WeightedJobSpec placed;
  size_t node_limit = 0;
};
// For a queued job (in.queue): creates its Workload, holds it until Kueue
// admits it, stops it when Kueue evicts it and hands the quota back. Returns
// the admission when the job may run; nullopt while it is held or stopped.
// Takes what stopping the session keeps (the token, the faults, Announced:
// the checkpoint's slice; the released nodes are forgotten with a Workload
// gone) and the Workload's patches (kueue).
std::optional<Admitted> Admission(const PassView& view, const TokenMemory& token,
                                  NodeFaults& faults, Announced& announced, KueueMemory& kueue,
                                  JobSink& sink);
// For a queued job that runs: status.reclaimablePods of its Workload, from
// the session's workers less those done with (released: `faults`).
void ReportReclaimable(const PassView& view, const SessionMemory& session, const NodeFaults& faults,
                       KueueMemory& kueue, JobSink& sink);
// For a queued job suspended (spec.suspend) and stopped: its Workload
// deactivated, then its admission handed back once Kueue evicted it.
void SuspendWorkload(const PassView& view, KueueMemory& kueue, JobSink& sink);
// For a queued job that finished: its Workload's Finished condition.
void FinishWorkload(const PassView& view, const api::WeightedJobStatus& status, KueueMemory& kueue,
                    PassOut& out);

// --- faults of one node's worker (decide_faults.cc) ---------------------------

// status.excludedNodes holds, in this order, the nodes skipped for their
// architecture at registration (reason ArchitectureNotSupported) and the
// nodes whose worker was given up (its image could not start; the kubelet's
// reason), by name: no pod is made on either until the job is suspended and
// resumed (the given-up ones) or registered again (the architecture ones).
// A restarted operator reads them back with the status.
bool ArchitectureRow(const api::ExcludedNode& row);
// The architecture rows as `excluded` (registration): a Warning event naming
// them when they are not the ones the status already named, so that neither
// a later registration nor a restart says it again. True when they changed
// (the status goes out at once).
bool ExcludeArchitectures(const std::vector<api::ExcludedNode>& excluded,
                          api::WeightedJobStatus& status, PassOut& out);
// Adds the nodes given up in this pass (out.given_up); true when there were.
bool AddGivenUp(const PassOut& out, api::WeightedJobStatus& status);
// Forgets the given-up nodes (a suspension, an eviction: resuming tries
// every node again); true when there were.
bool ForgetGivenUp(api::WeightedJobStatus& status);
// True when `node`'s worker is given up; deletes its pod if one is left.
bool GivenUp(const PassView& view, PassOut& out, const std::string& node, const api::PodView* pod,
             bool owned);
// For a Pending pod: when a container waits because it cannot start
// (ErrImagePull, ImagePullBackOff, CreateContainerConfigError, ...), says so
// at once (a WorkerStartBlocked Warning naming the cause), and after
// worker_start_timeout gives the node up — WorkerLost, the pod deleted, a
// WorkerCannotStart event — and returns true; before that asks for a pass at
// the deadline. A pod that mounts the worker's bundle as an image volume and
// waits with CreateContainerError is deleted at once instead, the first time
// on its node, and the node's next pods copy the bundle with the init
// container (NodeFault::image_volume_refused, a WorkerBundleFallback
// event); true then too.
bool WatchImage(const PassView& view, NodeFault& fault, PassOut& out, const std::string& node,
                const api::PodView& pod);
// What keeps a container from starting, short, from the kubelet's waiting
// `reason` and `message` and the container's `image`: "the Secret s3-creds
// does not exist", "the ConfigMap ns/c has no key k", "the image x:1 cannot
// be pulled", "the container cannot be created (PreStartHookError)".
std::string NameStartTrouble(const std::string& reason, const std::string& message,
                             const std::string& image);
// For a Running pod: a CoordinatorUnreachable event (once per node) when its
// worker has not reported to the coordinator within worker_start_timeout of
// starting (or of the session's start, `registered_wall`, when later).
void WatchReach(const PassView& view, double registered_wall, NodeFault& fault, PassOut& out,
                const std::string& node, const api::PodView& pod);
// For a failed pod: a CoordinatorUnreachable event when its termination
// message says the worker could not reach the coordinator.
void ReportUnreachableFailure(const PassView& view, NodeFault& fault, PassOut& out,
                              const std::string& node, const api::PodView& pod);

// --- refused creates (decide_refusals.cc) ---------------------------------------

// Takes what the job's last create task left. A refusal (in.create_refusal)
// is counted into memory.faults.create_backoff (TakeRefusal) and sets the
// condition WorkersRefused True, its reason the class, with a Warning event
// of that reason when a row of refusals starts or its class changes; the
// returned message, when there is one, is the job's failure
// (WorkerPodRefused). Pods created after refusals (in.writes.pods_created)
// end the row: WorkersRefused False (WorkersCreated) and a Normal event.
std::optional<std::string> TakeCreateOutcome(const PassView& view, CreateBackoff& backoff,
                                             api::WeightedJobStatus& status, PassOut& out);
// While the job's creates are refused for what waiting may change (a quota,
// another 403, a transient failure), the workers of `without_pods` (nodes
// whose pods are missing) are declared lost, once each: their planned share
// goes to the workers that run instead of waiting for the coordinator's
// start timeout; one that starts later reports again. A node leaves
// NodeFault::refused once its pod exists.
void LoseRefusedWorkers(const PassView& view, const CreateBackoff& backoff,
                        std::map<std::string, NodeFault>& nodes, PassOut& out,
                        const std::vector<std::string>& without_pods);
// Cuts `missing` to the pods faults.create_backoff lets this pass create
// (CreatesAllowed), asking for a pass when the next create may go.
void GateCreates(const PassView& view, const NodeFaults& faults, PassOut& out,
                 std::vector<nlohmann::json>& missing);

// --- history as the prior (decide_history.cc) ---------------------------------

// The session's worker priors, in session order: its workers' fuzzy weights
// blended with in.history (BlendHistoryPrior), each with its credibility
// (how far `adaptive` trusts it against the first measurements) and the
// duty its worker pod's CPU limit gives it (WorkerDuty). Records each in
// its worker's record (SessionNode::Worker::prior); a HistoryUnavailable
// event when the history source could not answer. Requires the session's
// workers recorded (their weights), and their baselines (from in.history).
std::vector<balance::WorkerPrior> SessionPriors(const PassView& view, SessionMemory& session,
                                                PassOut& out);
// Fills `rows`' prior from the session's workers (rows of a session started
// by an earlier operator keep the prior `shown` in status).
void PriorColumns(const SessionMemory& session, const std::vector<api::NodeRow>& shown,
                  std::vector<api::NodeRow>& rows);
// For a job that just succeeded: status.nodes[].measuredSpeed and
// priorError, each node judged against its baseline (SessionNode::baseline; baselineRatio,
// baselineVerdict, an event for a Slow or fast one), and a RecordSpeeds
// action (coordinator::SpeedsToRecord).
void MeasuredColumns(const PassView& view, const SessionMemory& session,
                     api::WeightedJobStatus& status, PassOut& out);
// For a job that just succeeded after `span_seconds`: status.energy and
// status.nodes[].energyJoules, each node's board power from its labels
// (health::NodePower) over its busy and idle time (health::EstimateJobEnergy).
void EnergyColumns(const PassView& view, api::WeightedJobStatus& status, PassOut& out,
                   double span_seconds);

}  // namespace ballast::controller::decide
