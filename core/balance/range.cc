#include "core/balance/range.h"

#include <fmt/format.h>

#include <algorithm>

namespace ballast::balance {

std::string Range::ToString() const { return fmt::format("[{}, {})", begin, end); }

uint64_t IntervalSet::CountIn(Range range) const {
  if (range.empty()) return 0;
  uint64_t count = 0;
  auto it = ranges_.upper_bound(range.begin);
  if (it != ranges_.begin()) --it;
  for (; it != ranges_.end() && it->first < range.end; ++it) {
    const uint64_t lo = std::max(it->first, range.begin);
    const uint64_t hi = std::min(it->second, range.end);
    if (hi > lo) count += hi - lo;
  }
  return count;
}

bool IntervalSet::Contains(uint64_t item) const { return CountIn({item, item + 1}) == 1; }

uint64_t IntervalSet::Add(Range range) {
  if (range.empty()) return 0;
  const uint64_t added = range.size() - CountIn(range);
  uint64_t begin = range.begin;
  uint64_t end = range.end;
  // Merge with every range that overlaps or touches [begin, end).
  auto it = ranges_.upper_bound(begin);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= begin) it = prev;
  }
  while (it != ranges_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    it = ranges_.erase(it);
  }
  ranges_.emplace(begin, end);
  size_ += added;
  return added;
}

uint64_t IntervalSet::Remove(Range range) {
  if (range.empty()) return 0;
  const uint64_t removed = CountIn(range);
  if (removed == 0) return 0;
  auto it = ranges_.upper_bound(range.begin);
  if (it != ranges_.begin()) --it;
  while (it != ranges_.end() && it->first < range.end) {
    const uint64_t lo = it->first;
    const uint64_t hi = it->second;
    if (hi <= range.begin) {
      ++it;
      continue;
    }
    it = ranges_.erase(it);
    if (lo < range.begin) ranges_.emplace(lo, range.begin);
    if (hi > range.end) it = ranges_.emplace(range.end, hi).first;
  }
  size_ -= removed;
  return removed;
}

std::vector<Range> IntervalSet::Ranges() const {
  std::vector<Range> out;
  out.reserve(ranges_.size());
  for (const auto& [begin, end] : ranges_) out.push_back({begin, end});
  return out;
}

Range IntervalSet::First() const {
  if (ranges_.empty()) return {};
  return {ranges_.begin()->first, ranges_.begin()->second};
}

Range IntervalSet::Last() const {
  if (ranges_.empty()) return {};
  return {ranges_.rbegin()->first, ranges_.rbegin()->second};
}

Range IntervalSet::FirstAtOrAfter(uint64_t item) const {
  auto it = ranges_.upper_bound(item);
  if (it != ranges_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > item) return {item, prev->second};
  }
  if (it == ranges_.end()) return {};
  return {it->first, it->second};
}

}  // namespace ballast::balance
