#include "operator/controller/job_failures.h"

#include <fmt/format.h>

#include "core/common/json_read.h"

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

std::string NameFailedItems(const workload::Result& result, const std::vector<std::string>* values,
                            size_t shown) {
  if (result.kind() != workload::WorkloadKind::kExec) return "";
  const auto& failures = result.exec().failures;
  std::string text;
  for (size_t i = 0; i < failures.size() && i < shown; ++i) {
    const workload::ExecFailure& failure = failures[i];
    const balance::Range& items = failure.items;
    const bool one = items.size() == 1;
    std::string named;
    if (values != nullptr && items.end <= values->size()) {
      const std::string first = json_read::Cut((*values)[items.begin], 80);
      named = one ? fmt::format("{} (item {}, {})", first, items.begin, Why(failure))
                  : fmt::format("{} and {} more (items {}, {})", first, items.size() - 1,
                                ItemNumbers(items), Why(failure));
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

}  // namespace ballast::controller
