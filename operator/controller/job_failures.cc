#include "operator/controller/job_failures.h"

#include <fmt/format.h>

#include "core/common/json_read.h"
#include "core/job/failure_policy.h"

namespace ballast::controller {

namespace {

// "7" or "12-14" (inclusive, as people count).
std::string ItemNumbers(const balance::Range& items) {
  if (items.size() == 1) return fmt::format("{}", items.begin);
  return fmt::format("{}-{}", items.begin, items.end - 1);
}

std::string Why(const workload::ExecFailure& failure) {
  const std::string attempts =
      fmt::format("after {} attempt{}", failure.attempts, failure.attempts == 1 ? "" : "s");
  const std::string said = workload::LastOutputLine(failure);
  const std::string wrote = said.empty() ? "" : fmt::format("; it wrote \"{}\"", said);
  if (!failure.error.empty()) {
    return fmt::format("{} {}{}", json_read::Cut(failure.error, 120), attempts, wrote);
  }
  return fmt::format("exit code {} {}{}", failure.exit_code, attempts, wrote);
}

}  // namespace

std::string NameFailedItems(const workload::Result& result, workload::ItemNames names,
                            size_t shown) {
  if (result.kind() != workload::WorkloadKind::kExec) return "";
  const auto& failures = result.exec().failures;
  std::string text;
  for (size_t i = 0; i < failures.size() && i < shown; ++i) {
    const workload::ExecFailure& failure = failures[i];
    const balance::Range& items = failure.items;
    const bool one = items.size() == 1;
    std::string named;
    if (names.values != nullptr && items.end <= names.values->size()) {
      const std::string first = json_read::Cut((*names.values)[items.begin], 80);
      const std::string places =
          names.places != nullptr ? workload::ItemPlacesOf(names.places, items.begin, items.end, 3)
                                  : fmt::format("item{} {}", one ? "" : "s", ItemNumbers(items));
      named = one ? fmt::format("{} ({}, {})", first, places, Why(failure))
                  : fmt::format("{} and {} more ({}, {})", first, items.size() - 1, places,
                                Why(failure));
    } else {
      named = fmt::format("item{} {} ({})", one ? "" : "s", ItemNumbers(items), Why(failure));
    }
    text += (i == 0 ? "" : "; ") + named;
  }
  if (failures.size() > shown) {
    text += fmt::format("; and {} more ranges", failures.size() - shown);
  }
  return text;
}

std::optional<FailedItemsFailure> FailureByItems(const workload::Result& result, uint64_t items,
                                                 bool done,
                                                 std::optional<uint64_t> max_failed_items,
                                                 workload::ItemNames names,
                                                 std::string_view result_is) {
  const uint64_t failed = result.FailedItems();
  const job::FailedItemsVerdict verdict = job::JudgeFailedItems(failed, max_failed_items);
  if (verdict == job::FailedItemsVerdict::kFailNow) {
    return FailedItemsFailure{
        api::Reason::kTooManyFailedItems,
        fmt::format(
            "{} item{} failed all attempts, more than failurePolicy.maxFailedItems ({}): {}",
            failed, failed == 1 ? "" : "s", max_failed_items.value_or(0),
            NameFailedItems(result, names))};
  }
  if (verdict != job::FailedItemsVerdict::kRunTheRest || !done) return std::nullopt;
  return FailedItemsFailure{
      api::Reason::kFailedItems,
      fmt::format("{} of {} item{} failed all attempts; the other {} finished and their merged "
                  "result is {} (set failurePolicy.maxFailedItems to tolerate failed items): {}",
                  failed, items, items == 1 ? "" : "s", items - failed, result_is,
                  NameFailedItems(result, names))};
}

}  // namespace ballast::controller
