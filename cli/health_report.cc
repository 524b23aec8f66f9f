#include "cli/health_report.h"

#include <fmt/format.h>

namespace ballast::cli {

nlohmann::json DeviationJson(const health::NodeDeviation& d) {
  return {{"verdict", health::VerdictName(d.verdict)},
          {"reason", d.reason},
          {"fast", d.fast},
          {"ratio", d.ratio},
          {"measured", d.measured},
          {"baseline", d.baseline},
          {"spread", d.spread},
          {"slow_below", d.slow_below},
          {"busy_s", d.busy_seconds},
          {"history_samples", d.history_samples},
          {"references", d.references}};
}

nlohmann::json EnergyJson(const health::JobEnergy& energy) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const health::NodeEnergy& n : energy.nodes) {
    nodes.push_back({{"name", n.node},
                     {"known", n.known},
                     {"estimate", n.estimate},
                     {"idle_w", n.idle_w},
                     {"load_w", n.load_w},
                     {"busy_s", n.busy_seconds},
                     {"idle_s", n.idle_seconds},
                     {"joules", n.joules},
                     {"items", n.items}});
  }
  return {{"joules", energy.joules},
          {"wh", energy.joules / 3600},
          {"joules_per_item", energy.joules_per_item},
          {"items", energy.items},
          {"span_s", energy.span_seconds},
          {"complete", energy.complete},
          {"estimate", energy.estimate},
          {"nodes", std::move(nodes)}};
}

health::JobEnergy RunEnergy(const job::ClusterSpec& cluster, const LocalRunOutcome& outcome) {
  std::vector<health::NodeUsage> usage;
  for (const auto& worker : outcome.view.workers) {
    std::optional<health::BoardPower> power;
    for (const job::EmulatedNode& node : cluster.nodes) {
      if (node.name == worker.name) power = health::NodePower(node.labels);
    }
    usage.push_back({worker.name, power, worker.busy_s, worker.items});
  }
  return health::EstimateJobEnergy(usage, outcome.makespan_s);
}

std::string SlowNodes(const std::vector<health::NodeDeviation>& deviations) {
  std::vector<std::string> slow;
  for (const health::NodeDeviation& d : deviations) {
    if (d.verdict == health::Verdict::kSlow)
      slow.push_back(fmt::format("{} {:.2f}", d.node, d.ratio));
  }
  return slow.empty() ? "-" : fmt::format("{}", fmt::join(slow, ", "));
}

void PrintRunHealth(const health::JobEnergy& energy,
                    const std::vector<health::NodeDeviation>& deviations) {
  fmt::print("energy: {}\n", health::DescribeEnergy(energy));
  if (deviations.empty()) return;
  fmt::print("node health, against each node's own baseline (--history):\n");
  const health::DeviationOptions options;
  for (const health::NodeDeviation& d : deviations) {
    fmt::print("  {}\n", health::DescribeDeviation(d, options));
  }
}

}  // namespace ballast::cli
