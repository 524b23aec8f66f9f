#include "operator/controller/status_pacing.h"

#include <algorithm>
#include <cmath>

namespace ballast::controller {
namespace {

// `status` without the fields that move as the work goes: what a reader sees
// change only at the job's visible steps.
api::WeightedJobStatus WithoutProgress(api::WeightedJobStatus status) {
  status.progress.reset();
  status.completed_items.reset();
  status.completed_cost.reset();
  status.cost_model.reset();
  status.checkpoint.reset();
  // The result merged so far: the finished one comes with the phase.
  status.result.reset();
  if (status.nodes) {
    for (api::NodeRow& row : *status.nodes) {
      row.estimated_speed = 0;
      row.items = 0;
      row.cost.reset();
      row.cost_speed.reset();
      row.steals = 0;
      row.duplicate_seconds.reset();
    }
  }
  return status;
}

}  // namespace

StatusChange ClassifyStatusChange(const api::WeightedJobStatus& written,
                                  const api::WeightedJobStatus& now) {
  if (written == now) return StatusChange::kNone;
  // The first items done: a reader sees the job move, and its speeds.
  if (written.completed_items.value_or(0) == 0 && now.completed_items.value_or(0) > 0) {
    return StatusChange::kVisible;
  }
  return WithoutProgress(written) == WithoutProgress(now) ? StatusChange::kProgress
                                                          : StatusChange::kVisible;
}

double ProgressMoved(const api::WeightedJobStatus& written, const api::WeightedJobStatus& now) {
  if (!now.items || *now.items == 0) return 0;
  const auto moved = [&](const auto& field) {
    return std::abs(static_cast<double>(field(now).value_or(0)) -
                    static_cast<double>(field(written).value_or(0)));
  };
  const double items = static_cast<double>(*now.items);
  const double by_items = moved([](const api::WeightedJobStatus& s) { return s.completed_items; });
  // Costs in the job's units over its total cost (in items without one).
  const double total = now.total_cost.value_or(items);
  const double by_cost =
      total > 0
          ? moved([](const api::WeightedJobStatus& s) { return s.completed_cost; }) * items / total
          : 0;
  return std::max(by_items, by_cost) * 100 / items;
}

bool StatusWriteDue(StatusChange change, std::chrono::milliseconds since_last_write,
                    double progress_moved, bool transition, const StatusPacing& pacing) {
  switch (change) {
    case StatusChange::kNone:
      return false;
    case StatusChange::kVisible:
      return transition || since_last_write >= pacing.status_interval;
    case StatusChange::kProgress:
      return transition || since_last_write >= pacing.progress_interval ||
             (since_last_write >= pacing.status_interval && progress_moved >= pacing.progress_step);
  }
  return true;
}

}  // namespace ballast::controller
