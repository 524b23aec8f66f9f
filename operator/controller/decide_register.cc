// Decide's registration of a job's session (decide_internal.h): the nodes
// it may run on, weighed, with their priors, resuming from the checkpoint
// in status; what it remembers of the session, and the event that says so.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/health/deviation.h"
#include "operator/controller/decide_internal.h"
#include "operator/controller/node_selection.h"

namespace ballast::controller::decide {

Eligible EligibleNodes(const PassView& view, const NodeFaults& faults) {
  Eligible eligible;
  for (const api::NodeView& node : view.in.nodes) {
    const api::PodTemplate& pods = view.spec().pod_template;
    std::string why =
        Ineligibility(node, pods.node_selector, pods.tolerations, pods.node_affinity_terms);
    const std::string& name = node.meta.name;
    if (why.empty()) {
      // A node the job selects, whose architecture the operator has no worker for.
      why = ArchitectureExclusion(node, view.options.architectures);
      if (!why.empty()) {
        eligible.architecture_excluded.push_back(
            {name, "ArchitectureNotSupported", why, /*cause=*/""});
      }
    }
    if (const api::ExcludedNode* given_up = view.GivenUpRow(name); why.empty() && given_up) {
      why = fmt::format("node {}: its worker was given up ({})", name, given_up->reason);
    }
    if (why.empty() && faults.Released(name)) {
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
          view.options.pods, view.options.architectures, NodeArchitecture(node));
      budget = *node.cpu_cores * WorkerDuty(view.spec(), node, settings);
    }
    eligible.references[name] = NodeReferenceOf(node, budget);
    eligible.facts.push_back({name, node.meta.labels});
  }
  std::sort(eligible.facts.begin(), eligible.facts.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return eligible;
}

void WaitForNodes(const PassView& view, JobSink& sink, const std::vector<std::string>& excluded) {
  std::string message = "no node can run a worker";
  if (!excluded.empty()) message += ": " + fmt::format("{}", fmt::join(excluded, "; "));
  sink.status.phase = api::JobPhase::kPending;
  api::SetCondition(
      sink.status,
      Condition(api::ConditionType::kReady, false, api::Reason::kNoEligibleNodes, message),
      view.in.job.generation, view.in.now.rfc3339);
  sink.HandStatus(false);
  sink.requeue_after = std::chrono::milliseconds(10000);
}

namespace {

// The session's records (SessionMemory::nodes): its workers, weighed, in
// session order, with their references; then every node it counts items
// from (status.nodes at registration: this job's earlier sessions) or
// judges against its history (`history`), worker or not.
void RememberSession(const PassView& view, SessionMemory& session, api::WeightedJobStatus& status,
                     bool resumed, fuzzy::WeightResult weights,
                     std::map<std::string, NodeReference> references) {
  session.resumed = resumed;
  session.registered_wall = view.in.now.wall;
  session.nodes.clear();
  std::map<std::string, size_t> index;  // of session.nodes, by name
  for (fuzzy::NodeWeight& weight : weights.nodes) {
    index.emplace(weight.name, session.nodes.size());
    SessionNode node{weight.name, std::nullopt, 0, std::nullopt};
    node.worker = SessionNode::Worker{std::move(weight), references[node.name], {}};
    session.nodes.push_back(std::move(node));
  }
  const auto record = [&](const std::string& name) -> SessionNode& {
    const auto [it, added] = index.emplace(name, session.nodes.size());
    if (added) session.nodes.push_back(SessionNode{name, std::nullopt, 0, std::nullopt});
    return session.nodes[it->second];
  };
  for (const auto& row : status.nodes.value_or(std::vector<api::NodeRow>{})) {
    record(row.name).items_before = row.items;
  }
  if (view.in.history) {
    for (auto& [name, baseline] : health::BaselineByNode(view.in.history->nodes)) {
      record(name).baseline = std::move(baseline);
    }
  }
  if (!status.start_time) status.start_time = view.in.now.rfc3339;
}

void AnnounceSession(const PassView& view, const SessionMemory& session, PassOut& out,
                     const coordinator::JobConfig& config) {
  std::vector<std::string> listed;
  size_t from_history = 0;
  for (const SessionNode& node : session.nodes) {
    if (!node.worker) continue;
    const api::NodePriorRow& prior = node.worker->prior;
    const double weight = node.worker->weight.weight;
    const bool learned = prior.source != "profile";
    from_history += learned ? 1 : 0;
    listed.push_back(
        learned ? fmt::format("{} {:g} ({} {:g})", node.name, weight, prior.source, prior.value)
                : fmt::format("{} {:g}", node.name, weight));
  }
  const auto& job = view.spec().job;
  const bool resumed = session.resumed;
  const std::string message =
      resumed ? fmt::format("resumed from the checkpoint at {} of {} items; weights {}",
                            config.resume->completed.size(), job.workload.items,
                            fmt::join(listed, ", "))
              : fmt::format("started on {} nodes with policy {}; weights {}", listed.size(),
                            job.policy.name(), fmt::join(listed, ", "));
  const std::string learned =
      from_history > 0 ? fmt::format("; priors from history on {} of {} nodes ({})", from_history,
                                     listed.size(), view.in.history->origin)
                       : "";
  out.Event(false, resumed ? api::Reason::kResumed : api::Reason::kStarted, message + learned);
}

// The session's configuration but its workers, baseline and resume: the
// job's spec, its token, and what the operator's options say.
coordinator::JobConfig SessionConfig(const PassView& view, const TokenMemory& token) {
  const auto& job = view.spec().job;
  coordinator::JobConfig config;
  config.id = view.in.id;
  config.metric_name = view.in.name;
  config.metric_namespace = view.in.ns;
  config.history_key = api::HistoryKey(view.spec());
  config.token = token.value;
  config.workload = job.workload;
  config.policy = job.policy;
  config.lease_seconds = job.lease_seconds;
  config.verify.fraction = job.verify_fraction;
  // Under Kueue an idle worker's pod holds quota another job could use: the
  // session lets idle workers go in the tail (idle_release.h). Elsewhere they
  // stay, ready to steal or back up to the end.
  config.release_idle = view.in.queue.has_value();
  config.start_timeout_s = view.options.start_timeout_s;
  config.deviation = view.options.deviation;
  return config;
}

}  // namespace

std::optional<coordinator::JobConfig> Registration(const PassView& view, const TokenMemory& token,
                                                   NodeFaults& faults, SessionMemory& session,
                                                   JobSink& sink, const fuzzy::Profile& profile) {
  std::optional<coordinator::Checkpoint> resume =
      RestoreSealed(view, token, faults, sink.status, sink);
  Eligible eligible = EligibleNodes(view, faults);
  if (ExcludeArchitectures(eligible.architecture_excluded, sink.status, sink)) {
    sink.write_at_once = true;  // so that the Warning is not said again
  }
  if (eligible.facts.empty()) {
    WaitForNodes(view, sink, eligible.excluded);
    return std::nullopt;
  }
  auto weights = fuzzy::ComputeWeights(profile, eligible.facts);
  if (!weights.ok()) {
    // No session runs yet: there is no checkpoint of one to keep.
    FailInPass(view, sink, api::Reason::kInvalidProfile, weights.status().message());
    return std::nullopt;
  }
  for (const auto& warning : GroupNodeWarnings(weights->warnings))
    sink.Event(true, api::Reason::kNodeLabelDefaulted, warning);
  coordinator::JobConfig config = SessionConfig(view, token);
  RememberSession(view, session, sink.status, resume.has_value(), std::move(*weights),
                  std::move(eligible.references));
  config.workers = SessionPriors(view, session, sink);
  // The history the priors came from: the speeds the coordinator exports for
  // Prometheus's history enter winsorized, as the ConfigMap store's do.
  if (view.in.history) config.baseline = view.in.history->nodes;
  // A worker's CPU seconds cannot exceed its node's cores over the time it
  // had (JobSession bounds them so).
  config.worker_cores = std::move(eligible.cores);
  config.resume = std::move(resume);
  AnnounceSession(view, session, sink, config);
  // At once: startTime is set in this pass only (the Accepted status may
  // have been handed a moment ago, so the interval has not passed).
  sink.HandStatus(true);
  return config;
}

}  // namespace ballast::controller::decide
