// Scenario: what the simulator runs — a workload, the nodes with their true
// (hidden) speeds, links and failures, the profile that weighs them, and the
// policies to compare. ParseScenario reads the YAML form documented in
// docs/simulator.md; every error names the file, the line and what was expected.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/item_order.h"
#include "core/balance/policy_options.h"
#include "core/cluster/emulated_node.h"
#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"

namespace ballast::sim {

// A node of a scenario: the one node record (cluster/emulated_node.h),
// read under cluster::kSimulatedNodes; its `speed` is its true speed in cores
// of speed 1, unknown to the policies.
using cluster::EmulatedNode;
using cluster::SpeedChange;

// An item that fails every attempt (a corrupt input): each attempt takes
// `attempt_seconds` at speed 1 and the worker makes Workload::retries + 1 of
// them, then reports the item failed (Report::failed).
struct FailingItem {
  uint64_t item = 0;  // as listed (before any deal order)
  double attempt_seconds = 0;
};

enum class Transfer { kStream, kBlock };

// What the policies are told of the items' costs (the simulator's true costs
// are the same either way): kCost, the declared shape or the item costs, so
// they split by cumulative cost; kCount, nothing (uniform), so they split by
// count.
enum class Split { kCost, kCount };

// "cost" | "count".
const char* SplitName(Split split);

struct Workload {
  uint64_t items = 0;
  double item_seconds = 1;  // mean seconds of one item at speed 1
  balance::CostShape cost = balance::CostShape::kUniform;
  // Each item's true cost is multiplied by a factor drawn uniformly from
  // [1 - jitter, 1 + jitter] (seeded); policies only know the declared shape.
  double cost_jitter = 0;
  // Each item's true cost gains this much after the jitter, in mean declared
  // items (a process started per item, whose time the declared costs do not
  // show): an item takes item_seconds * (start_cost + cost * jitter) at
  // speed 1. Policies are not told of it; adaptive may learn it.
  double start_cost = 0;
  // One true cost per item (relative: the mean item takes item_seconds), or
  // null for the shape `cost`. Listed as a job lists its items
  // (`itemsFrom.list`, each item's `cost`) or drawn from a distribution
  // (`itemsFrom.pareto`); `itemCosts`, whose list is one number per item, is
  // the older spelling, still read. At most ScenarioBounds::kMaxItemCosts items.
  balance::ItemCosts item_costs;
  // One true cost per item as listed (`trueCosts`), where it is not the
  // declared one: item_costs (or the shape) is what the policies are told,
  // these are what the items cost (relative: the mean item takes
  // item_seconds), before the jitter. Null: the declared costs are the true
  // ones. A user's sizes that track the cost only roughly (an archive of
  // text costs more per byte than one of noise) are modelled so.
  balance::ItemCosts true_costs;
  Split split = Split::kCost;
  // How items with costs the policies are told (split: cost) are dealt, as a
  // job's itemsFrom.order (balance/item_order.h): each policy's own order by
  // default.
  balance::ItemOrder order = balance::ItemOrder::kPolicy;
  double bytes_per_item = 0;  // input bytes shipped to a worker per item
  // stream: a lease's items arrive one after another and each is computed as
  // soon as it is there; block: computing starts when the whole lease arrived.
  Transfer transfer = Transfer::kStream;
  // False: the items stand for commands with side effects (exec), which the
  // coordinator never computes twice on purpose (JobInfo::repeatable).
  bool repeatable = true;
  // Items a node runs at once (exec.concurrency; 0: one per started core of
  // each node's quota, EmulatedNode::cores). Items running at once share the
  // node's speed.
  uint32_t concurrency = 0;
  // Extra work per item, as a fraction, while a node runs more items at
  // once than it has cores (processes time-sliced in one quota: cache and
  // switches); 0.1 = 10 % more.
  double slice_overhead = 0;
  // exec.retries: a failing item is attempted retries + 1 times.
  uint32_t retries = 0;
  std::vector<FailingItem> failing_items;  // in ascending item order
};

// One job of a multi-job scenario: the same workload on the same nodes,
// after the previous job. `speeds` sets nodes' true speeds from this job on
// (drift between jobs); the others keep theirs. `changes` throttle a node
// within the job.
struct JobStep {
  std::string name;
  std::map<std::string, double> speeds;  // node -> true speed, from this job on
  // node -> its speed changes within this job only (a board throttled
  // mid-job), in place of the node's own `changes`; each repeat has them.
  std::map<std::string, std::vector<SpeedChange>> changes;
};

// How the jobs of a multi-job scenario learn from each other
// (fuzzy/history_prior.h; docs/history.md).
struct HistorySettings {
  fuzzy::HistoryPriorOptions prior;
  double gap_seconds = 0;  // virtual seconds from one job's end to the next one's start
};

struct Scenario {
  std::string name;
  std::string description;
  Workload workload;
  std::string profile = "raspberry-pi";  // a built-in name or a path relative to the file
  std::vector<EmulatedNode> nodes;
  std::vector<balance::PolicySpec> policies;
  uint64_t seed = 1;
  // Seconds after a node dies that the coordinator declares it lost.
  double failure_detection = 10;
  // A sequence of jobs on the same nodes (empty: one job); `repeat` is
  // expanded, so each element is one job.
  std::vector<JobStep> jobs;
  HistorySettings history;
  // What the file says in a spelling still read but deprecated, each placed
  // at its file and line ("s.yaml:4:3: workload.itemCosts: ..."); ParseScenario
  // fills it, `ballast simulate` prints each as a warning.
  std::vector<std::string> warnings;
};

// Bounds of a scenario's numbers (docs/simulator.md states each one): wide
// enough for any cluster a scenario models, narrow enough that every time,
// rate and sum the simulator derives from them stays a finite number.
struct ScenarioBounds {
  static constexpr uint64_t kMaxItems = 1'000'000'000'000ULL;  // items, localItems
  static constexpr double kMinItemSeconds = 1e-9;
  static constexpr double kMaxItemSeconds = 1e6;
  // A node's (cluster::SimulatedNodeBounds); the speeds and times of `jobs` too.
  static constexpr double kMinSpeed = cluster::SimulatedNodeBounds::kMinSpeed;
  static constexpr double kMaxSpeed = cluster::SimulatedNodeBounds::kMaxSpeed;
  static constexpr double kMaxLatency = cluster::SimulatedNodeBounds::kMaxLatency;
  static constexpr double kMinBandwidth = cluster::SimulatedNodeBounds::kMinBandwidth;
  static constexpr double kMaxBandwidth = cluster::SimulatedNodeBounds::kMaxBandwidth;
  static constexpr double kMaxBytesPerItem = cluster::SimulatedNodeBounds::kMaxBytesPerItem;
  static constexpr double kMaxTime = cluster::SimulatedNodeBounds::kMaxTime;  // failureDetection
  static constexpr int64_t kMaxJobs = 1000;   // jobs, repeats expanded
  static constexpr double kMaxSamples = 1e9;  // history.fullTrustSamples
  // items with item costs (itemsFrom): one cost per item is kept, as a job's item list.
  static constexpr int64_t kMaxItemCosts = 100'000;
  static constexpr double kMinParetoAlpha = 0.5;  // itemsFrom.pareto.alpha
  static constexpr double kMaxParetoAlpha = 100;
  static constexpr double kMaxParetoMinimum = 1e12;  // itemsFrom.pareto.minimum
  static constexpr double kMaxStartCost = 1e3;       // startCost, in mean items
  static constexpr double kMaxCores = cluster::SimulatedNodeBounds::kMaxCores;
  static constexpr int64_t kMaxConcurrency = 256;    // as exec.concurrency
  static constexpr double kMaxSliceOverhead = 10;    // sliceOverhead, a fraction
  static constexpr int64_t kMaxRetries = 100;        // as exec.retries
  static constexpr int64_t kMaxFailingItems = 1000;  // failingItems entries
};

// The scenario of a YAML file: read as a tree (config/document.h) by
// ScenarioFromJson, its error located at the file and line. Returns Invalid
// "file:line:col: <path>: ..." for malformed YAML, unknown keys, a number
// outside its ScenarioBounds (NaN and
// infinities included), a node name that is not a DNS-1123 subdomain
// (common/names.h), an empty node list, unknown policies or options, more
// than kMaxJobs jobs, a leaveAt (or a joining node's failAt) not after its
// joinAt, every node joining late, a job's speed for a node the scenario does not have, or
// item costs (itemsFrom, or the older itemCosts) that are not one positive
// number per item (at most kMaxItemCosts items), a list of items beside a
// count (items), costs with a costModel, both spellings, or a failing item outside
// the workload or named twice. A workload written with the older itemCosts
// is read as itemsFrom and gains a warning naming its line.
StatusOr<Scenario> ParseScenario(std::string_view yaml, const std::string& file_name);
// The one reader of a scenario, from its tree; Invalid "<path>: ..." as above.
StatusOr<Scenario> ScenarioFromJson(const nlohmann::json& root);

// The node's speed at time t (after the changes at or before t).
double SpeedAt(const EmulatedNode& node, double t);

// How a node computes the items it runs at once (EmulatedNode::cores,
// Workload::concurrency, Workload::slice_overhead).
struct ItemsAtOnceModel {
  int items = 1;        // items running at once
  double share = 1;     // of the node's speed those items use: min(items, cores) / cores
  double overhead = 0;  // extra work per item while items > cores
  // Cost units per second over speed: share / (1 + overhead).
  double throughput() const { return share / (1 + overhead); }
};
// The model of `node` under `workload`: without cores, one item at a time
// (or `concurrency`, each on a core of its own) at the node's speed.
ItemsAtOnceModel AtOnce(const EmulatedNode& node, const Workload& workload);

}  // namespace ballast::sim
