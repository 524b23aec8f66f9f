// The failure policy of a WeightedJob (spec.failurePolicy): how many items
// may fail all their attempts and the job still succeed, and the words that
// name the failed items in events and conditions.
//
// An item fails when every attempt of its command failed
// (workload.exec.retries + 1 attempts); primes and matmul items do not fail.
// A Kubernetes Job with a failed index is Failed; likewise a WeightedJob
// fails as soon as more items failed than spec.failurePolicy.maxFailedItems
// (0 by default) and completes, saying so, when fewer did.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/workload/result.h"

namespace ballast::controller {

// How many failed ranges a message names before "and N more".
inline constexpr size_t kNamedFailures = 5;

// The failed items of `result` for people, at most `shown` ranges and about
// 120 characters of an error each: "item 7 (exit code 1 after 3 attempts)",
// "items 12-14 (exit code 2 after 1 attempt)"; with the job's item `values`,
// by value: "broken.jpg (item 33, exit code 4 after 1 attempt)". Ranges
// joined by "; ", then "; and N more ranges". "" when none failed.
std::string NameFailedItems(const workload::Result& result, const std::vector<std::string>* values,
                            size_t shown = kNamedFailures);

// True when `failed` items are more than the policy's `max_failed_items`.
inline bool TooManyFailedItems(uint64_t failed, uint64_t max_failed_items) {
  return failed > max_failed_items;
}

}  // namespace ballast::controller
