// A job's progress as the coordinator knows it at the moment it answers:
//
//   GET /v1/jobs/{job}/progress -> JobProgress
//
// The live view of `kubectl ballast top` (docs/kubectl-plugin.md), which
// reaches the coordinator through the API server's service proxy. The route
// is read-only and asks for no token: the API server drops a client's
// Authorization header once it has authenticated the user, so the plugin
// could carry the job's token only by reading its Secret. What it answers is
// what GET /metrics, which asks for none either, already tells of the job —
// counts, costs, the workers reporting, each node's items, cost, speeds, lease
// cuts and prior — and the cost model the policy splits by; never a result,
// an item's value or the token.
//
// Bounded: at most kMaxProgressNodes rows, whatever the job's size, each node
// name at most kMaxProgressNameBytes; the answer of a job of any size is a few
// tens of KiB. Costs are in the job's own declared units (what status.totalCost
// counts), so the plugin lays them over the status without converting.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::protocol {

// The most node rows one answer carries (status.nodes' bound too).
inline constexpr size_t kMaxProgressNodes = 100;
// The longest node name read (a Kubernetes node name is at most 253 bytes).
inline constexpr size_t kMaxProgressNameBytes = 253;

// One worker, named by its node.
struct NodeProgress {
  std::string name;
  double prior = 0;    // the prior speed it started from (relative: a weight or a history)
  uint64_t items = 0;  // items whose results it delivered (merged) in this session
  double cost = 0;     // their declared cost, in the job's units
  // Per second of its computing on items that were merged; 0 before it
  // reported computing time.
  double items_per_second = 0;
  double cost_per_second = 0;
  uint64_t steals = 0;  // times its lease was cut (status.nodes[].steals)
  bool operator==(const NodeProgress&) const = default;
};

// The cost model the policy splits by, in the job's units (status.costModel).
struct ProgressCostModel {
  double start_cost = 0;  // a start cost per item; 0 while the declared costs stand
  uint64_t samples = 0;   // reports its latest fit took in
  // A node's busy seconds per unit of cost and per item's start, on the
  // average of the job's nodes; unset before any node reported busy time.
  std::optional<double> seconds_per_cost;
  std::optional<double> start_seconds;
  bool operator==(const ProgressCostModel&) const = default;
};

struct JobProgress {
  std::string job;
  uint64_t items = 0;
  uint64_t completed = 0;  // items finished, those of a checkpoint resumed from included
  double total_cost = 0;   // the job's declared cost, in its units
  double completed_cost = 0;
  bool done = false;        // every item finished (or the job failed verification)
  uint64_t node_count = 0;  // every worker of the job, shown or not
  // Workers that have reported and not left since (declared lost, released):
  // those at work now, as far as the coordinator knows.
  uint64_t reporting = 0;
  uint64_t steals = 0;  // of every worker
  // Unset when the job's policy learns no costs.
  std::optional<ProgressCostModel> cost_model;
  // At most kMaxProgressNodes, in the job's worker order.
  std::vector<NodeProgress> nodes;
  bool operator==(const JobProgress&) const = default;
};

nlohmann::json ToJson(const JobProgress& progress);

// The answer, or Invalid naming the field that is missing, mistyped or out of
// range ("nodes[3].cost: expected a finite number >= 0, got -1"): completed
// above items, more than kMaxProgressNodes rows or more rows than nodeCount
// (the rows' count when absent), reporting above nodeCount,
// a node name empty or longer than kMaxProgressNameBytes. Unknown fields are
// ignored (a newer coordinator may say more). Never throws.
StatusOr<JobProgress> ParseJobProgress(const nlohmann::json& json);

}  // namespace ballast::protocol
