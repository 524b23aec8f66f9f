// Range and IntervalSet: half-open ranges of item indices and a set of them.
//
// The coordinator and every policy account for items with IntervalSets, so a
// range finished twice (after a lease was re-issued) is merged once.
//
// Thread-safety: values; not safe to mutate from several threads at once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ballast::balance {

// Items [begin, end).
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t size() const { return end > begin ? end - begin : 0; }
  bool empty() const { return end <= begin; }
  bool operator==(const Range&) const = default;
  // "[begin, end)".
  std::string ToString() const;
};

// A set of items stored as disjoint, non-adjacent ranges.
class IntervalSet {
 public:
  IntervalSet() = default;
  explicit IntervalSet(Range range) { Add(range); }

  // Adds `range`; returns how many of its items were not in the set before.
  uint64_t Add(Range range);
  // Removes `range`; returns how many of its items were in the set.
  uint64_t Remove(Range range);
  // Number of items of `range` that are in the set.
  uint64_t CountIn(Range range) const;
  bool Contains(uint64_t item) const;

  // Total number of items in the set.
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The disjoint ranges in ascending order.
  std::vector<Range> Ranges() const;
  // The first range in ascending order; empty Range when the set is empty.
  Range First() const;
  // The last range in ascending order; empty Range when the set is empty.
  Range Last() const;
  // The range that contains `item`'s position or the next one after it; empty
  // Range when there is none.
  Range FirstAtOrAfter(uint64_t item) const;

 private:
  std::map<uint64_t, uint64_t> ranges_;  // begin -> end
  uint64_t size_ = 0;
};

}  // namespace ballast::balance
