// The adaptive policy's first split of a job (step 1 of adaptive_policy.cc):
// each worker's planned share in proportion to its prior speed, by declared
// cost, and the split its reserved shares are made by, which plans a little
// short a worker that computes in bursts (WorkerPrior::duty below 1: a CPU
// quota) and holds a small share of the speed, when its prior is credible.
// Handing in its last items a throttled gap late idles every other worker,
// while the items it is short the others take up at once.
//
// Thread-safety: pure functions.
#pragma once

#include <vector>

#include "core/balance/policy.h"

namespace ballast::balance {

struct InitialSplit {
  // Each worker's share of the job's cost by its prior alone: what a
  // credible prior is weighed against (SpeedEstimator::SetPlannedCost).
  std::vector<double> planned_cost;
  // The weights to reserve the shares by (PolicyBase::ReserveProportional):
  // the priors, hedged (HedgeFactor).
  std::vector<double> reserve;
};

// Splits a job of cost `job_cost` over `workers` by their priors (each at
// least 1e-9); `hedge` (AdaptiveOptions::hedge) turns the hedge on.
InitialSplit SplitByPriors(const std::vector<WorkerPrior>& workers, double job_cost, bool hedge);

// The factor on a worker's planned share: 1, unless `hedge` is on, its prior
// is credible (Z > 0), it computes in bursts (duty d < 1) and it holds a
// share q < kHedgeMaxShare of the total speed; then exp(Z · kHedge · (1 - d)
// · Φ⁻¹(q)), below 1. A node that ends the job a little early costs the
// others the items it was short, which they take up at once; one that ends
// it a little late idles them all until it hands in its last items, and a
// node under a CPU quota hands them in up to a throttled gap, (1 - d) of a
// quota period, late (docs/efficiency.md, "A hedged first split for bursty
// workers"). So the split aims below the expected finish, the more the
// smaller the node's share of the speed (the newsvendor's critical ratio
// q). Only small shares are hedged: a larger one's hedge would overload the
// others beyond their rebalancing threshold and cost messages (the same
// section); with a fuzzy prior (Z = 0) the split's own error is far larger
// than a gap, and a steady node (d = 1, every simulated one) has no gap.
double HedgeFactor(const WorkerPrior& worker, double q, bool hedge);

// The standard normal quantile Φ⁻¹(p) for p in (0, 1), by Newton's method on
// Φ(x) = erfc(-x / √2) / 2 from x = 0; exact to about 1e-12 for p in
// [1e-12, 1 - 1e-12] (clamped into it).
double NormalQuantile(double p);

}  // namespace ballast::balance
