#include "operator/runtime/efficiency_metrics.h"

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "core/common/json_read.h"
#include "core/common/metric_labels.h"
#include "core/workload/workload.h"
#include "operator/api/weighted_job.h"

namespace ballast::runtime {
namespace {

using nlohmann::json;

// A finished WeightedJob as the families read it: its status read by the one
// reader of a status (StatusFromJson).
struct FinishedJob {
  std::string name;
  std::string ns;
  history::HistoryKey history_key;  // HistoryKeyOf
  api::WeightedJobStatus status;
};

// What the job's history is kept under (HistoryKey: the workload kind, for
// exec with its image), the label its speeds carry at the coordinator; when
// the spec is not one this version runs, the kind spec.workload names; no
// key (text "") when it names none.
history::HistoryKey HistoryKeyOf(const json& spec, const std::string& name) {
  const api::ParsedSpec parsed = api::ParseWeightedJobSpec(spec, name);
  if (parsed.spec) return api::HistoryKey(*parsed.spec);
  const json& workload = json_read::At(spec, "workload");
  for (auto kind : {workload::WorkloadKind::kPrimes, workload::WorkloadKind::kMatmul,
                    workload::WorkloadKind::kExec}) {
    if (workload.is_object() && workload.contains(workload::WorkloadKindName(kind))) {
      return history::HistoryKey(kind);
    }
  }
  return {};
}

// `job` when it is named and its status reads and says Succeeded or Failed.
std::optional<FinishedJob> ReadFinished(const json& job) {
  const json& meta = json_read::At(job, "metadata");
  FinishedJob out{json_read::TextAt(meta, "name"), json_read::TextAt(meta, "namespace"), {}, {}};
  const json& status = json_read::At(job, "status");
  if (out.name.empty() || !status.is_object()) return std::nullopt;
  StatusOr<api::WeightedJobStatus> read = api::StatusFromJson(status);
  if (!read.ok() ||
      (read->phase != api::JobPhase::kSucceeded && read->phase != api::JobPhase::kFailed)) {
    return std::nullopt;
  }
  out.status = std::move(*read);
  out.history_key = HistoryKeyOf(json_read::At(job, "spec"), out.name);
  return out;
}

// The finished jobs of `jobs`, in their order.
std::vector<FinishedJob> FinishedJobs(const std::vector<std::shared_ptr<const json>>& jobs) {
  std::vector<FinishedJob> finished;
  for (const auto& job : jobs) {
    if (!job) continue;
    if (auto read = ReadFinished(*job)) finished.push_back(std::move(*read));
  }
  return finished;
}

// One job's series: its value, and labels beside weightedjob, job_namespace
// and workload.
struct JobValue {
  double value = 0;
  std::vector<prometheus::ClientMetric::Label> labels;
};

// A gauge family of one series per finished job that `value_of` gives a
// finite value, in the order given; nullopt when no job has one.
template <typename ValueOf>
std::optional<prometheus::MetricFamily> PerJobFamily(
    const char* name, const char* help, const std::vector<std::shared_ptr<const json>>& jobs,
    ValueOf value_of) {
  prometheus::MetricFamily family{name, help, prometheus::MetricType::Gauge, {}};
  for (const FinishedJob& job : FinishedJobs(jobs)) {
    std::optional<JobValue> value = value_of(job);
    if (!value || !std::isfinite(value->value)) continue;
    prometheus::ClientMetric metric;
    metric.label = {{kWeightedJobLabel, job.name},
                    {kJobNamespaceLabel, job.ns},
                    {"workload", job.history_key.text()}};
    for (auto& label : value->labels) metric.label.push_back(std::move(label));
    metric.gauge.value = value->value;
    family.metric.push_back(std::move(metric));
  }
  if (family.metric.empty()) return std::nullopt;
  return family;
}

// A node's last judgment: what orders it, and the ratio.
struct Judged {
  std::tuple<std::string, std::string, std::string> order;  // completionTime, namespace, name
  double ratio = 0;
};

}  // namespace

std::optional<prometheus::MetricFamily> NodeBaselineFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  std::map<std::pair<std::string, history::HistoryKey>, Judged> last;  // (node, history key)
  for (const FinishedJob& job : FinishedJobs(jobs)) {
    const std::tuple order{job.status.completion_time.value_or(""), job.ns, job.name};
    for (const api::NodeRow& row : job.status.nodes.value_or(std::vector<api::NodeRow>{})) {
      if (row.name.empty() || !row.baseline_ratio || !std::isfinite(*row.baseline_ratio)) continue;
      auto [it, inserted] =
          last.try_emplace({row.name, job.history_key}, Judged{order, *row.baseline_ratio});
      if (!inserted && it->second.order < order) it->second = {order, *row.baseline_ratio};
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
    metric.label = {{"node", key.first}, {"workload", key.second.text()}};
    metric.gauge.value = judged.ratio;
    family.metric.push_back(std::move(metric));
  }
  return family;
}

std::optional<prometheus::MetricFamily> JobEfficiencyFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  return PerJobFamily(kJobEfficiencyMetric,
                      "The efficiency of a finished WeightedJob against the physical "
                      "limit (status.efficiency), measured against `reference` "
                      "(status.efficiencyReference)",
                      jobs, [](const FinishedJob& job) -> std::optional<JobValue> {
                        if (!job.status.efficiency) return std::nullopt;
                        return JobValue{
                            *job.status.efficiency,
                            {{"reference", job.status.efficiency_reference.value_or("")}}};
                      });
}

std::optional<prometheus::MetricFamily> JobEnergyFamily(
    const std::vector<std::shared_ptr<const json>>& jobs) {
  return PerJobFamily(kJobEnergyMetric,
                      "The estimated energy of a finished WeightedJob, joules, from "
                      "each board's idle and load power over its idle and busy time "
                      "(status.energy.joules)",
                      jobs, [](const FinishedJob& job) -> std::optional<JobValue> {
                        if (!job.status.energy) return std::nullopt;
                        const json& joules = json_read::At(*job.status.energy, "joules");
                        if (!joules.is_number()) return std::nullopt;
                        return JobValue{joules.get<double>(), {}};
                      });
}

}  // namespace ballast::runtime
