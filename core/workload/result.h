// Result: the mergeable result of a set of items of one job.
//
// Workers report a Result per finished sub-range; the coordinator merges each
// item's result exactly once. Merging is exact and order-independent (sums
// mod 2^64, counts, a canonical sorted list), so the whole job's Result is the
// same whatever way its items were split, leased, stolen or retried.
//   primes  count of primes, and checksum = sum of those primes mod 2^64
//   matmul  blocks of C, sum of C's entries mod 2^64 (two's complement), and
//           checksum = sum of C(i,j) * MatmulWeight(i,j) mod 2^64
//   exec    items that succeeded, and the ranges that failed with their exit code
// docs/workloads.md defines the checksums for users.
//
// Thread-safety: a value; not safe to mutate from several threads at once.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <variant>
#include <vector>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/workload.h"

namespace ballast::workload {

struct PrimesTotals {
  uint64_t count = 0;
  uint64_t sum = 0;  // of the primes, mod 2^64
  bool operator==(const PrimesTotals&) const = default;
};

struct MatmulTotals {
  uint64_t blocks = 0;    // blocks of C included
  uint64_t sum = 0;       // of C's entries, mod 2^64 (read as int64 it is the exact sum)
  uint64_t checksum = 0;  // position-weighted sum, mod 2^64
  bool operator==(const MatmulTotals&) const = default;
};

// Items that kept failing: `attempts` runs, the last exiting with `exit_code`
// (128 + signal number when killed by a signal, 127 when it could not start).
// A run that exited 0 but whose result file the job could not take fails
// with exit_code 0 and `error` saying why (user_result.h); a command that
// names the item failed in its result file (`failedItems`) gives the error
// it wrote. `output` is the end of what the last attempt wrote to stdout and
// stderr (at most kMaxFailureOutputBytes), kept on the first
// kFailuresWithOutput failures in item order only, so that a job of many
// failures stays small.
struct ExecFailure {
  balance::Range items;
  int exit_code = 0;
  uint32_t attempts = 0;
  std::string error;   // "" unless the result file was refused or named it
  std::string output;  // "" when the command wrote nothing (or not kept)
  bool operator==(const ExecFailure&) const = default;
};
inline constexpr size_t kMaxFailureOutputBytes = 256;
inline constexpr size_t kFailuresWithOutput = 5;

// "0x" and 16 lower-case hex digits: how 64-bit checksums travel (JSON
// readers in other languages lose precision on integers above 2^53;
// json_read::Hex64 reads it back).
std::string Hex64(uint64_t value);

// The last non-blank line of a failure's output, cut to about `max` bytes;
// "" when it kept none. For messages: `item 7 (exit code 3 after 2 attempts;
// it wrote "convert: corrupt JPEG data")`.
std::string LastOutputLine(const ExecFailure& failure, size_t max = 120);

struct ExecTotals {
  uint64_t succeeded = 0;             // items whose run exited 0
  std::vector<ExecFailure> failures;  // sorted by begin; adjacent alike runs joined
  UserFields fields;                  // what the commands handed back, merged
  bool operator==(const ExecTotals&) const = default;
};

class Result {
 public:
  // The result of no items: the identity of Merge.
  static Result Empty(WorkloadKind kind);
  static Result Primes(uint64_t count, uint64_t sum);
  static Result Matmul(uint64_t blocks, uint64_t sum, uint64_t checksum);
  static Result ExecSucceeded(uint64_t items);
  static Result ExecFailed(balance::Range items, int exit_code, uint32_t attempts,
                           std::string error = "", std::string output = "");
  // Items that succeeded and handed back `fields`.
  static Result ExecHandedBack(uint64_t items, UserFields fields);

  WorkloadKind kind() const { return kind_; }
  // Each requires the matching kind().
  const PrimesTotals& primes() const { return std::get<PrimesTotals>(totals_); }
  const MatmulTotals& matmul() const { return std::get<MatmulTotals>(totals_); }
  const ExecTotals& exec() const { return std::get<ExecTotals>(totals_); }

  // Adds `other` (the result of items disjoint from this one's). Returns Ok, or
  // Invalid when the kinds differ (this Result is then unchanged).
  Status Merge(const Result& other);

  // {"primes": {"count": 25997, "sum": "0x…"}} and likewise for matmul
  // {"blocks", "sum", "checksum"} and exec {"succeeded", "failures":
  // [{"begin", "end", "exitCode", "attempts"(, "error")(, "output")}](, "fields": {...})}
  // (fields as user_result.h FieldsToJson); 64-bit sums as "0x" + 16 hex digits.
  nlohmann::json ToJson() const;
  // The inverse for a job of `kind`. Strict: a missing, mistyped or unknown
  // field, or another kind's result, is Invalid with a message naming the field.
  static StatusOr<Result> FromJson(WorkloadKind kind, const nlohmann::json& json);

  // One line for people, e.g. "25997 primes, checksum 0x0000000010c6d7b4".
  // With the job's item names, failed items are named by where the user
  // listed them and by value: "line 38 (clip-38.mp4) exit 1 after 3 attempts".
  std::string Summary(ItemNames names = {}) const;

  // The number of items in failures (exec; 0 for other kinds).
  uint64_t FailedItems() const;
  // The values of the failed items, the first `max` of them in item order
  // (exec with listed items). Empty for other kinds.
  std::vector<std::string> FailedValues(const std::vector<std::string>& values, size_t max) const;

  // ToJson for people (a job's status.result): with the job's item values
  // (nullptr: none), an exec result also names its failed items by value,
  // "failedValues": the first kShownFailedValues of them in item order.
  nlohmann::json ToStatusJson(const std::vector<std::string>* values) const;
  static constexpr size_t kShownFailedValues = 20;

  bool operator==(const Result&) const = default;

 private:
  using Totals = std::variant<PrimesTotals, MatmulTotals, ExecTotals>;
  Result(WorkloadKind kind, Totals totals) : kind_(kind), totals_(std::move(totals)) {}

  WorkloadKind kind_;
  Totals totals_;
};

}  // namespace ballast::workload
