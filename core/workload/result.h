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
struct ExecFailure {
  balance::Range items;
  int exit_code = 0;
  uint32_t attempts = 0;
  bool operator==(const ExecFailure&) const = default;
};

struct ExecTotals {
  uint64_t succeeded = 0;             // items whose run exited 0
  std::vector<ExecFailure> failures;  // sorted by begin; adjacent alike runs joined
  bool operator==(const ExecTotals&) const = default;
};

class Result {
 public:
  // The result of no items: the identity of Merge.
  static Result Empty(WorkloadKind kind);
  static Result Primes(uint64_t count, uint64_t sum);
  static Result Matmul(uint64_t blocks, uint64_t sum, uint64_t checksum);
  static Result ExecSucceeded(uint64_t items);
  static Result ExecFailed(balance::Range items, int exit_code, uint32_t attempts);

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
  // [{"begin", "end", "exitCode", "attempts"}]}; 64-bit sums as "0x" + 16 hex digits.
  nlohmann::json ToJson() const;
  // The inverse for a job of `kind`. Strict: a missing, mistyped or unknown
  // field, or another kind's result, is Invalid with a message naming the field.
  static StatusOr<Result> FromJson(WorkloadKind kind, const nlohmann::json& json);

  // One line for people, e.g. "25997 primes, checksum 0x0000000010c6d7b4".
  std::string Summary() const;

  bool operator==(const Result&) const = default;

 private:
  using Totals = std::variant<PrimesTotals, MatmulTotals, ExecTotals>;
  Result(WorkloadKind kind, Totals totals) : kind_(kind), totals_(std::move(totals)) {}

  WorkloadKind kind_;
  Totals totals_;
};

}  // namespace ballast::workload
