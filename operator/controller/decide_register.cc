// Decide's registration of a job's session (decide_internal.h): the nodes
// it may run on, weighed, with their priors, resuming from the checkpoint
// in status; what it remembers of the session, and the event that says so.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
    if (why.empty() && faults.released.contains(name)) {
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

void WaitForNodes(Pass& pass, const std::vector<std::string>& excluded) {
  std::string message = "no node can run a worker";
  if (!excluded.empty()) message += ": " + fmt::format("{}", fmt::join(excluded, "; "));
  pass.status.phase = api::JobPhase::kPending;
  api::SetCondition(
      pass.status,
      Condition(api::ConditionType::kReady, false, api::Reason::kNoEligibleNodes, message),
      pass.in.job.generation, pass.in.now.rfc3339);
  pass.HandStatus(false);
  pass.requeue_after = std::chrono::milliseconds(10000);
}

namespace {

void RememberSession(Pass& pass, const coordinator::JobConfig& config, fuzzy::WeightResult weights,
                     std::map<std::string, NodeReference> references) {
  SessionMemory& session = pass.memory.session;
  pass.registered = true;
  session.resumed = config.resume.has_value();
  session.registered_wall = pass.in.now.wall;
  session.base_items.clear();
  for (const auto& row : pass.status.nodes.value_or(std::vector<api::NodeRow>{})) {
    session.base_items[row.name] = row.items;
  }
  session.weights = std::move(weights);
  session.references = std::move(references);
  if (!pass.status.start_time) pass.status.start_time = pass.in.now.rfc3339;
}

void AnnounceSession(Pass& pass, const coordinator::JobConfig& config) {
  std::vector<std::string> listed;
  size_t from_history = 0;
  for (const auto& node : pass.memory.session.weights.nodes) {
    auto prior = pass.memory.session.priors.find(node.name);
    const bool learned =
        prior != pass.memory.session.priors.end() && prior->second.source != "profile";
    from_history += learned ? 1 : 0;
    listed.push_back(learned ? fmt::format("{} {:g} ({} {:g})", node.name, node.weight,
                                           prior->second.source, prior->second.value)
                             : fmt::format("{} {:g}", node.name, node.weight));
  }
  const auto& job = pass.spec().job;
  const bool resumed = pass.memory.session.resumed;
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
  pass.Event(false, resumed ? api::Reason::kResumed : api::Reason::kStarted, message + learned);
}

}  // namespace

std::optional<coordinator::JobConfig> Registration(Pass& pass, const fuzzy::Profile& profile) {
  std::optional<coordinator::Checkpoint> resume = RestoreSealed(pass);
  Eligible eligible = EligibleNodes(pass, pass.memory.faults);
  if (ExcludeArchitectures(eligible.architecture_excluded, pass.status, pass)) {
    pass.write_at_once = true;  // so that the Warning is not said again
  }
  if (eligible.facts.empty()) {
    WaitForNodes(pass, eligible.excluded);
    return std::nullopt;
  }
  auto weights = fuzzy::ComputeWeights(profile, eligible.facts);
  if (!weights.ok()) {
    FailInPass(pass, api::Reason::kInvalidProfile, weights.status().message());
    return std::nullopt;
  }
  for (const auto& warning : GroupNodeWarnings(weights->warnings))
    pass.Event(true, api::Reason::kNodeLabelDefaulted, warning);
  const auto& job = pass.spec().job;
  coordinator::JobConfig config;
  config.id = pass.in.id;
  config.metric_name = pass.in.name;
  config.metric_namespace = pass.in.ns;
  config.history_key = api::HistoryKey(pass.spec());
  config.token = pass.memory.token.value;
  config.workload = job.workload;
  config.policy = job.policy;
  config.lease_seconds = job.lease_seconds;
  config.verify.fraction = job.verify_fraction;
  // Under Kueue an idle worker's pod holds quota another job could use: the
  // session lets idle workers go in the tail (idle_release.h). Elsewhere they
  // stay, ready to steal or back up to the end.
  config.release_idle = pass.in.queue.has_value();
  config.start_timeout_s = pass.options.start_timeout_s;
  config.workers = SessionPriors(pass, pass.memory.session, pass, *weights);
  // The history the priors came from: the speeds the coordinator exports for
  // Prometheus's history enter winsorized, as the ConfigMap store's do.
  config.baseline = pass.memory.session.baseline;
  config.deviation = pass.options.deviation;
  // A worker's CPU seconds cannot exceed its node's cores over the time it
  // had (JobSession bounds them so).
  config.worker_cores = std::move(eligible.cores);
  config.resume = std::move(resume);
  RememberSession(pass, config, std::move(*weights), std::move(eligible.references));
  AnnounceSession(pass, config);
  // At once: startTime is set in this pass only (the Accepted status may
  // have been handed a moment ago, so the interval has not passed).
  pass.HandStatus(true);
  return config;
}

}  // namespace ballast::controller::decide
