// The result an exec command hands back: a small JSON object per run, merged
// field by field by rules the job declares (docs/workloads.md, "Results"):
//
//   exec:
//     command: [python3, /job/count.py]
//     result:
//       merge: {words: sum, longest: max, shortest: min, errors: list}
//       listLimit: 50        # entries a `list` field keeps (default 50)
//       maxBytes: 65536      # a run's result file at most (default 64 KiB)
//       keepDir: /data/out   # also keep each run's file there (optional)
//
// The command writes its object to the file BALLAST_RESULT_FILE names, e.g.
// {"words": 120, "longest": 17, "errors": ["a.txt: empty"]}. Rules:
//   sum   whole numbers, summed exactly (64-bit; a sum past it is marked
//         overflowed rather than wrapped)
//   min   numbers, the least
//   max   numbers, the greatest
//   list  any JSON values (a value, or an array of them), kept in item order:
//         the first `listLimit` entries of the job and the count of all
// Every rule is exact and order-independent, so the job's merged fields are
// the same however its items were split, stolen or retried. A field the job
// did not declare, a value of the wrong type, or a file past maxBytes makes
// the run fail with a message saying which field and why.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/range.h"
#include "core/common/status.h"

namespace ballast::workload {

enum class MergeRule { kSum, kMin, kMax, kList };
const char* MergeRuleName(MergeRule rule);
std::optional<MergeRule> ParseMergeRule(std::string_view name);

inline constexpr size_t kMaxResultFields = 32;
inline constexpr uint32_t kDefaultListLimit = 50;
// The entries all list fields keep together (list fields x listLimit), so
// that status.result stays under kMaxListLimit x kMaxListEntryBytes (50 KiB).
inline constexpr uint32_t kMaxListLimit = 200;
inline constexpr size_t kMaxListEntryBytes = 256;  // a list entry's JSON text
inline constexpr uint32_t kDefaultResultBytes = 64 << 10;
inline constexpr uint32_t kMaxResultBytes = 256 << 10;  // a report carries it

struct ResultSpec {
  std::map<std::string, MergeRule> merge;  // empty: the command hands back nothing
  uint32_t list_limit = kDefaultListLimit;
  uint32_t max_bytes = kDefaultResultBytes;
  std::string keep_dir;  // "": the files are not kept
  bool operator==(const ResultSpec&) const = default;
};

// One entry of a `list` field: from the run whose first item is `item`, the
// `index`-th value it gave; `json` is the value's JSON text.
struct ListEntry {
  uint64_t item = 0;
  uint32_t index = 0;
  std::string json;
  bool operator==(const ListEntry&) const = default;
};

// One field's merged value.
struct FieldTotal {
  MergeRule rule = MergeRule::kSum;
  int64_t sum = 0;
  bool overflowed = false;      // sum: past 64 bits
  double extreme = 0;           // min, max: meaningful when count > 0
  uint64_t count = 0;           // min, max: values merged; list: entries seen; sum: 0
  uint32_t limit = 0;           // list: entries kept
  std::vector<ListEntry> kept;  // list: the first `limit`, by (item, index)
  bool operator==(const FieldTotal&) const = default;
};

using UserFields = std::map<std::string, FieldTotal>;

// Adds `other`'s fields to `into`. Requires each field in both to have the
// same rule and limit (CheckFields assures it for what reaches a merge).
void MergeFields(UserFields& into, const UserFields& other);

// The key of a result file that names the run's items that failed, so that
// one bad item among a run's is not the whole run's failure (the other items
// are not run again): a list of item numbers, or of {"item": n, "error":
// "what went wrong"}, each within the run's [BALLAST_START, BALLAST_END),
// e.g. {"bytes": 5120, "failedItems": [{"item": 17, "error": "corrupt"}]}.
// The fields are then the other items'. A job cannot declare it as a field.
inline constexpr std::string_view kFailedItemsKey = "failedItems";
inline constexpr size_t kMaxItemErrorBytes = 256;

// What one run handed back: the fields of its items that succeeded, and the
// items it names failed (item, error), in item order.
struct HandedBack {
  UserFields fields;
  std::vector<std::pair<uint64_t, std::string>> failed;
};

// One run's result file `text` for the items `items`, typed by `spec`.
// Invalid "<where>: ..." for text over spec.max_bytes, not a JSON object, an
// undeclared field, a value of the wrong type, a list entry over
// kMaxListEntryBytes, or a failedItems entry that is not an item of the run
// (or names one twice, or has an error over kMaxItemErrorBytes).
StatusOr<HandedBack> ReadResultFile(std::string_view text, const ResultSpec& spec,
                                    balance::Range items, std::string_view where);

// Ok when every field is declared in `spec` with its rule and limit and its
// values keep the rule's bounds; otherwise Invalid naming the field. The
// coordinator checks what a worker reports with it before merging.
Status CheckFields(const UserFields& fields, const ResultSpec& spec);

// The wire and checkpoint form, which FieldsFromJson reads back exactly:
//   {"words": {"sum": 120}, "longest": {"max": 17, "count": 3},
//    "errors": {"list": [[item, index, value], ...], "count": 9, "limit": 50}}
// (a sum past 64 bits: {"sum": ..., "overflowed": true}).
nlohmann::json FieldsToJson(const UserFields& fields);
StatusOr<UserFields> FieldsFromJson(const nlohmann::json& json, std::string_view where);

// For people: "words=120 longest=17 errors=[\"a.txt: empty\", ...] (9)".
std::string FieldsSummary(const UserFields& fields);

}  // namespace ballast::workload
