// The words that name a job's failed items in events and conditions. What
// failed items mean for the job is core/job/failure_policy.h.
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

}  // namespace ballast::controller
