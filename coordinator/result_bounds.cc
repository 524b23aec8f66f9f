#include "coordinator/result_bounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

namespace ballast::coordinator {
namespace {

using workload::ExecFailure;
using workload::Result;
using workload::WorkloadSpec;

// How many of 0..r-1 are prime to 30, for r in 0..30: the residues 1, 7, 11,
// 13, 17, 19, 23, 29 below r.
constexpr std::array<uint8_t, 31> kPrimeTo30Below = {0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4,
                                                     4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 8};

// The numbers of [0, x) prime to 30.
uint64_t PrimeTo30Below(uint64_t x) { return 8 * (x / 30) + kPrimeTo30Below[x % 30]; }

Status CheckPrimes(const WorkloadSpec& spec, balance::Range range, const Result& result) {
  const uint64_t count = result.primes().count;
  const uint64_t sum = result.primes().sum;
  const balance::Range span = workload::PrimesRangeSpan(spec, range);
  const uint64_t bound = PrimesCountBound(span.begin, span.end);
  const std::string where =
      fmt::format("among the numbers {} (items {})", span.ToString(), range.ToString());
  if (count > bound) {
    return Status::Invalid(fmt::format(
        "result.primes.count: {} primes {} is impossible: at most {}", count, where, bound));
  }
  if (sum != 0 && (count == 0 || !spec.primes.checksum)) {
    return Status::Invalid(
        fmt::format("result.primes.sum: {:#x} is impossible for {} primes{}: expected 0", sum,
                    count, spec.primes.checksum ? "" : " of a job without checksum"));
  }
  if (count == 0 || !spec.primes.checksum) return Status::Ok();
  const uint64_t smallest = std::max<uint64_t>(span.begin, 2);
  const uint64_t largest = span.end - 1;
  if (largest > std::numeric_limits<uint64_t>::max() / count)
    return Status::Ok();  // the sum may wrap
  if (sum < count * smallest || sum > count * largest) {
    return Status::Invalid(
        fmt::format("result.primes.sum: {} primes {} sum to between {} and {}, not {}", count,
                    where, count * smallest, count * largest, sum));
  }
  return Status::Ok();
}

Status CheckMatmul(balance::Range range, const Result& result) {
  if (result.matmul().blocks != range.size()) {
    return Status::Invalid(
        fmt::format("result.matmul.blocks: {} blocks for items {} is impossible: expected {}",
                    result.matmul().blocks, range.ToString(), range.size()));
  }
  return Status::Ok();
}

// One failure: inside the range, after the previous one, ended as a process
// can end, after as many attempts as the job allows.
Status CheckFailure(const WorkloadSpec& spec, balance::Range range, const ExecFailure& failure,
                    uint64_t previous_end, size_t index) {
  const std::string field = fmt::format("result.exec.failures[{}]", index);
  if (failure.items.begin < range.begin || failure.items.end > range.end) {
    return Status::Invalid(fmt::format("{}: items {} lie outside the range handed in, {}", field,
                                       failure.items.ToString(), range.ToString()));
  }
  if (failure.items.begin < previous_end) {
    return Status::Invalid(
        fmt::format("{}: items {} overlap another failure", field, failure.items.ToString()));
  }
  // Exit 0 fails only when the job takes results and the run's was refused
  // (user_result.h): then the failure says why.
  const bool refused_result =
      failure.exit_code == 0 && !failure.error.empty() && !spec.exec.result.merge.empty();
  if (!refused_result && (failure.exit_code < 1 || failure.exit_code > 255)) {
    return Status::Invalid(fmt::format(
        "{}.exitCode: {} is not an exit status of a failed process (1 to 255, or 0 with the "
        "error that refused its result file)",
        field, failure.exit_code));
  }
  const uint64_t most = uint64_t{spec.exec.retries} + 1;
  if (failure.attempts < 1 || failure.attempts > most) {
    return Status::Invalid(fmt::format("{}.attempts: {} is impossible: the job allows 1 to {}",
                                       field, failure.attempts, most));
  }
  return Status::Ok();
}

Status CheckExec(const WorkloadSpec& spec, balance::Range range, const Result& result) {
  const workload::ExecTotals& totals = result.exec();
  uint64_t failed = 0;
  uint64_t previous_end = 0;
  for (size_t i = 0; i < totals.failures.size(); ++i) {
    const ExecFailure& failure = totals.failures[i];
    BALLAST_RETURN_IF_ERROR(CheckFailure(spec, range, failure, previous_end, i));
    failed += failure.items.size();
    previous_end = failure.items.end;
  }
  // No overflow: the failures are disjoint and inside the range.
  if (totals.succeeded > range.size() || totals.succeeded + failed != range.size()) {
    return Status::Invalid(fmt::format(
        "result.exec.succeeded: {} items succeeded and {} failed, for the {} items of {}: each "
        "item either succeeds or fails, once",
        totals.succeeded, failed, range.size(), range.ToString()));
  }
  return Status::Ok();
}

}  // namespace

uint64_t PrimesCountBound(uint64_t lo, uint64_t hi) {
  if (hi <= lo) return 0;
  uint64_t small = 0;  // 2, 3 and 5 are primes that are not prime to 30
  for (uint64_t p : {2, 3, 5}) small += lo <= p && p < hi ? 1 : 0;
  return PrimeTo30Below(hi) - PrimeTo30Below(lo) + small;
}

Status CheckResultPossible(const WorkloadSpec& spec, balance::Range range, const Result& result) {
  switch (spec.kind) {
    case workload::WorkloadKind::kPrimes:
      return CheckPrimes(spec, range, result);
    case workload::WorkloadKind::kMatmul:
      return CheckMatmul(range, result);
    case workload::WorkloadKind::kExec:
      break;
  }
  return CheckExec(spec, range, result);
}

}  // namespace ballast::coordinator
