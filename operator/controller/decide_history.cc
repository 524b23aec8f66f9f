// Decide's use of the history of measured speeds (decide_internal.h): the
// session's priors, their status columns, and what a finished job records.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <map>

#include "coordinator/job_types.h"
#include "core/health/energy.h"
#include "core/workload/workload.h"
#include "operator/controller/architectures.h"
#include "operator/controller/decide_internal.h"

namespace ballast::controller::decide {

namespace {

const char* SourceName(fuzzy::PriorSource source) {
  switch (source) {
    case fuzzy::PriorSource::kHistory:
      return "history";
    case fuzzy::PriorSource::kBlended:
      return "blended";
    case fuzzy::PriorSource::kProfile:
      break;
  }
  return "profile";
}

// `value` to four significant digits, as status shows speeds.
double Significant(double value) {
  return std::strtod(fmt::format("{:.4g}", value).c_str(), nullptr);  // never throws
}

// The duty of the worker pod each listed node gets (WorkerDuty), by name.
std::map<std::string, double> NodeDuties(const PassView& view) {
  std::map<std::string, double> duties;
  for (const api::NodeView& node : view.in.nodes) {
    const WorkerPodSettings settings = SettingsForArchitecture(
        view.options.pods, view.options.architectures, NodeArchitecture(node));
    duties[node.meta.name] = WorkerDuty(view.spec(), node, settings);
  }
  return duties;
}

}  // namespace

std::vector<balance::WorkerPrior> SessionPriors(const PassView& view, SessionMemory& session,
                                                PassOut& out) {
  std::map<std::string, double> fuzzy;
  for (const SessionNode& node : session.nodes) {
    if (node.worker) fuzzy[node.name] = node.worker->weight.weight;
  }
  const std::optional<HistoryLookup>& history = view.in.history;
  if (history && !history->trouble.empty()) {
    out.Event(true, api::Reason::kHistoryUnavailable,
              fmt::format("no history of {} speeds from {}: {}; the job starts on the fuzzy "
                          "weights",
                          api::HistoryKey(view.spec()), history->origin, history->trouble));
  }
  const auto blended =
      fuzzy::BlendHistoryPrior(fuzzy, history ? history->nodes : std::vector<fuzzy::NodeHistory>{},
                               view.options.history_prior);
  std::map<std::string, const fuzzy::NodePrior*> by_node;
  for (const auto& prior : blended) by_node[prior.node] = &prior;
  const std::map<std::string, double> duties = NodeDuties(view);
  std::vector<balance::WorkerPrior> priors;
  for (SessionNode& node : session.nodes) {
    if (!node.worker) continue;
    // One blended prior per worker (BlendHistoryPrior answers each node it is given).
    const fuzzy::NodePrior& prior = *by_node.at(node.name);
    // Never zero, whatever the blend says: the fuzzy weight stands in.
    const double value =
        prior.value > 0 && std::isfinite(prior.value) ? prior.value : fuzzy.at(prior.node);
    node.worker->prior = {SourceName(prior.source), Significant(value), Significant(prior.samples),
                          std::round(prior.age_seconds)};
    priors.push_back({node.name, node.worker->prior.value, prior.credibility});
    // 1 for a node no longer listed.
    if (auto duty = duties.find(node.name); duty != duties.end()) priors.back().duty = duty->second;
  }
  return priors;
}

void PriorColumns(const SessionMemory& session, const std::vector<api::NodeRow>& shown,
                  std::vector<api::NodeRow>& rows) {
  std::map<std::string, api::NodePriorRow> priors;  // the workers', else as shown
  for (const auto& row : shown) {
    if (row.prior) priors[row.name] = *row.prior;
  }
  for (const SessionNode& node : session.nodes) {
    if (node.worker) priors[node.name] = node.worker->prior;
  }
  for (auto& row : rows) {
    if (auto it = priors.find(row.name); it != priors.end()) row.prior = it->second;
  }
}

namespace {

// What the probe says of the node's board, for the deviation's message: its
// True conditions with the time each began (probe::DescribeBoardProblems),
// else its ballast.io/power-ok=false label; "" when it says nothing, or that
// all is well.
std::string ProbeNote(const PassView& view, const std::string& node) {
  const api::NodeView* object = view.NodeNamed(node);
  if (!object) return "";
  if (const std::string problems = probe::DescribeBoardProblems(object->board_conditions);
      !problems.empty()) {
    return "; " + problems;
  }
  auto it = object->meta.labels.find("ballast.io/power-ok");
  if (it == object->meta.labels.end() || it->second != "false") return "";
  return "; the probe reports under-voltage, frequency capping or throttling since boot "
         "(ballast.io/power-ok=false)";
}

// Each node judged against its own baseline (SessionNode::baseline): events on
// the job and the Node for a Slow or fast one, status.nodes[].baselineRatio
// and baselineVerdict. Returns the verdicts (empty without a baseline).
std::vector<health::NodeDeviation> JudgeNodes(const PassView& view, const SessionMemory& session,
                                              api::WeightedJobStatus& status, PassOut& out) {
  const std::vector<fuzzy::NodeHistory> baseline = session.Baseline();
  if (baseline.empty()) return {};
  const std::vector<health::NodeDeviation> deviations = health::JudgeDeviations(
      baseline, coordinator::JobMeasurements(*view.in.view), view.options.deviation);
  std::map<std::string, const health::NodeDeviation*> judged;
  for (const health::NodeDeviation& d : deviations) {
    if (d.verdict == health::Verdict::kNone) continue;
    judged[d.node] = &d;
    const bool slow = d.verdict == health::Verdict::kSlow;
    if (!slow && !d.fast) continue;
    const api::Reason reason =
        slow ? api::Reason::kNodeBelowBaseline : api::Reason::kNodeAboveBaseline;
    const std::string message =
        health::DescribeDeviation(d, view.options.deviation) + ProbeNote(view, d.node);
    out.Event(slow, reason, message);
    const api::NodeView* node = view.NodeNamed(d.node);
    out.actions.push_back(RecordEvent{
        slow, reason, fmt::format("WeightedJob {}/{}: {}", view.in.ns, view.in.name, message),
        d.node, node ? node->meta.uid : ""});
  }
  if (status.nodes) {
    for (auto& row : *status.nodes) {
      auto it = judged.find(row.name);
      if (it == judged.end()) continue;
      row.baseline_ratio = std::round(it->second->ratio * 1000) / 1000;
      row.baseline_verdict = it->second->verdict == health::Verdict::kSlow ? "slow"
                             : it->second->fast                            ? "fast"
                                                                           : "normal";
    }
  }
  return deviations;
}

}  // namespace

void MeasuredColumns(const PassView& pass_view, const SessionMemory& session,
                     api::WeightedJobStatus& status, PassOut& out) {
  const coordinator::JobView& view = *pass_view.in.view;
  std::map<std::string, double> measured;
  for (const auto& worker : view.workers) {
    if (const double speed = coordinator::MeasuredSpeed(worker); speed > 0) {
      measured[worker.name] = speed;
    }
  }
  if (!status.nodes || measured.empty()) return;
  double prior_sum = 0, speed_sum = 0;
  for (const auto& row : *status.nodes) {
    if (row.prior && measured.contains(row.name)) {
      prior_sum += row.prior->value;
      speed_sum += measured.at(row.name);
    }
  }
  for (auto& row : *status.nodes) {
    auto it = measured.find(row.name);
    if (it == measured.end()) continue;
    row.measured_speed = Significant(it->second);
    if (row.prior && prior_sum > 0 && speed_sum > 0) {
      const double error = (row.prior->value / prior_sum) / (it->second / speed_sum) - 1;
      row.prior_error = std::round(error * 1000) / 1000;
    }
  }
  const std::vector<health::NodeDeviation> deviations = JudgeNodes(pass_view, session, status, out);
  RecordSpeeds record{api::HistoryKey(pass_view.spec()), coordinator::SpeedsToRecord(view), {}};
  const auto entered = health::WinsorizeSpeeds(record.recorded.speeds, deviations);
  for (const auto& [node, speed] : entered) {
    if (speed != record.recorded.speeds.at(node)) record.winsorized.push_back(node);
  }
  record.recorded.speeds = entered;
  out.actions.push_back(std::move(record));
}

void EnergyColumns(const PassView& pass_view, api::WeightedJobStatus& status, PassOut& out,
                   double span_seconds) {
  const coordinator::JobView& view = *pass_view.in.view;
  std::vector<health::NodeUsage> usage;
  std::vector<std::string> problems;
  for (const auto& worker : view.workers) {
    const api::NodeView* node = pass_view.NodeNamed(worker.name);
    std::optional<health::BoardPower> power;
    if (node) {
      power = health::NodePower(node->meta.labels);
      for (const std::string& problem : health::PowerLabelProblems(node->meta.labels)) {
        problems.push_back(fmt::format("node {}: {}", worker.name, problem));
      }
    }
    usage.push_back({worker.name, power, worker.MergedBusySeconds(), worker.items});
  }
  // A power label the estimate cannot use is ignored: a Warning says so, as
  // for a label the weights default (once: the energy is set once).
  for (const std::string& warning : GroupNodeWarnings(problems)) {
    out.Event(true, api::Reason::kNodeLabelDefaulted, warning);
  }
  const health::JobEnergy energy = health::EstimateJobEnergy(usage, span_seconds);
  const auto round = [](double joules) { return std::round(joules * 10) / 10; };
  status.energy = nlohmann::json{{"joules", round(energy.joules)},
                                 {"joulesPerItem", Significant(energy.joules_per_item)},
                                 {"complete", energy.complete},
                                 {"estimate", energy.estimate},
                                 {"summary", health::DescribeEnergy(energy)}};
  if (!status.nodes) return;
  std::map<std::string, const health::NodeEnergy*> by_node;
  for (const health::NodeEnergy& n : energy.nodes) by_node[n.node] = &n;
  for (auto& row : *status.nodes) {
    auto it = by_node.find(row.name);
    if (it != by_node.end() && it->second->known) row.energy_joules = round(it->second->joules);
  }
}

}  // namespace ballast::controller::decide
