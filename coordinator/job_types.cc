// The coordinator's value types' functions (job_types.h).
#include "coordinator/job_types.h"

#include <fmt/format.h>

namespace ballast::coordinator {

double MeasuredSpeed(const WorkerView& worker) {
  const double busy = worker.MergedBusySeconds();
  return busy > 0 && worker.cost > 0 ? worker.cost / busy : 0;
}

std::optional<CostModelFigures> CostModelOfView(const JobView& view, double unit) {
  if (!view.policy.learning_costs) return std::nullopt;
  CostModelFigures model;
  model.start_cost = view.policy.start_cost * unit;
  model.samples = view.policy.cost_samples;
  double busy_s = 0;
  double work = 0;  // in the model's units
  for (const auto& worker : view.workers) {
    busy_s += worker.MergedBusySeconds();
    work += worker.cost + view.policy.start_cost * static_cast<double>(worker.items);
  }
  if (busy_s > 0 && work > 0) {
    model.seconds_per_cost = busy_s / (work * unit);
    model.start_seconds = view.policy.start_cost * busy_s / work;
  }
  return model;
}

nlohmann::json CheckpointToJson(const Checkpoint& checkpoint) {
  nlohmann::json ranges = nlohmann::json::array();
  for (const balance::Range& range : checkpoint.completed.Ranges()) {
    ranges.push_back({range.begin, range.end});
  }
  return {{"completed", ranges}, {"result", checkpoint.result.ToJson()}};
}

StatusOr<Checkpoint> CheckpointFromJson(workload::WorkloadKind kind, const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("completed") || !json["completed"].is_array()) {
    return Status::Invalid("checkpoint.completed: expected an array of [begin, end]");
  }
  if (!json.contains("result")) return Status::Invalid("checkpoint.result: missing");
  Checkpoint checkpoint;
  uint64_t previous_end = 0;
  const auto& ranges = json["completed"];
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& pair = ranges[i];
    const bool shaped = pair.is_array() && pair.size() == 2 && pair[0].is_number_unsigned() &&
                        pair[1].is_number_unsigned();
    const balance::Range range =
        shaped ? balance::Range{pair[0].get<uint64_t>(), pair[1].get<uint64_t>()}
               : balance::Range{};
    if (!shaped || range.empty() || (i > 0 && range.begin <= previous_end)) {
      return Status::Invalid(fmt::format(
          "checkpoint.completed[{}]: expected [begin, end] with begin < end, after the last", i));
    }
    checkpoint.completed.Add(range);
    previous_end = range.end;
  }
  auto result = workload::Result::FromJson(kind, json["result"]);
  if (!result.ok()) {
    return Status::Invalid("checkpoint.result: " + result.status().message());
  }
  checkpoint.result = std::move(result).value();
  return checkpoint;
}

}  // namespace ballast::coordinator
