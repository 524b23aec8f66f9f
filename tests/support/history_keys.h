// Test helper shared by the history tests: the history keys of the workload
// kinds (core/history/history_key.h), as the operator keys a job of each, and
// a key named by its text as a store or a label holds it.
#pragma once

#include <string>
#include <utility>

#include "core/history/history_key.h"

namespace ballast::testing {

inline const history::HistoryKey kPrimesKey{workload::WorkloadKind::kPrimes};
inline const history::HistoryKey kMatmulKey{workload::WorkloadKind::kMatmul};
inline const history::HistoryKey kExecKey{workload::WorkloadKind::kExec};

// The key whose text is `text` (a label a fake Prometheus holds, a key this
// version would not make).
inline history::HistoryKey KeyOf(std::string text) {
  return history::HistoryKey::FromText(std::move(text));
}

}  // namespace ballast::testing
