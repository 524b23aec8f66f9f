// FailingItems: the items of a simulated job that fail every attempt
// (Workload::failing_items, a corrupt input), as the job deals them. A
// simulated worker computes such an item for as long as its attempts take
// (Costs, for TrueCost) and names it failed in the report that hands it in,
// as a real worker's exec result does (Mark).
//
// Thread-safety: immutable after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/range.h"
#include "core/sim/scenario.h"

namespace ballast::sim {

class FailingItems {
 public:
  // The failing items of `workload` at their dealt positions: with `dealt`
  // (item i is listed item dealt[i]; one entry per item) each moves where it
  // was dealt; otherwise (empty) it stays where it is listed. An item past
  // the workload's end is dropped.
  FailingItems(const Workload& workload, const std::vector<size_t>& dealt);

  // The true cost of each failing item, as listed, in mean items: its
  // retries + 1 attempts (TrueCost's `replaced`).
  static std::vector<std::pair<uint64_t, double>> Costs(const Workload& workload);

  // Names the failing items among the report's completed ones in
  // report.failed (appended, in the order of report.completed).
  void Mark(balance::Report& report) const;

  // The failing items, as dealt.
  const balance::IntervalSet& items() const { return items_; }

 private:
  balance::IntervalSet items_;
};

}  // namespace ballast::sim
