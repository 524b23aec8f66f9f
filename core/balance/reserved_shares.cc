// The reserved shares a pool is cut into at a job's start (reserved_shares.h).
#include "core/balance/reserved_shares.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace ballast::balance {

std::vector<IntervalSet> PlanShares(const std::vector<Range>& pool, double pool_cost,
                                    const CostModel& cost, const std::vector<double>& shares) {
  double total = 0;
  for (double share : shares) total += std::max(share, 0.0);
  // Walk the pool in order (all of [0, N) unless the job resumed with
  // finished items), handing each worker its share of the pool's cost.
  const double whole = pool_cost;
  const size_t count = shares.size();
  std::vector<double> target(count);
  for (WorkerId id = 0; id < count; ++id) {
    target[id] = total > 0 ? std::max(shares[id], 0.0) / total * whole : whole / count;
  }
  const std::vector<WorkerId> walk = ReserveOrder(cost, shares);
  std::vector<IntervalSet> reserved(count);
  std::vector<double> got(count, 0.0);
  PoolCursor cursor{pool, 0, pool.empty() ? 0 : pool.front().begin};
  if (cost.per_item()) SpreadLargeItems(cost, cursor, target, walk, reserved, got);
  // The rest of the pool in contiguous shares: what each worker still lacks
  // of its target, in proportion (all of it when no item was large).
  double lacking = 0;
  double spread = 0;
  for (WorkerId id = 0; id < count; ++id) {
    lacking += std::max(0.0, target[id] - got[id]);
    spread += got[id];
  }
  // What earlier workers got short of (or, with per-item costs, beyond)
  // their share, by whole items.
  double owed = 0;
  for (size_t n = 0; n < walk.size(); ++n) {
    const WorkerId id = walk[n];
    const bool last = n + 1 == walk.size();
    double want = owed;
    if (spread == 0) {
      want += target[id];
    } else if (lacking > 0) {
      want += std::max(0.0, target[id] - got[id]) / lacking * (whole - spread);
    }
    while (cursor.index < pool.size() && (last || want > 0)) {
      const Range rest{std::max(cursor.at, pool[cursor.index].begin), pool[cursor.index].end};
      const uint64_t end = last ? rest.end : ShareEnd(cost, rest, want);
      if (end > rest.begin) reserved[id].Add({rest.begin, end});
      want -= cost.Cost({rest.begin, end});
      cursor.at = end;
      if (end < rest.end) break;
      ++cursor.index;
    }
    owed = cost.per_item() ? want : std::max(0.0, want);
  }
  return reserved;
}

void SpreadLargeItems(const CostModel& cost, PoolCursor& cursor, const std::vector<double>& target,
                      const std::vector<WorkerId>& walk, std::vector<IntervalSet>& reserved,
                      std::vector<double>& got) {
  double whole = 0;
  size_t takers = 0;
  for (double wanted : target) {
    whole += wanted;
    if (wanted > 0) ++takers;
  }
  if (takers < 2) return;
  // Items of at least this cost are large: at most kLargeItemShares x
  // takers of them, and at most kMaxSpreadItems are spread, each weighed
  // against every worker once a job.
  const double large = whole / (kLargeItemShares * static_cast<double>(takers));
  const std::vector<Range>& ranges = cursor.ranges;
  // Only a pool dealt largest first leads with its large items: one that
  // does not (items as listed) is cut in contiguous shares as it comes.
  if (ranges.empty()) return;
  const double front = cost.Cost({ranges.front().begin, ranges.front().begin + 1});
  if (front < large) return;
  for (const Range& range : ranges) {
    for (uint64_t item = range.begin; item < range.end; ++item) {
      if (cost.Cost({item, item + 1}) > front) return;
    }
  }
  for (size_t spread = 0; cursor.index < ranges.size() && spread < kMaxSpreadItems;) {
    const uint64_t item = std::max(cursor.at, ranges[cursor.index].begin);
    if (item >= ranges[cursor.index].end) {
      ++cursor.index;
      continue;
    }
    const double item_cost = cost.Cost({item, item + 1});
    if (item_cost < large) return;
    // The worker it leaves least full against its target (ties in walk
    // order): the one that would finish it first, as LPT places an item.
    std::optional<WorkerId> best;
    double best_fill = 0;
    for (WorkerId id : walk) {
      if (!(target[id] > 0) || item_cost > 0.5 * target[id]) continue;
      const double fill = (got[id] + item_cost) / target[id];
      if (!best || fill < best_fill) {
        best = id;
        best_fill = fill;
      }
    }
    if (!best) return;
    reserved[*best].Add({item, item + 1});
    got[*best] += item_cost;
    cursor.at = item + 1;
    ++spread;
  }
}

std::vector<WorkerId> ReserveOrder(const CostModel& cost, const std::vector<double>& shares) {
  std::vector<WorkerId> order(shares.size());
  std::iota(order.begin(), order.end(), WorkerId{0});
  if (cost.per_item()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](WorkerId a, WorkerId b) { return shares[a] > shares[b]; });
  }
  return order;
}

uint64_t ShareEnd(const CostModel& cost, Range rest, double want) {
  const uint64_t end = cost.Advance(rest.begin, rest.end, want);
  if (!cost.per_item() || end >= rest.end) return end;
  const double under = want - cost.Cost({rest.begin, end});
  const double over = cost.Cost({rest.begin, end + 1}) - want;
  return over < under ? end + 1 : end;
}

}  // namespace ballast::balance
