// The exactly-once ledger of a job's finished items (merged_items.h).
#include "coordinator/merged_items.h"

#include <algorithm>
#include <utility>

namespace ballast::coordinator {

MergedItems::MergedItems(balance::CostModel cost, uint64_t items, workload::WorkloadKind kind)
    : cost_(std::move(cost)), items_(items), result_(workload::Result::Empty(kind)) {}

void MergedItems::Resume(const balance::IntervalSet& completed, const workload::Result& result,
                         double now) {
  finished_ = completed;
  result_ = result;
  if (finished_.size() == items_) finished_at_ = now;
}

MergedItems::HandedIn MergedItems::HandIn(const std::vector<protocol::Completion>& completed,
                                          const std::vector<workload::Result>& results,
                                          double now) {
  HandedIn handed;
  for (size_t i = 0; i < completed.size(); ++i) {
    const balance::Range range = completed[i].range;
    handed.handed_in_cost += cost_.Cost(range);
    if (finished_.CountIn(range) != 0) {
      ++dropped_;  // finished by someone else first: its result is already merged
      handed.dropped_cost += cost_.Cost(range);
      continue;
    }
    // Merge cannot fail: both results are of the job's kind.
    (void)result_.Merge(results[i]);
    finished_.Add(range);
    double computed_cost = cost_.Cost(range);
    double computed_squares = cost_.SquaredCost(range);
    if (results[i].kind() == workload::WorkloadKind::kExec) {
      for (const workload::ExecFailure& failure : results[i].exec().failures) {
        handed.failed.push_back(failure.items);
        computed_cost -= cost_.Cost(failure.items);
        computed_squares -= cost_.SquaredCost(failure.items);
      }
    }
    handed.merged.push_back({i, std::max(0.0, computed_cost)});
    handed.merged_cost += std::max(0.0, computed_cost);
    handed.merged_squares += std::max(0.0, computed_squares);
    if (finished_.size() == items_) finished_at_ = now;
  }
  return handed;
}

uint64_t MergedItems::Unassigned(const balance::IntervalSet& leased) const {
  uint64_t leased_open = 0;
  for (const balance::Range& range : leased.Ranges()) {
    leased_open += range.size() - finished_.CountIn(range);
  }
  return items_ - finished_.size() - leased_open;
}

double MergedItems::FinishedCost() const {
  double cost = 0;
  for (const balance::Range& range : finished_.Ranges()) cost += cost_.Cost(range);
  return cost;
}

}  // namespace ballast::coordinator
