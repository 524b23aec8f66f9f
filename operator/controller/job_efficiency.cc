#include "operator/controller/job_efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

namespace ballast::controller {
namespace {

// A finite number > 0 written in full, as the annotation and the label hold one.
std::optional<double> PositiveNumber(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
      value <= 0) {
    return std::nullopt;
  }
  return value;
}

// "node a", "nodes a, b and 3 more" (of `total`).
std::string NamedNodes(const std::vector<std::string>& names, size_t total) {
  constexpr size_t kShown = 5;
  std::string named;
  for (size_t i = 0; i < names.size() && i < kShown; ++i) named += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kShown) named += fmt::format(" and {} more", names.size() - kShown);
  return fmt::format("node{} {} ({} of {})", names.size() == 1 ? "" : "s", named, names.size(),
                     total);
}

// The nodes of `nodes` for which `lacks` holds.
template <typename Lacks>
std::vector<std::string> NodesThat(const std::map<std::string, NodeReference>& nodes, Lacks lacks) {
  std::vector<std::string> names;
  for (const auto& [name, node] : nodes) {
    if (lacks(node)) names.push_back(name);
  }
  return names;
}

Reference FromCpuSeconds(ReferenceSource source, const std::map<std::string, NodeReference>& nodes,
                         bool by_score) {
  Reference reference;
  reference.source = source;
  double fastest_score = 0;
  for (const auto& [name, node] : nodes) {
    if (by_score) fastest_score = std::max(fastest_score, *node.bench_score);
  }
  for (const auto& [name, node] : nodes) {
    const double cores =
        source == ReferenceSource::kDeclaredSpeeds ? *node.declared_speed : *node.cpu_budget;
    const double worth = by_score ? *node.bench_score / fastest_score : 1;
    reference.cores[name] = cores;
    reference.worth[name] = worth;
    reference.speed[name] = cores * worth;
  }
  return reference;
}

}  // namespace

std::optional<double> DeclaredSpeed(const api::NodeView& node) {
  const auto found = node.meta.annotations.find(std::string(kNodeSpeedAnnotation));
  if (found == node.meta.annotations.end()) return std::nullopt;
  return PositiveNumber(found->second);
}

NodeReference NodeReferenceOf(const api::NodeView& node, std::optional<double> cpu_budget) {
  NodeReference reference;
  reference.declared_speed = DeclaredSpeed(node);
  if (cpu_budget && std::isfinite(*cpu_budget) && *cpu_budget > 0)
    reference.cpu_budget = cpu_budget;
  const auto& labels = node.meta.labels;
  if (auto model = labels.find(std::string(kCpuModelLabel)); model != labels.end()) {
    reference.cpu_model = model->second;
  }
  if (auto score = labels.find(std::string(kBenchScoreLabel)); score != labels.end()) {
    reference.bench_score = PositiveNumber(score->second);
  }
  return reference;
}

const char* ReferenceSourceName(ReferenceSource source) {
  switch (source) {
    case ReferenceSource::kDeclaredSpeeds:
      return "declared speeds";
    case ReferenceSource::kCpuBudgets:
      return "CPU budgets";
    case ReferenceSource::kBenchScores:
      return "bench scores";
    case ReferenceSource::kEstimate:
      break;
  }
  return "estimate";
}

Reference ChooseReference(const std::map<std::string, NodeReference>& nodes) {
  Reference none;
  if (nodes.empty()) {
    none.missing = "no nodes";
    return none;
  }
  const size_t total = nodes.size();
  const auto undeclared = NodesThat(nodes, [](const auto& n) { return !n.declared_speed; });
  if (undeclared.empty()) return FromCpuSeconds(ReferenceSource::kDeclaredSpeeds, nodes, false);
  std::string missing =
      fmt::format("no {} on {}", kNodeSpeedAnnotation, NamedNodes(undeclared, total));
  const auto unbudgeted = NodesThat(nodes, [](const auto& n) { return !n.cpu_budget; });
  if (!unbudgeted.empty()) {
    none.missing = missing + fmt::format(", and no CPU budget (a CPU limit or capacity) on {}",
                                         NamedNodes(unbudgeted, total));
    return none;
  }
  std::set<std::string> models;
  for (const auto& [name, node] : nodes) models.insert(node.cpu_model);
  if (models.size() == 1 && !models.begin()->empty()) {
    return FromCpuSeconds(ReferenceSource::kCpuBudgets, nodes, false);
  }
  const auto unscored = NodesThat(nodes, [](const auto& n) { return !n.bench_score; });
  if (unscored.empty()) return FromCpuSeconds(ReferenceSource::kBenchScores, nodes, true);
  const auto unlabelled = NodesThat(nodes, [](const auto& n) { return n.cpu_model.empty(); });
  missing += unlabelled.empty()
                 ? fmt::format(", nodes of {} CPU models", models.size())
                 : fmt::format(", no {} on {}", kCpuModelLabel, NamedNodes(unlabelled, total));
  none.missing =
      missing + fmt::format(", and no {} on {}", kBenchScoreLabel, NamedNodes(unscored, total));
  return none;
}

