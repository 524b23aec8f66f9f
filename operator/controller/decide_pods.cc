// Decide's registration of a session and its management of a running one's
// pods and status (decide_internal.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>

#include "core/common/json_read.h"
#include "core/common/utf8.h"
#include "core/fuzzy/profile_json.h"
#include "core/job/failure_policy.h"
#include "operator/api/job_status.h"
#include "operator/controller/checkpoint_seal.h"
#include "operator/controller/decide_internal.h"
#include "operator/controller/job_efficiency.h"
#include "operator/controller/job_failures.h"
#include "operator/controller/job_timing.h"
#include "operator/controller/node_selection.h"

namespace ballast::controller::decide {

using nlohmann::json;

namespace {

// The longest status.efficiencyNote (the CRD's maxLength is 1024).
constexpr size_t kMaxNoteBytes = 1000;

// `value` to three decimals, as status shows seconds and ratios.
double Rounded(double value) { return std::round(value * 1000) / 1000; }

// "exit code 3: <message>" of a failed pod's worker container, for events;
// "init container bundle: exit code 2: <message>" when an init container
// failed first (the worker in the user's image, worker_objects.h).
std::string PodFailure(const PodView& pod) {
  for (const ContainerView& init : pod.init_containers) {
    const auto& terminated = init.terminated;
    if (!terminated || terminated->exit_code.value_or(0) == 0) continue;
    std::string text =
        fmt::format("init container {}: exit code {}", init.name, *terminated->exit_code);
    if (!terminated->message.empty()) text += ": " + terminated->message.substr(0, 300);
    return text;
  }
  for (const ContainerView& container : pod.containers) {
    const auto& terminated = container.terminated;
    if (!terminated) continue;
    std::string text = fmt::format("exit code {}", terminated->exit_code.value_or(-1));
    std::string message = terminated->message;
    // The end of the message: a log's tail ends with what went wrong.
    if (message.size() > 300) message = "..." + message.substr(message.size() - 300);
    if (!message.empty()) text += ": " + message;
    return text;
  }
  return pod.reason.empty() ? "no container status" : pod.reason;
}

struct Eligible {
  std::vector<fuzzy::NodeFacts> facts;
  std::map<std::string, NodeReference> references;  // for the efficiency (job_efficiency.h)
  std::map<std::string, double> cores;  // status.capacity.cpu, where the node reports it
  std::vector<std::string> excluded;    // why each other node cannot run a worker
  std::vector<ExcludedNode> architecture_excluded;
};

Eligible EligibleNodes(const Pass& pass) {
  Eligible eligible;
  for (const NodeView& node : pass.in.nodes) {
    const PodTemplate& pods = pass.spec().pod_template;
    std::string why =
        Ineligibility(node, pods.node_selector, pods.tolerations, pods.node_affinity_terms);
    const std::string& name = node.meta.name;
    if (why.empty()) {
      // A node the job selects, whose architecture the operator has no worker for.
      why = ArchitectureExclusion(node, pass.options.architectures);
      if (!why.empty()) {
        eligible.architecture_excluded.push_back(
            {name, "ArchitectureNotSupported", why, /*cause=*/""});
      }
    }
    if (why.empty() && pass.memory.given_up.contains(name)) {
      why = fmt::format("node {}: its worker was given up ({})", name,
                        pass.memory.given_up.at(name).reason);
    }
    if (why.empty() && pass.memory.released.contains(name)) {
      why = fmt::format("node {}: its worker was released in the job's tail", name);
    }
    if (!why.empty()) {
      eligible.excluded.push_back(why);
      continue;
    }
    std::optional<double> budget;
    if (node.cpu_cores && std::isfinite(*node.cpu_cores) && *node.cpu_cores > 0) {
      eligible.cores[name] = *node.cpu_cores;
      const WorkerPodSettings settings = SettingsForArchitecture(
          pass.options.pods, pass.options.architectures, NodeArchitecture(node));
      budget = *node.cpu_cores * WorkerDuty(pass.spec(), node, settings);
    }
    eligible.references[name] = NodeReferenceOf(node, budget);
    eligible.facts.push_back({name, node.meta.labels});
  }
  std::sort(eligible.facts.begin(), eligible.facts.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return eligible;
}

}  // namespace

std::set<std::string> ReleasedNodes(const coordinator::JobView& view) {
  std::set<std::string> nodes;
  for (const coordinator::WorkerView& worker : view.workers) {
    if (worker.released) nodes.insert(worker.name);
  }
  return nodes;
}

void TakeReleases(Pass& pass) {
  const size_t before = pass.memory.released.size();
  pass.memory.released.merge(ReleasedNodes(*pass.in.view));
  if (pass.memory.released.size() > before) pass.write_at_once = true;
}

void RestoreReleased(Pass& pass) {
  if (!pass.status.checkpoint || pass.memory.token.empty()) return;
  auto record = OpenSealedCheckpoint(pass.spec().job.workload.kind, *pass.status.checkpoint,
                                     pass.memory.token, pass.status.items_digest.value_or(""));
  if (!record.ok() || !record->claims) return;
  const auto& names = record->claims->released_nodes;
  pass.memory.released.insert(names.begin(), names.end());
}

void WaitForNodes(Pass& pass, const std::vector<std::string>& excluded) {
  std::string message = "no node can run a worker";
  if (!excluded.empty()) message += ": " + fmt::format("{}", fmt::join(excluded, "; "));
  pass.status.phase = JobPhase::kPending;
  SetCondition(pass.status,
               Condition(ConditionType::kReady, false, Reason::kNoEligibleNodes, message),
               pass.in.job.generation, pass.in.now.rfc3339);
  pass.HandStatus(false);
  pass.requeue_after = std::chrono::milliseconds(10000);
}

std::vector<std::string> EligibleNodeNames(const Pass& pass, std::vector<std::string>* excluded) {
  Eligible eligible = EligibleNodes(pass);
  std::vector<std::string> names;
  for (const auto& facts : eligible.facts) names.push_back(facts.name);
  if (excluded) *excluded = std::move(eligible.excluded);
  return names;
}

namespace {

void FailInPass(Pass& pass, Reason reason, const std::string& message) {
  if (pass.memory.registered && pass.in.checkpoint) KeepCheckpoint(pass, *pass.in.checkpoint);
  pass.status.completion_time = pass.in.now.rfc3339;
  pass.status.workers = 0;
  pass.Transition(JobPhase::kFailed, true, reason, message);
  SetCondition(pass.status, Condition(ConditionType::kFailed, true, reason, message),
               pass.in.job.generation, pass.in.now.rfc3339);
  pass.HandStatus(true);
}

void RememberSession(Pass& pass, const coordinator::JobConfig& config, fuzzy::WeightResult weights,
                     std::map<std::string, NodeReference> references) {
  JobMemory& memory = pass.memory;
  memory.registered = true;
  memory.resumed = config.resume.has_value();
  memory.registered_wall = pass.in.now.wall;
  memory.done_at.reset();
  memory.nodes.clear();
  for (const auto& node : weights.nodes) memory.nodes.push_back(node.name);
  memory.base_items.clear();
  for (const auto& row : pass.status.nodes.value_or(std::vector<NodeRow>{})) {
    memory.base_items[row.name] = row.items;
  }
  memory.weights = std::move(weights);
  memory.references = std::move(references);
  if (!pass.status.start_time) pass.status.start_time = pass.in.now.rfc3339;
}

void AnnounceSession(Pass& pass, const coordinator::JobConfig& config) {
  std::vector<std::string> listed;
  size_t from_history = 0;
  for (const auto& node : pass.memory.weights.nodes) {
    auto prior = pass.memory.priors.find(node.name);
    const bool learned = prior != pass.memory.priors.end() && prior->second.source != "profile";
    from_history += learned ? 1 : 0;
    listed.push_back(learned ? fmt::format("{} {:g} ({} {:g})", node.name, node.weight,
                                           prior->second.source, prior->second.value)
                             : fmt::format("{} {:g}", node.name, node.weight));
  }
  const auto& job = pass.spec().job;
  const bool resumed = pass.memory.resumed;
  const std::string message =
      resumed ? fmt::format("resumed from the checkpoint at {} of {} items; weights {}",
                            config.resume->completed.size(), job.workload.items,
                            fmt::join(listed, ", "))
              : fmt::format("started on {} nodes with policy {}; weights {}", listed.size(),
                            job.policy.name(), fmt::join(listed, ", "));
  const std::string learned =
      from_history > 0 ? fmt::format("; priors from history on {} of {} nodes ({})", from_history,
                                     listed.size(), pass.in.history->origin)
                       : "";
  pass.Event(false, resumed ? Reason::kResumed : Reason::kStarted, message + learned);
}

// What a restarted operator says the job started at, and how many of its
// pods failed, when status.checkpoint holds no claims it can trust: the
// start within [created, now] (a start before the job existed, or one still
// to come, is not one the operator wrote), the failures as written.
void BoundUntrustedClaims(Pass& pass) {
  const auto created = ParseRfcTime(pass.in.job.meta.creation_timestamp);
  const auto started = ParseRfcTime(pass.status.start_time.value_or(""));
  if (!pass.status.start_time) return;
  std::string bounded;
  if (!started || (created && *started < *created)) {
    bounded = pass.in.job.meta.creation_timestamp;
  } else if (*started > pass.in.now.wall) {
    bounded = pass.in.now.rfc3339;
  }
  if (bounded.empty() || bounded == *pass.status.start_time) return;
  pass.Event(true, Reason::kStatusRestored,
             fmt::format("status.startTime {} is not a time this job started (it was created "
                         "at {}); it counts from {}",
                         *pass.status.start_time, pass.in.job.meta.creation_timestamp, bounded));
  pass.status.start_time = bounded;
}

// status.startTime and status.failedPods as the operator sealed them beside
// the checkpoint: changed since (by someone with status rights), they are
// put back with a Warning, so activeDeadlineSeconds and backoffLimit count
// from what happened.
void RestoreClaims(Pass& pass, const SealedClaims& claims) {
  pass.memory.released.insert(claims.released_nodes.begin(), claims.released_nodes.end());
  std::vector<std::string> changed;
  const std::string start = pass.status.start_time.value_or("");
  if (!claims.start_time.empty() && start != claims.start_time) {
    changed.push_back(fmt::format("startTime {} (was {})", claims.start_time, start));
    pass.status.start_time = claims.start_time;
  }
  if (pass.memory.failures != claims.failed_pods) {
    changed.push_back(
        fmt::format("failedPods {} (was {})", claims.failed_pods, pass.memory.failures));
    pass.memory.failures = static_cast<uint32_t>(claims.failed_pods);
    pass.status.failed_pods = static_cast<int64_t>(claims.failed_pods);
  }
  if (changed.empty()) return;
  pass.Event(true, Reason::kStatusRestored,
             fmt::format("status was changed since the operator wrote it; put back what it "
                         "sealed beside the checkpoint: {}",
                         fmt::join(changed, ", ")));
}

// The checkpoint in status to resume from, when the operator sealed it with
// the job's token (checkpoint_seal.h), with the claims sealed beside it put
// back. One it did not (written by someone with status rights) is not
// resumed from: the job starts again from its first item, its claimed
// progress and per-node counts dropped, with a Warning saying why. Redoing
// work is safe; counting items that never ran is not.
std::optional<coordinator::Checkpoint> TrustedCheckpoint(Pass& pass) {
  if (!pass.status.checkpoint) {
    BoundUntrustedClaims(pass);
    return std::nullopt;
  }
  const auto& workload = pass.spec().job.workload;
  auto record = OpenSealedCheckpoint(workload.kind, *pass.status.checkpoint, pass.memory.token,
                                     pass.status.items_digest.value_or(""));
  if (record.ok()) {
    if (record->claims) {
      RestoreClaims(pass, *record->claims);
    } else {
      BoundUntrustedClaims(pass);
    }
    return std::move(record->checkpoint);
  }
  pass.Event(true, Reason::kCheckpointRejected,
             fmt::format("status.checkpoint is not resumed from: {}; the job starts again from "
                         "its first item",
                         record.status().message()));
  pass.status.checkpoint.reset();
  pass.status.completed_items = 0;
  pass.status.completed_cost.reset();
  pass.status.progress = ProgressText(0, workload.items);
  pass.status.result.reset();
  pass.status.nodes.reset();
  BoundUntrustedClaims(pass);
  return std::nullopt;
}

}  // namespace

std::optional<coordinator::JobConfig> Registration(Pass& pass, const fuzzy::Profile& profile) {
  RestoreGivenUp(pass);
  RestoreReleased(pass);
  Eligible eligible = EligibleNodes(pass);
  AnnounceArchitectureExclusions(pass, eligible.architecture_excluded);
  pass.memory.architecture_excluded = std::move(eligible.architecture_excluded);
  ExcludedStatus(pass);
  if (eligible.facts.empty()) {
    WaitForNodes(pass, eligible.excluded);
    return std::nullopt;
  }
  auto weights = fuzzy::ComputeWeights(profile, eligible.facts);
  if (!weights.ok()) {
    FailInPass(pass, Reason::kInvalidProfile, weights.status().message());
    return std::nullopt;
  }
  for (const auto& warning : GroupNodeWarnings(weights->warnings))
    pass.Event(true, Reason::kNodeLabelDefaulted, warning);
  const auto& job = pass.spec().job;
  coordinator::JobConfig config;
  config.id = pass.in.id;
  config.metric_name = pass.in.name;
  config.metric_namespace = pass.in.ns;
  config.history_key = HistoryKey(pass.spec());
  config.token = pass.memory.token;
  config.workload = job.workload;
  config.policy = job.policy;
  config.lease_seconds = job.lease_seconds;
  config.verify.fraction = job.verify_fraction;
  // Under Kueue an idle worker's pod holds quota another job could use: the
  // session lets idle workers go in the tail (idle_release.h). Elsewhere they
  // stay, ready to steal or back up to the end.
  config.release_idle = pass.in.queue.has_value();
  config.start_timeout_s = pass.options.start_timeout_s;
  config.workers = SessionPriors(pass, *weights);
  // The history the priors came from: the speeds the coordinator exports for
  // Prometheus's history enter winsorized, as the ConfigMap store's do.
  config.baseline = pass.memory.baseline;
  config.deviation = pass.options.deviation;
  // A worker's CPU seconds cannot exceed its node's cores over the time it
  // had (JobSession bounds them so).
  config.worker_cores = std::move(eligible.cores);
  config.resume = TrustedCheckpoint(pass);
  RememberSession(pass, config, std::move(*weights), std::move(eligible.references));
  AnnounceSession(pass, config);
  // At once: startTime is set in this pass only (the Accepted status may
  // have been handed a moment ago, so the interval has not passed).
  pass.HandStatus(true);
  return config;
}

namespace {

// What ManagePods counts while it walks the session's nodes.
struct PodCount {
  int running = 0;
  int alive = 0;     // pods that may still compute (Pending or Running), or about to be made
  int released = 0;  // workers released in the tail whose pods are finished or gone
  // Released by an earlier session of the job (before the operator
  // restarted, or the job was stopped): not in this one.
  int released_before = 0;
  std::vector<json> missing;
  std::vector<std::string> missing_nodes;  // the nodes of `missing`, in its order
};

const PodView* PodOf(const Pass& pass, const std::string& node) {
  return pass.PodNamed(WorkerPodName(pass.in.name, node));
}

// The node cannot run the job's worker now: not Ready, gone, or no longer
// one the job would be placed on (`why`: cordoned, drained, labelled out of
// the selector, tainted). Its worker is lost at once, so that its lease moves
// with no wait for it to expire, and its pod is deleted.
void LoseNode(Pass& pass, const std::string& node, const NodeView* object, const std::string& why,
              const PodView* pod, bool owned) {
  const bool done = pass.in.view->done;
  if (pass.memory.lost_nodes.insert(node).second && !done) {
    pass.actions.push_back(WorkerLost{node});
    if (!object || !object->ready) {
      pass.Event(
          true, Reason::kNodeNotReady,
          fmt::format("node {} is not Ready; its unfinished items go to the other workers", node));
    } else {
      pass.memory.left_nodes.insert(node);
      pass.Event(false, Reason::kNodeLeft,
                 fmt::format("{}; its worker leaves the job and its unfinished items go to the "
                             "other workers",
                             why));
    }
  }
  if (owned && !pod->meta.deleting) pass.actions.push_back(DeletePod{pod->meta.name, ""});
}

void CountFailure(Pass& pass, const std::string& node, const PodView& pod) {
  const uint32_t limit = pass.spec().job.backoff_limit;
  if (pass.memory.counted_failures.insert(pod.meta.uid).second) {
    const uint32_t failures = ++pass.memory.failures;
    pass.actions.push_back(WorkerLost{node});
    pass.Event(true, Reason::kWorkerFailed,
               fmt::format("pod {} on {} failed ({}); failure {} of backoffLimit {}{}",
                           pod.meta.name, node, PodFailure(pod), failures, limit,
                           failures <= limit ? ", replacing it" : ", not replaced"));
    ReportUnreachableFailure(pass, node, pod);
  }
  if (!pod.meta.deleting) pass.actions.push_back(DeletePod{pod.meta.name, pod.meta.uid});
}

// For a node whose worker the session released: true, counted as released,
// when its pod is gone or Succeeded (the worker exited 0 on its "done"),
// which is neither made again nor a failure; false while it still runs (or
// failed), which ManageNode counts as any other pod.
bool ReleasedPodFinished(const PodView* pod, bool owned, PodCount& count) {
  if (pod && owned && pod->phase != PodPhase::kSucceeded) return false;
  ++count.released;
  return true;
}

void ManageNode(Pass& pass, const std::string& node, PodCount& count) {
  const PodView* pod = PodOf(pass, node);
  const NodeView* node_object = pass.NodeNamed(node);
  const bool owned = pod && pod->meta.OwnedBy(pass.uid);
  const bool done = pass.in.view->done;
  if (GivenUp(pass, node, pod, owned)) return;
  // Released: its node may go or turn ineligible now without loss.
  if (pass.memory.released.contains(node) && ReleasedPodFinished(pod, owned, count)) return;
  const PodTemplate& pods = pass.spec().pod_template;
  const std::string why = node_object ? Ineligibility(*node_object, pods.node_selector,
                                                      pods.tolerations, pods.node_affinity_terms)
                                      : "gone";
  if (!why.empty()) return LoseNode(pass, node, node_object, why, pod, owned);
  if (pass.memory.lost_nodes.erase(node) && !done) {
    if (pass.memory.left_nodes.erase(node)) {
      pass.Event(
          false, Reason::kNodeEligible,
          fmt::format("node {} can run the job's worker again; its worker starts again", node));
    } else {
      pass.Event(false, Reason::kNodeReady,
                 fmt::format("node {} is Ready again; its worker starts again", node));
    }
  }
  if (!pod) {
    if (done || pass.memory.failures > pass.spec().job.backoff_limit) return;
    const std::string name = WorkerPodName(pass.in.name, node);
    if (!pass.in.writes.creating && !pass.in.writes.on_their_way.contains(name)) {
      WorkerPodSettings settings = SettingsForArchitecture(
          pass.options.pods, pass.options.architectures, NodeArchitecture(*node_object));
      settings.coordinator_job = pass.in.id;
      settings.node_cpu = DeclaredSpeed(*node_object);
      count.missing.push_back(BuildWorkerPod(pass.in.job.meta, pass.spec(), node, settings));
      count.missing_nodes.push_back(node);
    }
    ++count.alive;
    return;
  }
  if (!owned) return;  // an earlier job's pod of this name, on its way out
  const PodPhase phase = pod->phase;
  const bool deleting = pod->meta.deleting;
  if (phase == PodPhase::kPending && !deleting && WatchImage(pass, node, *pod)) return;
  if (phase == PodPhase::kRunning) WatchReach(pass, node, *pod);
  if (phase == PodPhase::kRunning) ++count.running;
  if ((phase == PodPhase::kRunning || phase == PodPhase::kPending) && !deleting) ++count.alive;
  if (phase == PodPhase::kFailed || (phase == PodPhase::kSucceeded && !done)) {
    CountFailure(pass, node, *pod);
  }
}

// `value` to four significant digits, as status shows speeds (seconds per
// cost unit may be far below a millisecond).
double FourDigits(double value) {
  return std::strtod(fmt::format("{:.4g}", value).c_str(), nullptr);  // never throws
}

// status.costModel of the session's view (weighted_job.h): nullopt when its
// policy learns no costs.
std::optional<CostModelStatus> CostModelOf(const coordinator::JobView& view) {
  if (!view.policy.learning_costs) return std::nullopt;
  CostModelStatus model;
  model.start_cost = FourDigits(view.policy.start_cost);
  model.learned = view.policy.start_cost > 0;
  model.samples = view.policy.cost_samples;
  double busy_s = 0;
  double work = 0;  // in the model's units
  for (const auto& worker : view.workers) {
    busy_s += worker.MergedBusySeconds();
    work += worker.cost + view.policy.start_cost * static_cast<double>(worker.items);
  }
  if (busy_s > 0 && work > 0) {
    model.seconds_per_cost = FourDigits(busy_s / work);
    model.start_seconds = FourDigits(view.policy.start_cost * busy_s / work);
  }
  return model;
}

void NodeTable(Pass& pass) {
  const coordinator::JobView& view = *pass.in.view;
  std::map<std::string, const fuzzy::NodeWeight*> weights;
  for (const auto& weight : pass.memory.weights.nodes) weights[weight.name] = &weight;
  std::vector<NodeRow> rows;
  for (const auto& worker : view.workers) {
    const auto found = weights.find(worker.name);
    if (found == weights.end()) continue;
    const fuzzy::NodeWeight& weight = *found->second;
    NodeRow row;
    row.name = worker.name;
    row.weight = weight.weight;
    row.score = std::round(weight.score * 1e4) / 1e4;
    const double busy_s = worker.MergedBusySeconds();
    row.estimated_speed = busy_s > 0 ? std::round(worker.items / busy_s * 100) / 100 : 0.0;
    row.cost = Rounded(worker.cost);
    if (busy_s > 0) row.cost_speed = Rounded(worker.cost / busy_s);
    row.items = pass.memory.base_items[worker.name] + worker.items;
    row.steals = worker.cuts;
    if (worker.dropped_busy_s > 0) row.duplicate_seconds = Rounded(worker.dropped_busy_s);
    row.pod = WorkerPodName(pass.in.name, worker.name);
    rows.push_back(std::move(row));
  }
  // A worker an earlier session released keeps its row as last written:
  // its items count in the job's.
  for (const NodeRow& row : pass.status.nodes.value_or(std::vector<NodeRow>{})) {
    if (pass.memory.released.contains(row.name) && !weights.contains(row.name)) {
      rows.push_back(row);
    }
  }
  PriorColumns(pass, rows);
  pass.status.nodes = std::move(rows);
}

// The moments of the session's first report, in unix seconds (decide.h's
// view times are the coordinator's: the session started at
// memory.registered_wall).
TimingMoments Moments(const Pass& pass) {
  const coordinator::JobView& view = *pass.in.view;
  const JobMemory& memory = pass.memory;
  const auto unix_time = [&](double t) { return memory.registered_wall + (t - view.started_at); };
  TimingMoments moments;
  moments.created = ParseRfcTime(pass.in.job.meta.creation_timestamp);
  if (memory.accepted_wall > 0) moments.accepted = memory.accepted_wall;
  moments.started = memory.registered_wall;
  moments.finished = unix_time(view.finished_at);
  moments.resumed = memory.resumed;
  const coordinator::WorkerView* first = nullptr;
  for (const auto& worker : view.workers) {
    if (worker.contacted && (!first || worker.first_contact < first->first_contact)) {
      first = &worker;
    }
  }
  if (!first) return moments;
  moments.first_report = unix_time(first->first_contact);
  moments.first_node = first->name;
  const PodView* pod = PodOf(pass, first->name);
  if (!pod || !pod->meta.OwnedBy(pass.uid)) return moments;
  moments.scheduled = ParseRfcTime(pod->scheduled_at);
  moments.sandbox_ready = ParseRfcTime(pod->sandbox_ready_at);
  if (!pod->containers.empty()) {
    const ContainerView& worker = pod->containers[0];
    const std::string& started =
        worker.terminated ? worker.terminated->started_at : worker.started_at;
    moments.container_started = ParseRfcTime(started);
  }
  for (const ContainerView& init : pod->init_containers) {
    const auto finished =
        init.terminated ? ParseRfcTime(init.terminated->finished_at) : std::nullopt;
    if (finished) moments.init_finished = std::max(moments.init_finished.value_or(0), *finished);
  }
  return moments;
}

// The efficiency figures of the pass's finished session, which took `makespan_s`.
EfficiencyFigures JobEfficiency(const Pass& pass, double makespan_s) {
  const auto& workload = pass.spec().job.workload;
  ItemBound items;
  items.largest_share = workload::LargestItemShare(workload);
  if (workload.kind == workload::WorkloadKind::kExec) items.concurrency = workload.exec.concurrency;
  return ComputeEfficiency(*pass.in.view, makespan_s, pass.memory.references, items);
}

// status.timing and status.efficiencyNote of a finished session.
void TimingColumns(Pass& pass, const EfficiencyFigures& figures) {
  const JobTiming timing = ComputeTiming(Moments(pass), figures.ideal_s);
  pass.status.timing = TimingToJson(timing);
  pass.status.efficiency_note = json_read::Cut(TimingSummary(timing), kMaxNoteBytes);
}

void Succeed(Pass& pass) {
  const coordinator::JobView& view = *pass.in.view;
  JobMemory& memory = pass.memory;
  if (!memory.done_at) memory.done_at = pass.in.now.steady;
  double makespan = view.finished_at - view.started_at;
  if (memory.resumed) {
    const auto started = ParseRfcTime(pass.status.start_time.value_or(""));
    if (started) makespan += memory.registered_wall - *started;
  }
  const EfficiencyFigures figures = JobEfficiency(pass, makespan);
  WeightedJobStatus& status = pass.status;
  const bool first_time = !status.Is(JobPhase::kSucceeded);
  if (first_time) {
    // The figures of the pass that saw the job finish; later passes (while
    // the pods exit) keep them.
    status.completion_time = pass.in.now.rfc3339;
    status.makespan_seconds = Rounded(makespan);
    status.ideal_seconds = Rounded(figures.ideal_s);
    status.efficiency = Rounded(figures.efficiency);
    status.efficiency_reference = ReferenceSourceName(figures.source);
    status.limit_bound = balance::LimitBoundName(figures.bound);
    status.estimated_ideal_seconds = Rounded(figures.estimated_ideal_s);
    status.estimated_efficiency = Rounded(figures.estimated_efficiency);
    TimingColumns(pass, figures);
    MeasuredColumns(pass);
    EnergyColumns(pass, makespan);
  }
  status.workers = 0;
  status.checkpoint.reset();  // the result is final
  const uint64_t failed = status.failed_items.value_or(0);
  const std::string against =
      figures.source == ReferenceSource::kEstimate
          ? fmt::format("the job's own estimate: {}", figures.missing)
          : fmt::format("against {}, {}-bound; the job's own estimate {:.3f}",
                        ReferenceSourceName(figures.source), balance::LimitBoundName(figures.bound),
                        status.estimated_efficiency.value_or(0));
  std::string message =
      failed == 0
          ? fmt::format("all {} items finished", view.items)
          : fmt::format("{} of {} items succeeded, {} failed ({})", view.items - failed, view.items,
                        failed, job::FailurePolicyName(pass.spec().job.max_failed_items));
  message +=
      fmt::format(" in {:.1f} s on {} nodes (efficiency {:.3f}, {}); {}",
                  status.makespan_seconds.value_or(makespan), view.workers.size(),
                  status.efficiency.value_or(0), against, status.efficiency_note.value_or(""));
  pass.Transition(JobPhase::kSucceeded, failed > 0, Reason::kCompleted, message);
  const std::string complete =
      failed == 0
          ? "every item's result is merged"
          : fmt::format("{} item{} failed all attempts, within {}: {}", failed,
                        failed == 1 ? "" : "s",
                        job::FailurePolicyName(pass.spec().job.max_failed_items),
                        NameFailedItems(view.result, pass.spec().job.workload.item_values.get()));
  SetCondition(
      status,
      Condition(ConditionType::kComplete, true,
                failed == 0 ? Reason::kAllItemsFinished : Reason::kCompletedWithFailedItems,
                complete),
      pass.in.job.generation, pass.in.now.rfc3339);
}

}  // namespace

void RefineTiming(Pass& pass) {
  const bool lingering = pass.memory.registered && pass.in.view && pass.in.view->done;
  if (!pass.status.Is(JobPhase::kSucceeded) || !lingering) return;
  TimingColumns(pass, JobEfficiency(pass, pass.status.makespan_seconds.value_or(0)));
  pass.HandStatus(true);
}

namespace {

// The last checkpoint that fit, sealed again with `claims` when they changed
// since (a pod failed), so that a restart does not take the claims in status
// for changed ones.
void ResealClaims(Pass& pass, const SealedClaims& claims) {
  if (!pass.status.checkpoint) return;
  if (pass.status.checkpoint->value(kCheckpointClaimsKey, json()) == ClaimsJson(claims)) return;
  const std::string digest = pass.status.items_digest.value_or("");
  auto record = OpenSealedCheckpoint(pass.spec().job.workload.kind, *pass.status.checkpoint,
                                     pass.memory.token, digest);
  if (!record.ok() || record->claims == claims) return;
  pass.status.checkpoint =
      SealedCheckpointJson(record->checkpoint, pass.memory.token, digest, claims);
}

// The claims sealed beside the checkpoint now.
SealedClaims ClaimsNow(const Pass& pass) {
  return SealedClaims{
      pass.status.start_time.value_or(""), pass.memory.failures,
      std::vector<std::string>(pass.memory.released.begin(), pass.memory.released.end())};
}

}  // namespace

void ForgetReleased(Pass& pass) {
  pass.memory.released.clear();
  if (!pass.status.checkpoint || pass.memory.token.empty()) return;
  const std::string digest = pass.status.items_digest.value_or("");
  auto record = OpenSealedCheckpoint(pass.spec().job.workload.kind, *pass.status.checkpoint,
                                     pass.memory.token, digest);
  if (!record.ok() || !record->claims || record->claims->released_nodes.empty()) return;
  // The other claims as sealed: this operator may not have taken them yet.
  SealedClaims claims = *record->claims;
  claims.released_nodes.clear();
  pass.status.checkpoint =
      SealedCheckpointJson(record->checkpoint, pass.memory.token, digest, claims);
}

void KeepCheckpoint(Pass& pass, const coordinator::Checkpoint& checkpoint) {
  const SealedClaims claims = ClaimsNow(pass);
  json compact = SealedCheckpointJson(checkpoint, pass.memory.token,
                                      pass.status.items_digest.value_or(""), claims);
  const size_t bytes = DumpJson(compact).size();
  if (bytes <= kMaxCheckpointBytes) {
    pass.status.checkpoint = std::move(compact);
    return;
  }
  ResealClaims(pass, claims);
  if (pass.memory.checkpoint_too_large_reported) return;
  pass.memory.checkpoint_too_large_reported = true;
  pass.Event(
      true, Reason::kCheckpointTooLarge,
      fmt::format("the checkpoint of {} ranges is {} KiB, over the {} KiB kept in the "
                  "status; the last one that fit stays (a resume would redo more work)",
                  checkpoint.completed.Ranges().size(), bytes >> 10, kMaxCheckpointBytes >> 10));
}

namespace {

// status.failedItems and failedItemValues from the view's result; an
// ItemsFailed Warning when more items failed since the last one; the job
// Failed as core/job/failure_policy.h says: at once (TooManyFailedItems) past
// spec.failurePolicy.maxFailedItems, or once every item was attempted
// (FailedItems) when it is unset. Returns true when it failed the job.
bool CountFailedItems(Pass& pass) {
  const workload::Result& result = pass.in.view->result;
  const uint64_t failed = result.FailedItems();
  const std::optional<uint64_t> max = pass.spec().job.max_failed_items;
  const std::vector<std::string>* values = pass.spec().job.workload.item_values.get();
  pass.status.failed_items = failed;
  pass.status.failed_item_values =
      values ? result.FailedValues(*values, workload::Result::kShownFailedValues)
             : std::vector<std::string>{};
  if (failed == 0) return false;
  const std::string named = NameFailedItems(result, values);
  if (failed > pass.memory.failed_items_reported) {
    pass.memory.failed_items_reported = failed;
    pass.Event(true, Reason::kItemsFailed,
               fmt::format("{} item{} failed all attempts so far ({}): {}", failed,
                           failed == 1 ? "" : "s", job::FailurePolicyName(max), named));
  }
  const auto failure = FailureByItems(result, pass.in.view->items, pass.in.view->done, max, values,
                                      "in status.result");
  if (!failure) return false;
  FailInPass(pass, failure->reason, failure->message);
  return true;
}

void RunningStatus(Pass& pass, const PodCount& count) {
  const uint32_t limit = pass.spec().job.backoff_limit;
  if (pass.in.checkpoint) KeepCheckpoint(pass, *pass.in.checkpoint);
  if (!pass.memory.nodes.empty() && pass.memory.given_up.size() >= pass.memory.nodes.size()) {
    // Grouped by cause: "the Secret s3 does not exist (pi3b-0, pi4b-0)".
    std::map<std::string, std::vector<std::string>> nodes_by_cause;
    for (const auto& [node, excluded] : pass.memory.given_up) {
      nodes_by_cause[excluded.cause.empty() ? excluded.reason : excluded.cause].push_back(node);
    }
    std::vector<std::string> why;
    for (const auto& [cause, nodes] : nodes_by_cause) {
      why.push_back(fmt::format("{} ({})", cause, ListSome(nodes, 10, ", ")));
    }
    const std::string message =
        fmt::format("no node could start the job's worker: {}", fmt::join(why, "; "));
    pass.status.completion_time = pass.in.now.rfc3339;
    pass.Transition(JobPhase::kFailed, true, Reason::kNoWorkerCanStart, message);
    SetCondition(pass.status,
                 Condition(ConditionType::kFailed, true, Reason::kNoWorkerCanStart, message),
                 pass.in.job.generation, pass.in.now.rfc3339);
    return;
  }
  if (pass.memory.failures > limit && count.alive == 0) {
    const std::string message = fmt::format(
        "{} worker pods failed (backoffLimit {}) and none is left", pass.memory.failures, limit);
    pass.status.completion_time = pass.in.now.rfc3339;
    pass.Transition(JobPhase::kFailed, true, Reason::kBackoffLimitExceeded, message);
    SetCondition(pass.status,
                 Condition(ConditionType::kFailed, true, Reason::kBackoffLimitExceeded,
                           "worker pods failed"),
                 pass.in.job.generation, pass.in.now.rfc3339);
    return;
  }
  const int released = count.released + count.released_before;
  std::string workers = fmt::format("{} of {} workers running", count.running,
                                    pass.memory.nodes.size() + count.released_before);
  if (released > 0) {
    workers += fmt::format(", {} released (the job has no work left for {})", released,
                           released == 1 ? "it" : "them");
  }
  const bool was_running = pass.status.Is(JobPhase::kRunning);
  pass.Transition(count.running > 0 ? JobPhase::kRunning : JobPhase::kPending, false,
                  count.running > 0 ? Reason::kWorkersRunning : Reason::kWaitingForWorkers,
                  workers);
  // The event of the move to Running counts the workers then; once every
  // worker runs, another says so (and again after one was replaced).
  const bool all =
      !pass.memory.nodes.empty() && static_cast<size_t>(count.running) >= pass.memory.nodes.size();
  if (all && was_running && !pass.memory.all_running_announced) {
    pass.Event(false, Reason::kWorkersRunning, workers);
  }
  pass.memory.all_running_announced = all;
  SetCondition(
      pass.status,
      Condition(ConditionType::kSuspended, false, Reason::kNotSuspended, "spec.suspend is false"),
      pass.in.job.generation, pass.in.now.rfc3339);
}

}  // namespace

namespace {

// Nodes that became eligible since the session started (added, Ready,
// uncordoned, labelled into the selector) join it: AddWorker with their
// prior, a NodeJoined event; ManageNode then makes their pods.
namespace {

// The eligible nodes not yet in the session; under Kueue, within the pods
// its Workload was admitted with: a node beyond them waits for the job's
// next admission (kueue.h).
std::vector<const fuzzy::NodeFacts*> JoiningNodes(const Pass& pass, const Eligible& eligible,
                                                  const std::set<std::string>& known) {
  std::vector<const fuzzy::NodeFacts*> joining;
  for (const auto& facts : eligible.facts) {
    if (!known.contains(facts.name)) joining.push_back(&facts);
  }
  if (pass.node_limit) {
    const size_t room = pass.memory.nodes.size() < *pass.node_limit
                            ? *pass.node_limit - pass.memory.nodes.size()
                            : 0;
    if (joining.size() > room) joining.resize(room);
  }
  return joining;
}

// The factors that bring a relative score onto the session's weights and
// priors, from its nodes weighed again now (`weights` past the first
// `joining`): the ratio of their weights and priors to their unrounded
// relative scores; 1 and 1 when they say nothing.
std::pair<double, double> SessionScales(const Pass& pass, const fuzzy::WeightResult& weights,
                                        size_t joining) {
  double relative_sum = 0;
  double weight_sum = 0;
  double prior_sum = 0;
  for (size_t i = joining; i < weights.nodes.size(); ++i) {
    const fuzzy::NodeWeight& now = weights.nodes[i];
    const auto prior = pass.memory.priors.find(now.name);
    const auto then =
        std::find_if(pass.memory.weights.nodes.begin(), pass.memory.weights.nodes.end(),
                     [&](const fuzzy::NodeWeight& node) { return node.name == now.name; });
    if (prior == pass.memory.priors.end() || then == pass.memory.weights.nodes.end()) continue;
    relative_sum += now.relative;
    weight_sum += then->weight;
    prior_sum += prior->second.value;
  }
  if (!(relative_sum > 0 && weight_sum > 0 && prior_sum > 0)) return {1, 1};
  return {weight_sum / relative_sum, prior_sum / relative_sum};
}

}  // namespace

void JoinNodes(Pass& pass) {
  if (pass.in.view->done || !pass.in.profile) return;
  const Eligible eligible = EligibleNodes(pass);
  const std::set<std::string> known(pass.memory.nodes.begin(), pass.memory.nodes.end());
  const std::vector<const fuzzy::NodeFacts*> joining = JoiningNodes(pass, eligible, known);
  if (joining.empty()) return;
  // Parsed only when someone joins, not on every pass. A profile deleted or
  // broken since the start cannot weigh a newcomer; the session goes on with
  // the nodes it has.
  const auto profile = fuzzy::ProfileFromJson(*pass.in.profile);
  if (!profile.ok()) return;
  // Weighed with the session's nodes still here, and brought onto the
  // session's scales through them: a weight is relative to the slowest node
  // weighed (which a slower newcomer changes) and rounded, and the session's
  // priors may be on history's scale. It has no history of its own here
  // (credibility 0): its first measurement replaces the prior.
  std::vector<fuzzy::NodeFacts> facts;
  for (const auto* node : joining) facts.push_back(*node);
  for (const auto& node : eligible.facts) {
    if (known.contains(node.name)) facts.push_back(node);
  }
  const auto weights = fuzzy::ComputeWeights(*profile, facts);
  if (!weights.ok()) return;
  const auto [to_weights, to_priors] = SessionScales(pass, *weights, joining.size());
  for (size_t i = 0; i < joining.size(); ++i) {
    fuzzy::NodeWeight weight = weights->nodes[i];
    const double relative = weight.relative;
    weight.weight = Rounded(relative * to_weights);
    weight.relative = relative * to_weights;
    const std::string& name = weight.name;
    const NodeView* node = pass.NodeNamed(name);
    balance::WorkerPrior prior{
        name, std::clamp(relative * to_priors, balance::kMinPriorSpeed, balance::kMaxPriorSpeed)};
    if (node) {
      const WorkerPodSettings settings = SettingsForArchitecture(
          pass.options.pods, pass.options.architectures, NodeArchitecture(*node));
      prior.duty = WorkerDuty(pass.spec(), *node, settings);
    }
    std::optional<double> cores;
    if (auto it = eligible.cores.find(name); it != eligible.cores.end()) cores = it->second;
    if (auto it = eligible.references.find(name); it != eligible.references.end()) {
      pass.memory.references[name] = it->second;
    }
    pass.memory.nodes.push_back(name);
    pass.memory.weights.nodes.push_back(weight);
    pass.memory.priors[name] = {"profile", prior.speed, 0, 0};
    pass.actions.push_back(AddWorker{prior, cores});
    pass.Event(false, Reason::kNodeJoined,
               fmt::format("node {} can run the job's worker now; it joins the running job with "
                           "weight {:g}",
                           name, weight.weight));
  }
}

}  // namespace

void ManagePods(Pass& pass) {
  TakeReleases(pass);
  JoinNodes(pass);
  PodCount count;
  for (const auto& node : pass.memory.nodes) ManageNode(pass, node, count);
  const std::set<std::string> in_session(pass.memory.nodes.begin(), pass.memory.nodes.end());
  for (const auto& node : pass.memory.released) count.released_before += !in_session.contains(node);
  LoseRefusedWorkers(pass, count.missing_nodes);
  GateCreates(pass, count.missing);
  if (!count.missing.empty()) {
    pass.actions.push_back(CreateObjects{BuildTokenSecret(pass.in.job.meta, pass.memory.token),
                                         pass.memory.token, std::move(count.missing),
                                         /*restore=*/!pass.memory.secret_pending});
  }
  const coordinator::JobView& view = *pass.in.view;
  pass.status.failed_pods = pass.memory.failures;
  pass.status.workers = count.running;
  pass.status.completed_items = view.completed;
  pass.status.completed_cost = Rounded(view.completed_cost);
  pass.status.cost_model = CostModelOf(view);
  pass.status.progress = ProgressText(view.completed, view.items);
  pass.status.result = view.result.ToStatusJson(pass.spec().job.workload.item_values.get());
  NodeTable(pass);
  ExcludedStatus(pass);
  // A failed verification also ends the session (view.done): it fails the job.
  if (!view.verification.failure.empty()) {
    return FailInPass(pass, Reason::kVerificationFailed, view.verification.failure);
  }
  if (CountFailedItems(pass)) return;
  if (view.done) return Succeed(pass);
  RunningStatus(pass, count);
}

}  // namespace ballast::controller::decide
