// The per-job efficiency gauge the operator exports (docs/metrics.md):
//
//   ballast_job_efficiency{weightedjob,job_namespace,workload,reference}
//
// one series per finished WeightedJob whose status has an efficiency
// (Succeeded, or Failed once an efficiency was computed), its value exactly
// status.efficiency and `reference` status.efficiencyReference ("declared
// speeds" | "CPU budgets" | "bench scores" | "estimate"; job_efficiency.h).
// It is built from the informer's cache of WeightedJobs at each scrape, so a
// series exists exactly while its job does: it appears with the finished
// status, and ends when the job is deleted (kubectl delete, or
// ttlSecondsAfterFinished), and a new leader serves the same series. The
// coordinator cannot export it: it forgets a job at most `linger` after the
// job finished, and the figure is the operator's (decide_outcome.cc).
//
// And per node and workload kind, from the same cache:
//
//   ballast_node_baseline_ratio{node,workload}
//
// the node's status.nodes[].baselineRatio in the finished job of that kind
// that judged it last (the latest status.completionTime; a tie goes to the
// greater namespace/name): measured over the node's own baseline
// (core/health/deviation.h). A node's series ends when no job that judged it
// is left.
//
// And per finished job, from the same cache:
//
//   ballast_job_energy_joules{weightedjob,job_namespace,workload}
//
// exactly status.energy.joules (the estimate over the nodes whose board
// power is known; status.energy.complete says whether that was all of them).
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <prometheus/metric_family.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace ballast::runtime {

inline constexpr const char* kJobEfficiencyMetric = "ballast_job_efficiency";
inline constexpr const char* kNodeBaselineRatioMetric = "ballast_node_baseline_ratio";
inline constexpr const char* kJobEnergyMetric = "ballast_job_energy_joules";

// The family of `jobs` (WeightedJobs as the API server returns them) that
// have a finished status with an efficiency, one series each in the order
// given; nullopt when none has (prometheus-cpp leaves out a family without
// series). A job whose fields have unexpected types is left out. Never
// throws.
std::optional<prometheus::MetricFamily> JobEfficiencyFamily(
    const std::vector<std::shared_ptr<const nlohmann::json>>& jobs);

// The family of the nodes `jobs` judged against their baselines, one series
// per node and workload kind (see above), sorted by node then workload;
// nullopt when no job judged a node. Never throws.
std::optional<prometheus::MetricFamily> NodeBaselineFamily(
    const std::vector<std::shared_ptr<const nlohmann::json>>& jobs);

// The family of `jobs` with a finished status that has an energy, one series
// each in the order given; nullopt when none has. Never throws.
std::optional<prometheus::MetricFamily> JobEnergyFamily(
    const std::vector<std::shared_ptr<const nlohmann::json>>& jobs);

}  // namespace ballast::runtime
