#include "core/sim/failing_items.h"

#include <algorithm>

namespace ballast::sim {

using balance::Range;

FailingItems::FailingItems(const Workload& workload, const std::vector<size_t>& dealt) {
  for (const FailingItem& failing : workload.failing_items) {
    uint64_t position = failing.item;
    if (dealt.size() == workload.items) {
      position = static_cast<uint64_t>(std::find(dealt.begin(), dealt.end(), failing.item) -
                                       dealt.begin());
    }
    if (position < workload.items) items_.Add(Range{position, position + 1});
  }
}

std::vector<std::pair<uint64_t, double>> FailingItems::Costs(const Workload& workload) {
  std::vector<std::pair<uint64_t, double>> costs;
  for (const FailingItem& failing : workload.failing_items) {
    costs.emplace_back(failing.item,
                       (workload.retries + 1.0) * failing.attempt_seconds / workload.item_seconds);
  }
  return costs;
}

void FailingItems::Mark(balance::Report& report) const {
  if (items_.empty()) return;
  for (const Range& range : report.completed) {
    for (const Range& failed : items_.Ranges()) {
      const Range overlap{std::max(range.begin, failed.begin), std::min(range.end, failed.end)};
      if (!overlap.empty()) report.failed.push_back(overlap);
    }
  }
}

}  // namespace ballast::sim
