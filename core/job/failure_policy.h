// What failed items mean for a job under its failure policy
// (`failurePolicy.maxFailedItems`, JobSpec::max_failed_items), the one rule
// the operator and `ballast run` both apply. An item fails when every
// attempt of its command failed (exec.retries + 1 runs).
//
//   maxFailedItems unset (the default)  every other item is computed; the job
//       then fails, naming the failed items, with the rest's result kept: a
//       Job with backoffLimitPerIndex and no maxFailedIndexes
//   maxFailedItems: n                   up to n failed items and the job still
//       succeeds; one more fails it at once, the rest not computed: a Job's
//       maxFailedIndexes
//
// Thread-safety: pure functions.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <optional>
#include <string>

namespace ballast::job {

enum class FailedItemsVerdict {
  kNone,        // no item failed
  kTolerated,   // within maxFailedItems: the job goes on, and succeeds
  kRunTheRest,  // maxFailedItems unset: go on; fail once every item was attempted
  kFailNow,     // past maxFailedItems: fail at once, the rest not computed
};

inline FailedItemsVerdict JudgeFailedItems(uint64_t failed,
                                           std::optional<uint64_t> max_failed_items) {
  if (failed == 0) return FailedItemsVerdict::kNone;
  if (!max_failed_items) return FailedItemsVerdict::kRunTheRest;
  return failed > *max_failed_items ? FailedItemsVerdict::kFailNow : FailedItemsVerdict::kTolerated;
}

// True when a job whose every item was attempted, `failed` of them failed,
// has failed.
inline bool FailsAtTheEnd(uint64_t failed, std::optional<uint64_t> max_failed_items) {
  const FailedItemsVerdict verdict = JudgeFailedItems(failed, max_failed_items);
  return verdict == FailedItemsVerdict::kRunTheRest || verdict == FailedItemsVerdict::kFailNow;
}

// "failurePolicy.maxFailedItems 2", or "failurePolicy.maxFailedItems unset",
// for messages.
inline std::string FailurePolicyName(std::optional<uint64_t> max_failed_items) {
  return max_failed_items ? fmt::format("failurePolicy.maxFailedItems {}", *max_failed_items)
                          : std::string("failurePolicy.maxFailedItems unset");
}

}  // namespace ballast::job
