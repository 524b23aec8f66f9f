// PlanShares: how a policy's pool is cut into each worker's reserved share
// at the job's start (PolicyBase::ReserveProportional), in proportion to
// weights such as initial_split.h's, by declared cost.
//
// The shares are contiguous in pool order; each ends at a whole item, and
// what it got short of (with per-item costs, also beyond) its share moves to
// the next worker walked. The workers are walked by id, or with per-item
// costs by decreasing share (ReserveOrder). With per-item costs the large
// items at the pool's front are spread first (SpreadLargeItems), and the
// contiguous shares made of the rest.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/policy.h"
#include "core/balance/range.h"

namespace ballast::balance {

// Each worker's reserved share of the pool, by worker id: `pool` is the
// pool's ranges in order, `pool_cost` their cost in `cost`, and `shares` one
// weight per worker (one below 0 counts as 0; all 0: equal shares). The
// shares together hold the whole pool.
std::vector<IntervalSet> PlanShares(const std::vector<Range>& pool, double pool_cost,
                                    const CostModel& cost, const std::vector<double>& shares);

// With per-item costs the pool's front holds the items dealt first, the
// largest when they are dealt largest first, and an indivisible item of a
// tenth of the job is the job's end on the slowest node and one of the
// first finished on the fastest. So the shares are walked by decreasing
// share (ties by id): the fastest worker's comes first and the slowest's
// is the smallest items, at the pool's back, whatever order the nodes are
// listed in (a cluster lists them by name). Without them, by id.
std::vector<WorkerId> ReserveOrder(const CostModel& cost, const std::vector<double>& shares);

// Dealt largest first, the pool's front holds the largest items: cut in
// contiguous shares, they would all fall to the first worker walked,
// whose share they may exceed on their own (on real nodes, the three
// largest archives of a job, a quarter of its declared work, all on one
// board, kept it busy 6 s after the others ran dry). So each leading item
// worth at least 1 / kLargeItemShares of a mean share goes, one at a
// time, to the worker whose target it fills least, as LPT places an item
// on the machine that finishes it first; `got` adds up what each got. A
// worker is not given an item worth more than half its target (the
// slowest's share stays the smallest items, ReserveOrder). Stops at the
// first smaller item, or one no worker may take, or after
// kMaxSpreadItems; spreads nothing unless the pool leads with its
// costliest item (dealt largest first: the as-listed deal is kept whole).
struct PoolCursor {
  const std::vector<Range>& ranges;  // the pool's, in order
  size_t index = 0;                  // the range being walked
  uint64_t at = 0;                   // the next item, once within it
};
inline constexpr double kLargeItemShares = 4;
// At most this many items are spread: each is weighed against every
// worker, and beyond a few per worker a contiguous share holds many.
inline constexpr size_t kMaxSpreadItems = 256;
void SpreadLargeItems(const CostModel& cost, PoolCursor& cursor, const std::vector<double>& target,
                      const std::vector<WorkerId>& walk, std::vector<IntervalSet>& reserved,
                      std::vector<double>& got);

// Where a reserved share worth `want` that starts at rest.begin ends,
// within `rest`: the last item that fits, or with per-item costs, one
// more when that leaves the share nearer `want` (a single item may be
// worth much of a share; the difference is owed by the next worker).
uint64_t ShareEnd(const CostModel& cost, Range rest, double want);

}  // namespace ballast::balance
