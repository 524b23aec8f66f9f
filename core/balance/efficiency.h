// The headline figure every driver reports: how close a job came to the
// physical limit (docs/efficiency.md).
//
//   ideal time  = W / Σ s_i      W: the job's total work, in seconds of a
//                                   unit-speed core; s_i: each node's speed
//                 or, when later, its largest item on the node that runs one
//                 fastest (an item cannot be split; PhysicalLimit)
//   efficiency  = ideal / makespan
//
// The three drivers differ only in how they know W and s_i; each states its
// way here, so `simulate`, `run` and a WeightedJob's status are comparable:
//   simulate  W = the true cost of every item; s_i = the scenario's true
//             speeds, over time (IdealMakespan walks speed changes,
//             failures, joins and drains with IdealSecondsOver; with
//             constant speeds it is IdealSeconds).
//   run       W = CPU seconds the worker processes used; s_i = the emulated
//             cores each node's CPU quota applied, while the node was in the
//             job (IdealSecondsOver, when nodes join or are drained).
//   operator  W = the work the workers measured; s_i, two ways, both
//             reported: "measured" (each node's work / its busy time, which
//             hides contention: nodes that share a CPU each look fast) and
//             "nominal" (the node's declared speed, where one is known).
//
// Thread-safety: pure functions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace ballast::balance {

// W / total_speed; 0 when either is not a finite positive number.
inline double IdealSeconds(double work, double total_speed) {
  if (!std::isfinite(work) || !std::isfinite(total_speed) || work <= 0 || total_speed <= 0) {
    return 0;
  }
  return work / total_speed;
}

// One node's capacity over a stretch of a job: `speed` from `from` until
// `until` (seconds from the job's start).
struct Capacity {
  double from = 0;
  double until = std::numeric_limits<double>::infinity();
  double speed = 0;
};

// The physical limit when the capacity changes over the job (nodes that
// join, are drained, fail or change speed): the earliest T with
// ∫₀ᵀ Σ speed(t) dt = work, where speed(t) sums the spans holding t. 0 when
// work is not a finite positive number; infinity when the spans never hold
// that much work. Spans with a non-finite or non-positive speed, or that end
// before they begin, count for nothing. O(S log S) in the spans.
double IdealSecondsOver(double work, const std::vector<Capacity>& spans);

// An item cannot be split: no job ends before its costliest item could have
// been computed where one item goes fastest. `item_work` is that item's work
// (in W's unit) and `fastest_item_speed` the speed of one item's run on the
// node that runs one fastest: its speed over the items it runs at once (a
// node of 2 cores running two commands gives each 1). 0 when either is not a
// finite positive number.
inline double LargestItemSeconds(double item_work, double fastest_item_speed) {
  return IdealSeconds(item_work, fastest_item_speed);
}

// Which bound a job's limit is: the work spread over every node's speed, or
// its largest item on the fastest node.
enum class LimitBound { kWork, kLargestItem };

// "work" | "largest item".
inline const char* LimitBoundName(LimitBound bound) {
  return bound == LimitBound::kLargestItem ? "largest item" : "work";
}

struct Limit {
  double seconds = 0;
  LimitBound bound = LimitBound::kWork;
};

// The physical limit: the later of the two bounds, and which one it is.
inline Limit PhysicalLimit(double work_bound_s, double largest_item_s) {
  if (std::isfinite(largest_item_s) && largest_item_s > work_bound_s) {
    return {largest_item_s, LimitBound::kLargestItem};
  }
  return {work_bound_s, LimitBound::kWork};
}

// The items a node runs at once: `concurrency` when the job sets one
// (exec.concurrency; 0: not set), else one per started core of `cores` (the
// worker's rule, worker/cpu_budget.h); at least 1.
inline int ItemsAtOnce(double cores, uint32_t concurrency) {
  if (concurrency > 0) return static_cast<int>(std::min<uint32_t>(concurrency, 1u << 20));
  return std::isfinite(cores) && cores > 1 ? static_cast<int>(std::min(std::ceil(cores), 1e6)) : 1;
}

// The limit of a job whose `work` ran on `spans`, its costliest item
// `largest_share` of the work, one item running at `fastest_item_speed` on
// the node that runs one fastest: PhysicalLimit of the two bounds.
inline Limit JobLimit(double work, const std::vector<Capacity>& spans, double largest_share,
                      double fastest_item_speed) {
  return PhysicalLimit(IdealSecondsOver(work, spans),
                       LargestItemSeconds(work * largest_share, fastest_item_speed));
}

// ideal / makespan, at most 1; 0 when either is not a finite positive
// number. No schedule beats the physical limit, so a figure above 1 would only
// say that W was over-reported (a forged or broken worker's CPU seconds, a
// node that got more CPU than its speed): it is capped, never printed, and
// EfficiencyCapped tells the caller to say so.
inline double Efficiency(double ideal_s, double makespan_s) {
  if (!std::isfinite(ideal_s) || !std::isfinite(makespan_s) || ideal_s <= 0 || makespan_s <= 0) {
    return 0;
  }
  return std::min(1.0, ideal_s / makespan_s);
}

// True when Efficiency(ideal_s, makespan_s) was cut to 1: the ideal is
// longer than the makespan.
inline bool EfficiencyCapped(double ideal_s, double makespan_s) {
  return std::isfinite(ideal_s) && std::isfinite(makespan_s) && makespan_s > 0 &&
         ideal_s > makespan_s;
}

}  // namespace ballast::balance
