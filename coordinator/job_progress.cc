#include "coordinator/job_progress.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace ballast::coordinator {
namespace {

// The indices of the workers to show, in the job's order (job_progress.h).
std::vector<size_t> ShownWorkers(const std::vector<WorkerView>& workers, size_t max_nodes) {
  std::vector<size_t> kept;
  if (workers.size() <= max_nodes) {
    for (size_t i = 0; i < workers.size(); ++i) kept.push_back(i);
    return kept;
  }
  double speed_sum = 0;
  double prior_sum = 0;
  for (const WorkerView& worker : workers) {
    if (MeasuredSpeed(worker) > 0 && worker.prior_speed > 0) {
      speed_sum += MeasuredSpeed(worker);
      prior_sum += worker.prior_speed;
    }
  }
  const auto departure = [&](const WorkerView& worker) {
    const double speed = MeasuredSpeed(worker);
    if (speed <= 0 || worker.prior_speed <= 0) return std::numeric_limits<double>::infinity();
    return std::abs(std::log((speed / speed_sum) / (worker.prior_speed / prior_sum)));
  };
  std::vector<std::pair<double, size_t>> ranked;
  ranked.reserve(workers.size());
  for (size_t i = 0; i < workers.size(); ++i) ranked.emplace_back(-departure(workers[i]), i);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(max_nodes),
                    ranked.end());
  for (size_t i = 0; i < max_nodes; ++i) kept.push_back(ranked[i].second);
  std::sort(kept.begin(), kept.end());
  return kept;
}

protocol::NodeProgress Row(const WorkerView& worker, double unit) {
  protocol::NodeProgress row;
  row.name = worker.name;
  row.prior = worker.prior_speed;
  row.items = worker.items;
  row.cost = worker.cost * unit;
  if (const double busy_s = worker.MergedBusySeconds(); busy_s > 0) {
    row.items_per_second = static_cast<double>(worker.items) / busy_s;
    row.cost_per_second = worker.cost * unit / busy_s;
  }
  row.steals = worker.cuts;
  return row;
}

}  // namespace

protocol::JobProgress ProgressOf(const JobView& view, double unit, size_t max_nodes) {
  protocol::JobProgress progress;
  progress.job = view.id;
  progress.items = view.items;
  progress.completed = view.completed;
  progress.total_cost = static_cast<double>(view.items) * unit;
  progress.completed_cost = view.completed_cost * unit;
  progress.done = view.done;
  progress.node_count = view.workers.size();
  for (const WorkerView& worker : view.workers) {
    progress.steals += worker.cuts;
    if (worker.contacted && !worker.left_at) ++progress.reporting;
  }
  if (const auto model = CostModelOfView(view, unit)) {
    progress.cost_model = protocol::ProgressCostModel{
        model->start_cost, model->samples, model->seconds_per_cost, model->start_seconds};
  }
  for (const size_t i : ShownWorkers(view.workers, max_nodes)) {
    progress.nodes.push_back(Row(view.workers[i], unit));
  }
  return progress;
}

}  // namespace ballast::coordinator
