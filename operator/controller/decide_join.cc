// Decide's nodes that join a running session (decide_internal.h): a node
// that became eligible mid-job is weighed with the session's nodes, brought
// onto the session's scales, and added to it (AddWorker) before its pod.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <set>

#include "core/fuzzy/profile_json.h"
#include "operator/controller/decide_internal.h"
#include "operator/controller/node_selection.h"

namespace ballast::controller::decide {

namespace {

// The eligible nodes not yet in the session; under Kueue, within the pods
// its Workload was admitted with: a node beyond them waits for the job's
// next admission (kueue.h).
std::vector<const fuzzy::NodeFacts*> JoiningNodes(const PassView& view,
                                                  const SessionMemory& session,
                                                  const Eligible& eligible,
                                                  const std::set<std::string>& known) {
  std::vector<const fuzzy::NodeFacts*> joining;
  for (const auto& facts : eligible.facts) {
    if (!known.contains(facts.name)) joining.push_back(&facts);
  }
  if (view.node_limit) {
    const size_t nodes = session.NodeCount();
    const size_t room = nodes < *view.node_limit ? *view.node_limit - nodes : 0;
    if (joining.size() > room) joining.resize(room);
  }
  return joining;
}

// The factors that bring a relative score onto the session's weights and
// priors, from its nodes weighed again now (`weights` past the first
// `joining`): the ratio of their weights and priors to their unrounded
// relative scores; 1 and 1 when they say nothing.
std::pair<double, double> SessionScales(const SessionMemory& session,
                                        const fuzzy::WeightResult& weights, size_t joining) {
  double relative_sum = 0;
  double weight_sum = 0;
  double prior_sum = 0;
  for (size_t i = joining; i < weights.nodes.size(); ++i) {
    const fuzzy::NodeWeight& now = weights.nodes[i];
    const SessionNode* then = session.Find(now.name);
    if (!then || !then->worker) continue;
    relative_sum += now.relative;
    weight_sum += then->worker->weight.weight;
    prior_sum += then->worker->prior.value;
  }
  if (!(relative_sum > 0 && weight_sum > 0 && prior_sum > 0)) return {1, 1};
  return {weight_sum / relative_sum, prior_sum / relative_sum};
}

// Adds `weight`'s node to the session, its weight and prior brought onto
// the session's scales (`to_weights`, `to_priors`: SessionScales): its
// record in session order (after the session's workers; one it had, from an
// earlier session or the history, moves there), AddWorker and a NodeJoined
// event.
void AddJoiner(const PassView& view, const Eligible& eligible, SessionMemory& session, PassOut& out,
               fuzzy::NodeWeight weight, double to_weights, double to_priors) {
  const double relative = weight.relative;
  weight.weight = Rounded(relative * to_weights);
  weight.relative = relative * to_weights;
  const std::string name = weight.name;
  const api::NodeView* node = view.NodeNamed(name);
  balance::WorkerPrior prior{
      name, std::clamp(relative * to_priors, balance::kMinPriorSpeed, balance::kMaxPriorSpeed)};
  if (node) {
    const WorkerPodSettings settings = SettingsForArchitecture(
        view.options.pods, view.options.architectures, NodeArchitecture(*node));
    prior.duty = WorkerDuty(view.spec(), *node, settings);
  }
  std::optional<double> cores;
  if (auto it = eligible.cores.find(name); it != eligible.cores.end()) cores = it->second;
  SessionNode record{name, std::nullopt, 0, std::nullopt};
  if (const SessionNode* known = session.Find(name)) {
    record = *known;
    std::erase_if(session.nodes, [&](const SessionNode& n) { return n.name == name; });
  }
  // Every eligible node has its reference (EligibleNodes).
  record.worker = SessionNode::Worker{weight, eligible.references.at(name),
                                      api::NodePriorRow{"profile", prior.speed, 0, 0}};
  session.nodes.insert(session.nodes.begin() + static_cast<std::ptrdiff_t>(session.NodeCount()),
                       std::move(record));
  out.actions.push_back(AddWorker{prior, cores});
  out.Event(false, api::Reason::kNodeJoined,
            fmt::format("node {} can run the job's worker now; it joins the running job with "
                        "weight {:g}",
                        name, weight.weight));
}

}  // namespace

void JoinNodes(const PassView& view, const NodeFaults& faults, SessionMemory& session,
               PassOut& out) {
  if (view.in.view->done || !view.in.profile) return;
  const Eligible eligible = EligibleNodes(view, faults);
  const std::vector<std::string> nodes = session.Nodes();
  const std::set<std::string> known(nodes.begin(), nodes.end());
  const std::vector<const fuzzy::NodeFacts*> joining = JoiningNodes(view, session, eligible, known);
  if (joining.empty()) return;
  // Parsed only when someone joins, not on every pass. A profile deleted or
  // broken since the start cannot weigh a newcomer; the session goes on with
  // the nodes it has.
  const auto profile = fuzzy::ProfileFromJson(*view.in.profile);
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
  const auto [to_weights, to_priors] = SessionScales(session, *weights, joining.size());
  for (size_t i = 0; i < joining.size(); ++i) {
    AddJoiner(view, eligible, session, out, weights->nodes[i], to_weights, to_priors);
  }
}

}  // namespace ballast::controller::decide
