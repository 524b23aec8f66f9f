// The words that name a job's failed items in events and conditions, and the
// verdict on them that the operator and `ballast run` both reach. When
// failed items fail a job is core/job/failure_policy.h.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/workload/result.h"
#include "operator/api/weighted_job.h"

namespace ballast::controller {

// How many failed ranges a message names before "and N more".
inline constexpr size_t kNamedFailures = 5;

// The failed items of `result` for people, at most `shown` ranges and about
// 120 characters of an error each: "item 7 (exit code 1 after 3 attempts)",
// "items 12-14 (exit code 2 after 1 attempt)"; with the job's item names
// (workload::NamesOf), by value and where the user listed it: "broken.jpg
// (line 38, exit code 4 after 1 attempt)", "a.jpg and 2 more (lines 4, 9, 2,
// ...)". Ranges joined by "; ", then "; and N more ranges". "" when none failed.
std::string NameFailedItems(const workload::Result& result, workload::ItemNames names,
                            size_t shown = kNamedFailures);

// A job that its failed items failed: why (TooManyFailedItems past
// maxFailedItems, at once; FailedItems once every item was attempted, with
// maxFailedItems unset) and what to tell people.
struct FailedItemsFailure {
  api::Reason reason;
  std::string message;
};

// The failure policy's verdict (job::JudgeFailedItems) on `result`, the
// merged result of a job of `items` items whose every item was attempted
// when `done`, with its policy `max_failed_items` and its item `names`. Returns the failure, naming
// the failed items (NameFailedItems); nullopt while the job goes on, or when it succeeds.
// `result_is` says where the other items' result is ("in status.result", "printed above").
std::optional<FailedItemsFailure> FailureByItems(const workload::Result& result, uint64_t items,
                                                 bool done,
                                                 std::optional<uint64_t> max_failed_items,
                                                 workload::ItemNames names,
                                                 std::string_view result_is);

}  // namespace ballast::controller
