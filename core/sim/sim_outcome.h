// The accounting of a simulation's outcome: what reached the coordinator
// (OutcomeLedger), and the bounds its makespan is measured against — the
// physical limit (ScenarioLimit, IdealMakespan) and the ideal static packing
// (PackingSeconds).
//
// Thread-safety: OutcomeLedger is a value owned by one simulation; the
// functions are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/efficiency.h"
#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/health/measurement_noise.h"
#include "core/sim/scenario.h"
#include "core/sim/true_cost.h"

namespace ballast::sim {

// The items whose results reached the coordinator, and whose they are. A
// worker's items are those the coordinator received first: a report still on
// its way when the job finished never arrives, and an item another worker
// handed in before (a backup's copy, a step past a cut) counts for that one.
class OutcomeLedger {
 public:
  // `nodes` workers, numbered by node; `declared`: the costs the coordinator
  // counts a worker's work in (the policy's).
  OutcomeLedger(size_t nodes, balance::CostModel declared);

  // Counts `report`, from node `node`'s worker (< nodes), as it reaches the
  // coordinator: its items no one handed in before, and its failed items.
  void Account(size_t node, const balance::Report& report);

  // The items node `node`'s worker handed in first, and their declared cost.
  uint64_t items(size_t node) const { return items_[node]; }
  double cost(size_t node) const { return cost_[node]; }
  // Node `node`'s speed samples as the coordinator takes them
  // (coordinator::WorkerView::speed_samples): each report that handed in
  // items, the declared cost it merged over the computing seconds since the
  // previous one.
  const std::vector<health::SpeedSample>& speed_samples(size_t node) const {
    return samples_[node];
  }
  // Items reported failed (Workload::failing_items).
  uint64_t failed_items() const { return failed_.size(); }

 private:
  balance::CostModel declared_;
  balance::IntervalSet arrived_;  // items whose results reached the coordinator
  balance::IntervalSet failed_;   // failed items whose report reached the coordinator
  std::vector<uint64_t> items_;   // by node
  std::vector<double> cost_;      // by node
  std::vector<std::vector<health::SpeedSample>> samples_;  // by node
  std::vector<double> unsampled_s_;                        // by node
};

// The physical limit of `scenario`, whose items' true costs are `cost`: the
// later of IdealMakespan of all the work and the largest item on the fastest
// speed any node reaches (balance::PhysicalLimit).
balance::Limit ScenarioLimit(const Scenario& scenario, const TrueCost& cost);

// The LPT packing of the items' true costs onto the nodes there from the
// start, at their initial speeds (LptMakespan, packing.h); 0 past
// ScenarioBounds::kMaxItemCosts items.
double PackingSeconds(const Scenario& scenario, const TrueCost& cost);

// The physical limit: the earliest time at which nodes of the scenario's true
// speeds (changes, failures, joins and drains integrated: the capacity the
// job actually had) could finish `work_seconds` of
// speed-1 work. A node whose link delivers fewer items per second than it
// could compute is capped at its link's item rate times `max_item_seconds`
// (the costliest item: still a lower bound whichever items it gets; 0 means
// the mean item).
double IdealMakespan(const Scenario& scenario, double work_seconds, double max_item_seconds = 0);

}  // namespace ballast::sim
