// TrueCost: the real cost of items in a simulation — the declared shape times
// a seeded per-item jitter — in the same units as balance::CostModel (the mean
// item costs 1). Without jitter it is the closed form; with jitter a prefix
// sum is kept (one double per item).
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstdint>
#include <vector>

#include "core/balance/cost_model.h"

namespace ballast::sim {

class TrueCost {
 public:
  TrueCost(uint64_t items, balance::CostShape shape, double jitter, uint64_t seed);

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

}  // namespace ballast::sim
