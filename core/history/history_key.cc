// HistoryKey's text from its parts (history_key.h).
#include "core/history/history_key.h"

#include <utility>

namespace ballast::history {

HistoryKey::HistoryKey(workload::WorkloadKind kind) : text_(workload::WorkloadKindName(kind)) {}

HistoryKey::HistoryKey(workload::WorkloadKind kind, std::string_view repository)
    : text_(fmt::format("{}:{}", workload::WorkloadKindName(kind), repository)) {}

HistoryKey HistoryKey::FromText(std::string text) { return HistoryKey(std::move(text)); }

}  // namespace ballast::history
