#include "operator/runtime/efficiency_metrics.h"

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/workload/workload.h"
#include "operator/api/weighted_job.h"

namespace ballast::controller {
namespace {

using nlohmann::json;

// object[key] when object is an object and that member a string, else "".
std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// What the job's history is kept under (HistoryKey: the workload kind, for
// exec with its image), the label its speeds carry at the coordinator; when
// the spec does not read whole, the kind spec.workload names; "" when it
// names none.
std::string WorkloadOf(const json& job) {
  const auto spec = job.find("spec");
  if (spec == job.end() || !spec->is_object()) return "";
  const ParsedSpec parsed =
      ParseWeightedJobSpec(*spec, StringAt(job.value("metadata", json()), "name"));
  if (parsed.spec) return HistoryKey(*parsed.spec);
  const auto workload = spec->find("workload");
  if (workload == spec->end() || !workload->is_object()) return "";
  for (auto kind : {workload::WorkloadKind::kPrimes, workload::WorkloadKind::kMatmul,
                    workload::WorkloadKind::kExec}) {
    if (workload->contains(workload::WorkloadKindName(kind))) {
      return workload::WorkloadKindName(kind);
    }
  }
  return "";
}

// The finished job's status, nullptr when it has none.
const json* FinishedStatus(const json& job) {
  if (!job.is_object()) return nullptr;
  const auto status = job.find("status");
  if (status == job.end() || !status->is_object()) return nullptr;
  const std::string phase = StringAt(*status, "phase");
  return phase == "Succeeded" || phase == "Failed" ? &*status : nullptr;
}

// The series of a finished job with `value`: labelled job, namespace and
// workload; nullopt when the value is not finite or the job has no name.
std::optional<prometheus::ClientMetric> JobSeries(const json& job, double value) {
  const auto meta = job.find("metadata");
  if (!std::isfinite(value) || meta == job.end() || StringAt(*meta, "name").empty()) {
    return std::nullopt;
  }
  prometheus::ClientMetric metric;
  metric.label = {{"job", StringAt(*meta, "name")},
                  {"namespace", StringAt(*meta, "namespace")},
                  {"workload", WorkloadOf(job)}};
  metric.gauge.value = value;
  return metric;
}

// The series of `job`, when its status is finished with an efficiency.
std::optional<prometheus::ClientMetric> SeriesOf(const json& job) {
  const json* status = FinishedStatus(job);
  if (!status) return std::nullopt;
  const auto efficiency = status->find("efficiency");
  if (efficiency == status->end() || !efficiency->is_number()) return std::nullopt;
  auto metric = JobSeries(job, efficiency->get<double>());
  if (metric) metric->label.push_back({"reference", StringAt(*status, "efficiencyReference")});
  return metric;
}

// A node's last judgment: what orders it, and the ratio.
struct Judged {
  std::tuple<std::string, std::string, std::string> order;  // completionTime, namespace, name
  double ratio = 0;
};

}  // namespace

std::optional<prometheus::MetricFamily> NodeBaselineFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  std::map<std::pair<std::string, std::string>, Judged> last;  // (node, workload)
  for (const auto& job : jobs) {
    if (!job) continue;
    const json* status = FinishedStatus(*job);
    if (!status) continue;
    const auto nodes = status->find("nodes");
    if (nodes == status->end() || !nodes->is_array()) continue;
    const auto meta = job->find("metadata");
    if (meta == job->end()) continue;
    const std::tuple order{StringAt(*status, "completionTime"), StringAt(*meta, "namespace"),
                           StringAt(*meta, "name")};
    const std::string workload = WorkloadOf(*job);
    for (const json& row : *nodes) {
      const std::string node = StringAt(row, "name");
      const auto ratio = row.is_object() ? row.find("baselineRatio") : row.end();
      if (node.empty() || ratio == row.end() || !ratio->is_number()) continue;
      const double value = ratio->get<double>();
      if (!std::isfinite(value)) continue;
      auto [it, inserted] = last.try_emplace({node, workload}, Judged{order, value});
      if (!inserted && it->second.order < order) it->second = {order, value};
    }
  }
  if (last.empty()) return std::nullopt;
  prometheus::MetricFamily family{kNodeBaselineRatioMetric,
                                  "A node's measured speed over its own baseline (its history) "
                                  "in the last finished job of the workload kind that judged it "
                                  "(status.nodes[].baselineRatio)",
                                  prometheus::MetricType::Gauge,
                                  {}};
  for (const auto& [key, judged] : last) {
    prometheus::ClientMetric metric;
    metric.label = {{"node", key.first}, {"workload", key.second}};
    metric.gauge.value = judged.ratio;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

std::optional<prometheus::MetricFamily> JobEfficiencyFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  prometheus::MetricFamily family{kJobEfficiencyMetric,
                                  "The efficiency of a finished WeightedJob against the physical "
                                  "limit (status.efficiency), measured against `reference` "
                                  "(status.efficiencyReference)",
                                  prometheus::MetricType::Gauge,
                                  {}};
  for (const auto& job : jobs) {
    if (!job) continue;
    if (auto series = SeriesOf(*job)) family.metric.push_back(std::move(*series));
  }
  if (family.metric.empty()) return std::nullopt;
  return family;
}

std::optional<prometheus::MetricFamily> JobEnergyFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  prometheus::MetricFamily family{kJobEnergyMetric,
                                  "The estimated energy of a finished WeightedJob, joules, from "
                                  "each board's idle and load power over its idle and busy time "
                                  "(status.energy.joules)",
                                  prometheus::MetricType::Gauge,
                                  {}};
  for (const auto& job : jobs) {
    if (!job) continue;
    const json* status = FinishedStatus(*job);
    if (!status) continue;
    const auto energy = status->find("energy");
    if (energy == status->end() || !energy->is_object()) continue;
    const auto joules = energy->find("joules");
    if (joules == energy->end() || !joules->is_number()) continue;
    if (auto metric = JobSeries(*job, joules->get<double>())) {
      family.metric.push_back(std::move(*metric));
    }
  }
  if (family.metric.empty()) return std::nullopt;
  return family;
}

}  // namespace ballast::controller