namespace {

// What the job's two limits are made of, worker by worker: the job's own
// estimate (each worker's measured cost speed) and the reference (its speed
// known outside the job, over the CPU seconds it spent).
struct LimitInputs {
  double cost = 0;
  double weighed_cpu_s = 0;
  double fastest_estimated_item = 0;
  double fastest_reference_item = 0;
  std::vector<balance::Capacity> estimated;
  std::vector<balance::Capacity> referenced;
  uint64_t session_items = 0;
};

LimitInputs GatherLimitInputs(const coordinator::JobView& view, const Reference& reference,
                              const ItemBound& items) {
  LimitInputs in;
  const auto& checks = view.verification;
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const auto& worker = view.workers[i];
    // Verification's recomputations are not the job's work (docs/trust.md).
    const double check_cpu_s = i < checks.worker_cpu_s.size() ? checks.worker_cpu_s[i] : 0;
    const double check_busy_s = i < checks.worker_busy_s.size() ? checks.worker_busy_s[i] : 0;
    const double busy_s = worker.MergedBusySeconds() - check_busy_s;
    in.session_items += worker.items;
    const double from = std::max(0.0, worker.joined_at - view.started_at);
    const double until = worker.left_at ? std::max(from, *worker.left_at - view.started_at)
                                        : std::numeric_limits<double>::infinity();
    // One item runs on one thread: at its node's speed over the items the
    // node runs at once.
    const auto cores = reference.cores.find(worker.name);
    const int at_once =
        balance::ItemsAtOnce(cores != reference.cores.end() ? cores->second : 1, items.concurrency);
    if (reference.source != ReferenceSource::kEstimate) {
      const double speed = reference.speed.at(worker.name);
      in.weighed_cpu_s +=
          (worker.cpu_s - worker.dropped_cpu_s - check_cpu_s) * reference.worth.at(worker.name);
      in.referenced.push_back({from, until, speed});
      in.fastest_reference_item = std::max(in.fastest_reference_item, speed / at_once);
    }
    if (busy_s <= 0 || worker.cost <= 0) continue;
    in.cost += worker.cost;
    in.estimated.push_back({from, until, worker.cost / busy_s});
    in.fastest_estimated_item = std::max(in.fastest_estimated_item, worker.cost / busy_s / at_once);
  }
  return in;
}

}  // namespace

EfficiencyFigures ComputeEfficiency(const coordinator::JobView& view, double makespan_s,
                                    const std::map<std::string, NodeReference>& nodes,
                                    const ItemBound& items) {
  std::map<std::string, NodeReference> job_nodes;
  for (const auto& worker : view.workers) {
    const auto found = nodes.find(worker.name);
    job_nodes[worker.name] = found != nodes.end() ? found->second : NodeReference{};
  }
  const Reference reference = ChooseReference(job_nodes);
  const LimitInputs in = GatherLimitInputs(view, reference, items);
  // The share of the job this session ran (1 unless it resumed).
  const double scale = in.session_items > 0
                           ? static_cast<double>(view.items) / static_cast<double>(in.session_items)
                           : 1;
  const auto scaled = [scale](double seconds) {
    return std::isfinite(seconds) ? seconds * scale : 0;
  };
  EfficiencyFigures figures;
  const balance::Limit own =
      balance::JobLimit(in.cost, in.estimated, items.largest_share, in.fastest_estimated_item);
  figures.estimated_ideal_s = scaled(own.seconds);
  figures.estimated_efficiency = balance::Efficiency(figures.estimated_ideal_s, makespan_s);
  const balance::Limit limit = balance::JobLimit(in.weighed_cpu_s, in.referenced,
                                                 items.largest_share, in.fastest_reference_item);
  if (reference.source != ReferenceSource::kEstimate && scaled(limit.seconds) > 0) {
    figures.source = reference.source;
    figures.ideal_s = scaled(limit.seconds);
    figures.bound = limit.bound;
  } else {
    figures.missing = reference.source == ReferenceSource::kEstimate
                          ? reference.missing
                          : "the workers reported no CPU seconds";
    figures.ideal_s = figures.estimated_ideal_s;
    figures.bound = own.bound;
  }
  figures.efficiency = balance::Efficiency(figures.ideal_s, makespan_s);
  return figures;
}

}  // namespace ballast::controller
