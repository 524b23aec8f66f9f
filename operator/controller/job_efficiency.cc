#include "operator/controller/job_efficiency.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "core/balance/efficiency.h"

namespace ballast::controller {

std::optional<double> DeclaredSpeed(const NodeView& node) {
  const auto found = node.meta.annotations.find(std::string(kNodeSpeedAnnotation));
  if (found == node.meta.annotations.end()) return std::nullopt;
  const std::string& text = found->second;
  double speed = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), speed);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(speed) ||
      speed <= 0) {
    return std::nullopt;
  }
  return speed;
}

EfficiencyFigures ComputeEfficiency(const coordinator::JobView& view, double makespan_s,
                                    const std::map<std::string, double>& declared_speeds) {
  double cost = 0;
  double cpu_s = 0;
  // Each node's speed while it was in the job: from its joining to its
  // leaving (a node that joined mid-job, one drained or lost for good).
  std::vector<balance::Capacity> measured;
  std::vector<balance::Capacity> nominal_spans;
  bool all_declared = !view.workers.empty();
  uint64_t session_items = 0;
  const auto& checks = view.verification;
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const auto& worker = view.workers[i];
    // Verification's recomputations are not the job's work (docs/trust.md).
    const double check_cpu_s = i < checks.worker_cpu_s.size() ? checks.worker_cpu_s[i] : 0;
    const double check_busy_s = i < checks.worker_busy_s.size() ? checks.worker_busy_s[i] : 0;
    const double busy_s = worker.MergedBusySeconds() - check_busy_s;
    session_items += worker.items;
    cpu_s += worker.cpu_s - worker.dropped_cpu_s - check_cpu_s;
    const double from = std::max(0.0, worker.joined_at - view.started_at);
    const double until = worker.left_at ? std::max(from, *worker.left_at - view.started_at)
                                        : std::numeric_limits<double>::infinity();
    const auto declared = declared_speeds.find(worker.name);
    if (declared == declared_speeds.end()) {
      all_declared = false;
    } else {
      nominal_spans.push_back({from, until, declared->second});
    }
    if (busy_s <= 0 || worker.cost <= 0) continue;
    cost += worker.cost;
    measured.push_back({from, until, worker.cost / busy_s});
  }
  // The share of the job this session ran (1 unless it resumed).
  const double scale =
      session_items > 0 ? static_cast<double>(view.items) / static_cast<double>(session_items) : 1;
  EfficiencyFigures figures;
  const double ideal = balance::IdealSecondsOver(cost, measured);
  figures.ideal_s = std::isfinite(ideal) ? ideal * scale : 0;
  figures.efficiency = balance::Efficiency(figures.ideal_s, makespan_s);
  const double nominal_ideal = balance::IdealSecondsOver(cpu_s, nominal_spans);
  const double nominal = std::isfinite(nominal_ideal) ? nominal_ideal * scale : 0;
  if (all_declared && nominal > 0) {
    figures.nominal_ideal_s = nominal;
    figures.nominal_efficiency = balance::Efficiency(nominal, makespan_s);
  }
  return figures;
}

std::string NominalMissing(const coordinator::JobView& view,
                           const std::map<std::string, double>& declared_speeds,
                           const EfficiencyFigures& figures) {
  if (figures.nominal_efficiency) return "";
  std::vector<std::string> undeclared;
  for (const auto& worker : view.workers) {
    if (!declared_speeds.contains(worker.name)) undeclared.push_back(worker.name);
  }
  if (undeclared.empty()) return "the workers reported no CPU seconds";
  constexpr size_t kShown = 5;
  std::string named;
  for (size_t i = 0; i < undeclared.size() && i < kShown; ++i) {
    named += (i == 0 ? "" : ", ") + undeclared[i];
  }
  if (undeclared.size() > kShown) named += fmt::format(" and {} more", undeclared.size() - kShown);
  return fmt::format("no {} annotation on node{} {} ({} of {} nodes)", kNodeSpeedAnnotation,
                     undeclared.size() == 1 ? "" : "s", named, undeclared.size(),
                     view.workers.size());
}

}  // namespace ballast::controller
