// The efficiency a finished WeightedJob's status reports, with the one
// definition of core/balance/efficiency.h: ideal = the later of W / Σ s_i and
// the costliest item on the node that runs one fastest (balance::JobLimit);
// efficiency = ideal / makespan.
//
// The figure shown (status.efficiency, idealSeconds, limitBound) is measured
// against speeds known outside the job, the first of these every node of the
// job has (status.efficiencyReference):
//
//   declared speeds  the node annotation ballast.io/emulated-speed, in cores of
//                    the machine whose CPU seconds its workers report (the
//                    test beds set it on every emulated node)
//   CPU budgets      the CPU the worker may use (its pod's CPU limit within
//                    the node's capacity), on nodes of one ballast.io/cpu-model
//   bench scores     the same CPU budgets, each CPU second weighed by the
//                    node's ballast.io/bench-score (the probe's benchmark, per
//                    core) over the fastest node's: boards of several models
//
// With any of them W is the CPU seconds the workers reported, weighed the same
// way: a measurement, not the job's estimate. Without one the figure is the
// job's own estimate, and efficiencyReference says "estimate" and why.
//
// The job's own estimate is always beside it (estimatedIdealSeconds,
// estimatedEfficiency): W = the declared cost the workers delivered, s_i =
// each node's cost / its busy time. Nodes that share a CPU each look fast, and
// the speeds are learned in the very run they judge, so two runs of one job
// may read differently there.
//
// A node counts only while it was in the job (balance::IdealSecondsOver):
// from joining (the start, or mid-job) until it left or was lost for good.
// A job resumed from a checkpoint ran its items in several sessions; only the
// last one's workers are known, so the ideals are scaled by items / the items
// this session finished.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "coordinator/job_types.h"
#include "core/balance/efficiency.h"
#include "operator/api/kube_views.h"

namespace ballast::controller {

// The node annotation holding a node's declared speed, in cores of the
// machine whose CPU seconds its workers report ("0.5"). The test bed's node
// agent sets it on every emulated node (docs/testenv.md).
inline constexpr std::string_view kNodeSpeedAnnotation = "ballast.io/emulated-speed";
// The probe's labels the reference reads (core/probe/labels.h).
inline constexpr std::string_view kCpuModelLabel = "ballast.io/cpu-model";
inline constexpr std::string_view kBenchScoreLabel = "ballast.io/bench-score";

// The declared speed of `node`: the annotation's value when it is a finite
// number > 0, nullopt when absent or malformed.
std::optional<double> DeclaredSpeed(const api::NodeView& node);

// What the operator knows of a node outside the job, read when its worker
// joins: what the reference speeds are made of.
struct NodeReference {
  std::optional<double> declared_speed;  // ballast.io/emulated-speed
  std::optional<double> cpu_budget;      // cores its worker may use
  std::string cpu_model;                 // ballast.io/cpu-model; "" when unknown
  std::optional<double> bench_score;     // ballast.io/bench-score, a finite number > 0
  bool operator==(const NodeReference&) const = default;
};

// `node`'s reference facts; `cpu_budget` is the cores the job's worker pod
// may use there (its CPU limit within the node's capacity), when known.
NodeReference NodeReferenceOf(const api::NodeView& node, std::optional<double> cpu_budget);

enum class ReferenceSource { kDeclaredSpeeds, kCpuBudgets, kBenchScores, kEstimate };
// "declared speeds" | "CPU budgets" | "bench scores" | "estimate".
const char* ReferenceSourceName(ReferenceSource source);

// The speeds a job's efficiency is measured against, by node.
struct Reference {
  ReferenceSource source = ReferenceSource::kEstimate;
  std::map<std::string, double> speed;  // s_i, in weighed CPU seconds per second
  std::map<std::string, double> cores;  // the CPU its worker uses (items at once)
  std::map<std::string, double> worth;  // what one of its CPU seconds weighs
  std::string missing;                  // kEstimate: why no source fits, for people
};

// The first source every node of `nodes` has (see above); kEstimate, saying
// why, when none does or `nodes` is empty.
Reference ChooseReference(const std::map<std::string, NodeReference>& nodes);

// What a job's items impose on its limit.
struct ItemBound {
  double largest_share = 0;  // its costliest item's share of the declared cost
  uint32_t concurrency = 0;  // exec.concurrency; 0: one item per started core
};

struct EfficiencyFigures {
  // Against `source` (the estimate when there is none).
  double ideal_s = 0;  // 0 when nothing was measured
  double efficiency = 0;
  ReferenceSource source = ReferenceSource::kEstimate;
  balance::LimitBound bound = balance::LimitBound::kWork;
  std::string missing;  // why `source` is the estimate; "" otherwise
  // The job's own estimate.
  double estimated_ideal_s = 0;
  double estimated_efficiency = 0;
};

// The figures of a finished session `view` whose job took `makespan_s` in
// all, its workers' nodes as `nodes` say (a worker whose node is not there
// has no reference).
EfficiencyFigures ComputeEfficiency(const coordinator::JobView& view, double makespan_s,
                                    const std::map<std::string, NodeReference>& nodes,
                                    const ItemBound& items);

}  // namespace ballast::controller
