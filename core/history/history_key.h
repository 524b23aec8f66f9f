// HistoryKey: what the history of measured node speeds is kept under
// (docs/history.md, "What a history is kept under"). Each kind of work keeps
// its own history, as the boards' speeds relative to each other depend on the
// work: the workload kind ("primes", "matmul"), and for exec the kind and the
// worker container's image without its tag or digest
// ("exec:registry.local/recompress"), "exec" when the job names no image.
//
// A key is made from those parts (api::HistoryKey makes a job's from
// its spec) and written as its text(): the name of a store's entries
// (speed_store.h: the operator's ConfigMap, the file of `ballast run
// --history`), the label `workload` of the coordinator's speed series and of
// the history query that reads them back (prometheus_history.h). Text read
// back from any of those is taken as it is (FromText), so that a key written
// by another version still names its entries. The text of a key is its
// identity: two keys are equal when their texts are.
//
// Thread-safety: a value; const methods are safe from any thread.
#pragma once

#include <fmt/format.h>

#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "core/workload/workload.h"

namespace ballast::history {

class HistoryKey {
 public:
  // No key: text() is "". What a struct holds until it is given one (JobConfig's
  // "the workload kind", a metric of a job whose spec names no kind).
  HistoryKey() = default;

  // The key of the jobs of `kind` whatever they run: "primes", "matmul", "exec".
  explicit HistoryKey(workload::WorkloadKind kind);

  // The key of the jobs of `kind` whose worker container runs an image of
  // `repository` (the image without its tag or digest):
  // "exec:registry.local/recompress". The repository is written as given,
  // even empty ("exec:").
  HistoryKey(workload::WorkloadKind kind, std::string_view repository);

  // The key whose text() is `text`, as read back from where a key was
  // written (a store's entry, a flag naming one). Any text, kept as it is.
  static HistoryKey FromText(std::string text);

  // The key as it is written (see above); "" for no key.
  const std::string& text() const { return text_; }
  bool empty() const { return text_.empty(); }

  bool operator==(const HistoryKey&) const = default;
  std::strong_ordering operator<=>(const HistoryKey&) const = default;

 private:
  explicit HistoryKey(std::string text) : text_(std::move(text)) {}

  std::string text_;
};

}  // namespace ballast::history

// A key formats as its text(), in messages and log fields.
template <>
struct fmt::formatter<ballast::history::HistoryKey> : fmt::formatter<std::string_view> {
  template <typename FormatContext>
  auto format(const ballast::history::HistoryKey& key, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(key.text(), ctx);
  }
};
