// MergedItems: the exactly-once ledger of one job's finished items — which
// items are finished, their merged result, when the last one was — and the
// job's cost model that the coordinator counts workers' work in.
//
// A completion is merged only when none of its items is finished yet
// (results cannot be split); one that overlaps finished items is dropped, so
// every item's result is merged exactly once (JobSession's class comment).
// It takes completions that JobSession has checked already
// (report_checks.h); what a merge means for the worker, the policy and the
// verifier is JobSession's.
//
// Thread-safety: not thread-safe; JobSession's caller serializes calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/balance/cost_model.h"
#include "core/balance/range.h"
#include "core/protocol/messages.h"
#include "core/workload/result.h"

namespace ballast::coordinator {

class MergedItems {
 public:
  // A job of `items` items of `kind` whose work is counted in `cost`;
  // nothing finished yet.
  MergedItems(balance::CostModel cost, uint64_t items, workload::WorkloadKind kind);

  // Starts from a checkpoint: `completed` finished with `result` (of the
  // job's kind), at `now` when that is every item.
  void Resume(const balance::IntervalSet& completed, const workload::Result& result, double now);

  // What a report's completions came to.
  struct HandedIn {
    struct Merged {
      size_t index;  // into the report's completions
      // Its items' declared cost but for those that failed (a failed item's
      // cost was not computed and measures nothing), at least 0.
      double cost;
    };
    std::vector<Merged> merged;          // in the report's order
    std::vector<balance::Range> failed;  // of the merged ones, the items that failed
    double handed_in_cost = 0;           // of every completion
    double dropped_cost = 0;             // of those dropped, finished by another first
    double merged_cost = 0;              // the sum of merged[].cost
    double merged_squares = 0;           // of the computed items' costs (health::SpeedSample)
  };
  // Merges each of `completed` none of whose items is finished yet, with its
  // result (`results[i]` for `completed[i]`, of the job's kind), and counts
  // the others as dropped. `now`: when, for finished_at().
  HandedIn HandIn(const std::vector<protocol::Completion>& completed,
                  const std::vector<workload::Result>& results, double now);

  // Unfinished items outside `leased` (every worker's lease): in the
  // policy's pool or in a planned share.
  uint64_t Unassigned(const balance::IntervalSet& leased) const;

  const balance::IntervalSet& finished() const { return finished_; }
  const workload::Result& result() const { return result_; }
  const balance::CostModel& cost() const { return cost_; }
  // The declared cost of the finished items (the whole job costs `items`).
  double FinishedCost() const;
  // When the last item's result was merged (0 until then).
  double finished_at() const { return finished_at_; }
  // Completions dropped because another worker's result stood for them.
  uint64_t dropped() const { return dropped_; }

 private:
  balance::CostModel cost_;
  uint64_t items_;
  balance::IntervalSet finished_;
  workload::Result result_;
  double finished_at_ = 0;
  uint64_t dropped_ = 0;
};

}  // namespace ballast::coordinator
