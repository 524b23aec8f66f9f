// TrueCost: the real cost of items in a simulation — the declared shape, or
// the scenario's own cost of each item, times a seeded per-item jitter — in
// the same units as balance::CostModel (the mean item costs 1 before the
// jitter). Without jitter it is the base model; with jitter a prefix sum is
// kept (one double per item). A start cost adds the same amount to every
// item after the jitter (a process started per item), in the same units.
//
// ParetoCosts draws the item costs of a scenario's `itemsFrom: {pareto: ..}`
// (and of its older spelling, `itemCosts: {pareto: ..}`).
//
// Thread-safety: immutable after construction; ParetoCosts is a pure function.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/balance/cost_model.h"

namespace ballast::sim {

class TrueCost {
 public:
  TrueCost(uint64_t items, balance::CostShape shape, double jitter, uint64_t seed);
  // `base` (a shape or one cost per item) times the jitter. With `dealt`
  // (item i of `base` is item dealt[i] of the list, balance/item_order.h)
  // each item keeps the jitter it has as listed, so that dealing the items
  // in another order moves their true costs with them.
  // `start_cost` (>= 0) is added to every item after the jitter.
  // `replaced` (listed item, cost) sets those items' costs outright, neither
  // jittered nor started (a failing item costs its attempts); the items are
  // listed indexes below `base`'s count.
  TrueCost(balance::CostModel base, double jitter, uint64_t seed,
           const std::vector<size_t>& dealt = {}, double start_cost = 0,
           const std::vector<std::pair<uint64_t, double>>& replaced = {});

  // Cost of items [0, i).
  double Cumulative(uint64_t i) const;
  double Cost(balance::Range range) const {
    return Cumulative(range.end) - Cumulative(range.begin);
  }
  // The largest e in [from, limit] with Cost([from, e)) <= cost.
  uint64_t Advance(uint64_t from, uint64_t limit, double cost) const;
  double Total() const { return Cumulative(model_.items()); }
  // The cost of the costliest item.
  double MaxItem() const;

 private:
  balance::CostModel model_;
  std::vector<double> prefix_;  // empty without jitter
};

// `items` costs drawn from a Pareto distribution of shape `alpha` (> 0) and
// scale `minimum` (> 0) by inverse transform: minimum / U^(1/alpha) with U
// uniform in (0, 1] from std::mt19937_64 seeded with `seed`. The same
// arguments give the same costs on every platform's libstdc++/libc++ (the
// engine is specified; U is formed from its raw 53 high bits, not by a
// distribution). Every cost is finite and >= minimum.
std::vector<double> ParetoCosts(uint64_t items, double alpha, double minimum, uint64_t seed);

}  // namespace ballast::sim
