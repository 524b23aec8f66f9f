// Where a policy's items are, but for the leases (item_ledger.h).
#include "core/balance/item_ledger.h"

#include <utility>

namespace ballast::balance {

void ItemLedger::Reset(uint64_t items, CostModel cost, size_t workers) {
  items_ = items;
  cost_ = std::move(cost);
  pool_ = IntervalSet(Range{0, items});
  pool_cost_ = cost_.Cost({0, items});
  done_ = IntervalSet();
  reserves_.assign(workers, ReservedItems{});
  reserved_cost_ = 0;
}

void ItemLedger::AddWorker() { reserves_.emplace_back(); }

void ItemLedger::SetCost(CostModel cost) {
  cost_ = std::move(cost);
  pool_cost_ = CostIn(pool_, {0, items_});
  reserved_cost_ = 0;
  for (ReservedItems& reserve : reserves_) {
    reserve.cost = 0;
    for (const Range& range : reserve.items.Ranges()) reserve.cost += cost_.Cost(range);
    reserved_cost_ += reserve.cost;
  }
}

uint64_t ItemLedger::Finish(Range range) {
  const uint64_t fresh = done_.Add(range);
  // A finished item may still sit in the pool when its lease had been revoked.
  PoolRemove(range);
  return fresh;
}

Range ItemLedger::SkipFinished(Range range) const {
  while (!range.empty() && done_.Contains(range.begin)) {
    const Range finished = done_.FirstAtOrAfter(range.begin);
    range.begin = std::min(range.end, finished.end);
  }
  return range;
}

Range ItemLedger::FirstOpenPart(Range range) const {
  range = SkipFinished(range);
  const Range finished = done_.FirstAtOrAfter(range.begin);
  if (!finished.empty() && finished.begin < range.end) range.end = finished.begin;
  return range;
}

Range ItemLedger::LastOpenPart(Range range) const {
  // One pass per open stretch of `range`: bounded by its finished ranges + 1.
  Range last;
  for (Range open = FirstOpenPart(range); !open.empty();
       open = FirstOpenPart({open.end, range.end})) {
    last = open;
  }
  return last;
}

Range ItemLedger::TakeFromPool(uint64_t count) {
  const Range first = pool_.First();
  const Range taken{first.begin,
                    first.begin + std::min<uint64_t>(std::max<uint64_t>(count, 1), first.size())};
  PoolRemove(taken);
  return taken;
}

Range ItemLedger::TakeCostFromPool(double cost) {
  const Range first = pool_.First();
  if (first.empty()) return {};
  uint64_t end = cost_.Advance(first.begin, first.end, cost);
  end = std::max(end, first.begin + 1);
  const Range taken{first.begin, end};
  PoolRemove(taken);
  return taken;
}

Range ItemLedger::TakeCostFromPoolAt(uint64_t from, double cost) {
  const Range holder = pool_.FirstAtOrAfter(from);
  if (holder.empty() || holder.begin > from) return {};
  const uint64_t end = std::max(cost_.Advance(from, holder.end, cost), from + 1);
  const Range taken{from, end};
  PoolRemove(taken);
  return taken;
}

bool ItemLedger::ReturnToPool(Range range) {
  // Only unfinished items go back; walk the finished ranges that overlap.
  // Each pass moves `at` past one finished range or one gap between them, so
  // the loop is bounded by twice the finished ranges inside `range`.
  bool added = false;
  uint64_t at = range.begin;
  while (at < range.end) {
    const Range finished = done_.FirstAtOrAfter(at);
    if (!finished.empty() && finished.begin <= at) {
      at = finished.end;
      continue;
    }
    const uint64_t stop = finished.empty() ? range.end : std::min(range.end, finished.begin);
    const Range open{at, stop};
    const double before = CostIn(pool_, open);
    if (pool_.Add(open) != 0) {
      pool_cost_ += cost_.Cost(open) - before;
      added = true;
    }
    at = stop;
  }
  return added;
}

void ItemLedger::Reserve(std::vector<IntervalSet> shares) {
  for (WorkerId id = 0; id < shares.size(); ++id) {
    ReservedItems& reserve = reserves_[id];
    reserve.cost = 0;
    for (const Range& range : shares[id].Ranges()) {
      reserve.cost += cost_.Cost(range);
      PoolRemove(range);
    }
    reserved_cost_ += reserve.cost;
    reserve.items = std::move(shares[id]);
  }
}

void ItemLedger::SetAside(WorkerId worker, Range range) {
  ReservedItems& reserve = reserves_[worker];
  reserve.items.Add(range);
  reserve.cost += cost_.Cost(range);
  reserved_cost_ += cost_.Cost(range);
}

void ItemLedger::Unreserve(WorkerId worker, Range range) {
  ReservedItems& reserve = reserves_[worker];
  const double removed = CostIn(reserve.items, range);
  reserve.items.Remove(range);
  reserve.cost = reserve.items.empty() ? 0 : reserve.cost - removed;
  reserved_cost_ -= removed;
}

Range ItemLedger::TakeReserved(WorkerId worker) {
  const IntervalSet& reserved = reserves_[worker].items;
  // Each pass removes at least one reserved range: bounded by their number.
  while (!reserved.empty()) {
    // Items set aside may since have been finished by a worker that had
    // been declared lost and was not: those are dropped, not leased.
    const Range first = reserved.First();
    const Range open = FirstOpenPart(first);
    Unreserve(worker, {first.begin, open.empty() ? first.end : open.end});
    if (!open.empty()) return open;
  }
  return {};
}

IntervalSet ItemLedger::DropReserved(WorkerId worker) {
  ReservedItems& reserve = reserves_[worker];
  reserved_cost_ -= reserve.cost;
  IntervalSet dropped = std::move(reserve.items);
  reserve = ReservedItems{};
  return dropped;
}

double ItemLedger::CostIn(const IntervalSet& set, Range range) const {
  double total = 0;
  uint64_t at = range.begin;
  while (at < range.end) {
    const Range piece = set.FirstAtOrAfter(at);
    if (piece.empty() || piece.begin >= range.end) break;
    const uint64_t end = std::min(piece.end, range.end);
    total += cost_.Cost({std::max(piece.begin, at), end});
    at = end;
  }
  return total;
}

void ItemLedger::PoolRemove(Range range) {
  const double removed = CostIn(pool_, range);
  if (pool_.Remove(range) == 0) return;
  pool_cost_ -= removed;
  if (pool_.empty()) pool_cost_ = 0;  // no rounding left behind
}

}  // namespace ballast::balance
