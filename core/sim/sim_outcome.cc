#include "core/sim/sim_outcome.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/sim/packing.h"

namespace ballast::sim {

using balance::Range;

OutcomeLedger::OutcomeLedger(size_t nodes, balance::CostModel declared)
    : declared_(std::move(declared)),
      items_(nodes, 0),
      cost_(nodes, 0.0),
      samples_(nodes),
      unsampled_s_(nodes, 0.0) {}

void OutcomeLedger::Account(size_t node, const balance::Report& report) {
  for (const Range& failed : report.failed) failed_.Add(failed);
  double merged = 0;
  double squares = 0;  // of its items' declared costs (health::SpeedSample)
  for (const Range& range : report.completed) {
    const uint64_t fresh = arrived_.Add(range);
    if (fresh == 0) continue;
    items_[node] += fresh;
    const double share = static_cast<double>(fresh) / static_cast<double>(range.size());
    merged += declared_.Cost(range) * share;
    squares += declared_.SquaredCost(range) * share;
  }
  cost_[node] += merged;
  unsampled_s_[node] += std::max(0.0, report.calc_seconds);
  if (report.completed.empty()) return;
  health::AddSpeedSample(samples_[node], {merged, unsampled_s_[node], squares});
  unsampled_s_[node] = 0;
}

balance::Limit ScenarioLimit(const Scenario& scenario, const TrueCost& cost) {
  const double item_seconds = scenario.workload.item_seconds;
  // A node computes one item at a time at its speed: the largest item
  // takes at least its seconds over the fastest speed any node reaches.
  double fastest = 0;
  for (const EmulatedNode& node : scenario.nodes) {
    fastest = std::max(fastest, node.speed);
    for (const SpeedChange& change : node.changes) fastest = std::max(fastest, change.speed);
  }
  return balance::PhysicalLimit(
      IdealMakespan(scenario, cost.Total() * item_seconds, cost.MaxItem() * item_seconds),
      balance::LargestItemSeconds(cost.MaxItem() * item_seconds, fastest));
}

double PackingSeconds(const Scenario& scenario, const TrueCost& cost) {
  const uint64_t items = scenario.workload.items;
  if (items > static_cast<uint64_t>(ScenarioBounds::kMaxItemCosts)) return 0;
  std::vector<double> seconds(items);
  for (uint64_t i = 0; i < items; ++i) {
    seconds[i] = cost.Cost({i, i + 1}) * scenario.workload.item_seconds;
  }
  std::vector<double> speeds;
  for (const EmulatedNode& node : scenario.nodes) {
    if (!node.join_at) speeds.push_back(node.speed);
  }
  return LptMakespan(std::move(seconds), speeds);
}

double IdealMakespan(const Scenario& scenario, double work_seconds, double max_item_seconds) {
  const double item_seconds = max_item_seconds > 0
                                  ? max_item_seconds
                                  : work_seconds / static_cast<double>(scenario.workload.items);
  // Each node's capacity while it is in the job (from joining to failing or
  // being drained), one span per stretch between its speed changes.
  std::vector<balance::Capacity> spans;
  for (const EmulatedNode& node : scenario.nodes) {
    const double from = node.join_at.value_or(0);
    const double until = std::min(node.fail_at.value_or(std::numeric_limits<double>::infinity()),
                                  node.leave_at.value_or(std::numeric_limits<double>::infinity()));
    std::vector<double> times = {from};
    for (const SpeedChange& change : node.changes) {
      if (change.at > from && change.at < until) times.push_back(change.at);
    }
    times.push_back(until);
    const double bytes = node.bytes_per_item.value_or(scenario.workload.bytes_per_item);
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      double speed = SpeedAt(node, times[i]);
      if (bytes > 0 && node.bandwidth > 0 && node.local_items == 0) {
        speed = std::min(speed, node.bandwidth / bytes * item_seconds);
      }
      spans.push_back({times[i], times[i + 1], speed});
    }
  }
  // Within each stretch of constant total speed the limit is
  // balance::IdealSeconds of the work that remains (docs/efficiency.md).
  return balance::IdealSecondsOver(work_seconds, spans);
}

}  // namespace ballast::sim
