// ItemLedger: where a policy's items are, but for the leases — the pool of
// unassigned items, each worker's reserve (its planned share, or ranges set
// aside for it to prefetch; not yet leased) and the finished items — with
// their declared cost kept as running sums in the cost model decisions are
// made by. PolicyBase holds the leases and moves items between the four
// places through it.
//
// Only unfinished items enter the pool; a finished item leaves it.
//
// Thread-safety: not thread-safe (see Policy).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/policy.h"
#include "core/balance/range.h"

namespace ballast::balance {

class ItemLedger {
 public:
  // A job of `items` items whose costs are `cost`, for `workers` workers:
  // every item in the pool, nothing reserved or finished.
  void Reset(uint64_t items, CostModel cost, size_t workers);
  // A worker joined: the next id, with nothing reserved.
  void AddWorker();

  // The cost model the sums are kept in.
  const CostModel& cost() const { return cost_; }
  // Switches to `cost` (the same items) and brings every sum to it.
  void SetCost(CostModel cost);

  // Records `range` (inside the job) finished and takes it out of the pool;
  // returns how many of its items were not finished before.
  uint64_t Finish(Range range);
  const IntervalSet& done() const { return done_; }
  // `range` without the finished items at its front.
  Range SkipFinished(Range range) const;
  // The first and the last stretch of `range` that holds no finished item
  // (empty when every item is finished).
  Range FirstOpenPart(Range range) const;
  Range LastOpenPart(Range range) const;

  const IntervalSet& pool() const { return pool_; }
  // Declared cost of the pool; a running sum, so O(1).
  double pool_cost() const { return pool_.empty() ? 0 : std::max(0.0, pool_cost_); }
  // Takes up to `count` items (at least one) from the front of the pool (one
  // contiguous range; empty when the pool is).
  Range TakeFromPool(uint64_t count);
  // Takes items from the front of the pool worth at most `cost` (at least one item).
  Range TakeCostFromPool(double cost);
  // ... from the pool's range that holds `from`, beginning there.
  Range TakeCostFromPoolAt(uint64_t from, double cost);
  // Puts the unfinished items of `range` in the pool; true when any of them
  // was not there before.
  bool ReturnToPool(Range range);

  const IntervalSet& reserved(WorkerId worker) const { return reserves_[worker].items; }
  // Declared cost of the worker's reserve, and of every reserve together.
  double reserved_cost(WorkerId worker) const { return reserves_[worker].cost; }
  double reserved_cost() const { return std::max(0.0, reserved_cost_); }
  // Makes `shares[id]` (out of the pool: PlanShares cut them from it) each
  // worker's reserve, replacing what it had.
  void Reserve(std::vector<IntervalSet> shares);
  // Adds `range` (already out of the pool) to the worker's reserve.
  void SetAside(WorkerId worker, Range range);
  // Takes `range` (a part of the worker's reserve) out of it.
  void Unreserve(WorkerId worker, Range range);
  // Takes the worker's next reserved stretch that is unfinished, dropping
  // the finished items before it (empty when none is left).
  Range TakeReserved(WorkerId worker);
  // Empties the worker's reserve; returns what it held (to go back to the pool).
  IntervalSet DropReserved(WorkerId worker);

 private:
  struct ReservedItems {
    IntervalSet items;
    double cost = 0;  // declared cost of `items`
  };
  // Declared cost of the items of `range` that are in `set`.
  double CostIn(const IntervalSet& set, Range range) const;
  void PoolRemove(Range range);

  uint64_t items_ = 0;
  CostModel cost_;
  IntervalSet pool_;
  IntervalSet done_;
  std::vector<ReservedItems> reserves_;  // by worker id
  double pool_cost_ = 0;                 // declared cost of pool_
  double reserved_cost_ = 0;             // declared cost of every reserve
};

}  // namespace ballast::balance
