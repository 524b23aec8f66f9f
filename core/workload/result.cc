// Result: merging, JSON and summaries (workload/result.h).
#include "core/workload/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/workload/json_fields.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;

// Sorts failures by their first item and joins adjacent runs that ended alike,
// so that equal sets of failed items compare equal however they were split.
void Canonicalize(std::vector<ExecFailure>* failures) {
  std::sort(failures->begin(), failures->end(), [](const ExecFailure& a, const ExecFailure& b) {
    return a.items.begin < b.items.begin;
  });
  std::vector<ExecFailure> joined;
  for (const ExecFailure& failure : *failures) {
    if (!joined.empty() && joined.back().items.end == failure.items.begin &&
        joined.back().exit_code == failure.exit_code &&
        joined.back().attempts == failure.attempts) {
      joined.back().items.end = failure.items.end;
    } else {
      joined.push_back(failure);
    }
  }
  *failures = std::move(joined);
}

StatusOr<Result> ExecFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "exec", {"succeeded", "failures"}));
  BALLAST_ASSIGN_OR_RETURN(uint64_t succeeded, RequireUint(node, "exec", "succeeded"));
  Result result = Result::ExecSucceeded(succeeded);
  auto failures = node.find("failures");
  if (failures == node.end() || !failures->is_array()) {
    return Status::Invalid("exec.failures: expected an array");
  }
  for (const json& entry : *failures) {
    const std::string where = "exec.failures[]";
    BALLAST_RETURN_IF_ERROR(ExpectObject(entry, where, {"begin", "end", "exitCode", "attempts"}));
    BALLAST_ASSIGN_OR_RETURN(uint64_t begin, RequireUint(entry, where, "begin"));
    BALLAST_ASSIGN_OR_RETURN(uint64_t end, RequireUint(entry, where, "end"));
    if (end <= begin) return Status::Invalid("exec.failures[].end: expected end > begin");
    auto code = entry.find("exitCode");
    if (code == entry.end() || !code->is_number_integer()) {
      return Status::Invalid("exec.failures[].exitCode: expected a whole number");
    }
    BALLAST_ASSIGN_OR_RETURN(uint64_t attempts, RequireUint(entry, where, "attempts"));
    BALLAST_RETURN_IF_ERROR(result.Merge(
        Result::ExecFailed({begin, end}, code->get<int>(), static_cast<uint32_t>(attempts))));
  }
  return result;
}

}  // namespace

Result Result::Empty(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kPrimes:
      return Result(kind, PrimesTotals{});
    case WorkloadKind::kMatmul:
      return Result(kind, MatmulTotals{});
    case WorkloadKind::kExec:
      break;
  }
  return Result(WorkloadKind::kExec, ExecTotals{});
}

Result Result::Primes(uint64_t count, uint64_t sum) {
  return Result(WorkloadKind::kPrimes, PrimesTotals{count, sum});
}

Result Result::Matmul(uint64_t blocks, uint64_t sum, uint64_t checksum) {
  return Result(WorkloadKind::kMatmul, MatmulTotals{blocks, sum, checksum});
}

Result Result::ExecSucceeded(uint64_t items) {
  return Result(WorkloadKind::kExec, ExecTotals{items, {}});
}

Result Result::ExecFailed(balance::Range items, int exit_code, uint32_t attempts) {
  return Result(WorkloadKind::kExec, ExecTotals{0, {{items, exit_code, attempts}}});
}

Status Result::Merge(const Result& other) {
  if (other.kind_ != kind_) {
    return Status::Invalid(fmt::format("cannot merge a {} result into a {} result",
                                       WorkloadKindName(other.kind_), WorkloadKindName(kind_)));
  }
  switch (kind_) {
    case WorkloadKind::kPrimes: {
      auto& mine = std::get<PrimesTotals>(totals_);
      mine.count += other.primes().count;
      mine.sum += other.primes().sum;
      break;
    }
    case WorkloadKind::kMatmul: {
      auto& mine = std::get<MatmulTotals>(totals_);
      mine.blocks += other.matmul().blocks;
      mine.sum += other.matmul().sum;
      mine.checksum += other.matmul().checksum;
      break;
    }
    case WorkloadKind::kExec: {
      auto& mine = std::get<ExecTotals>(totals_);
      mine.succeeded += other.exec().succeeded;
      mine.failures.insert(mine.failures.end(), other.exec().failures.begin(),
                           other.exec().failures.end());
      Canonicalize(&mine.failures);
      break;
    }
  }
  return Status::Ok();
}

json Result::ToJson() const {
  switch (kind_) {
    case WorkloadKind::kPrimes:
      return {{"primes", {{"count", primes().count}, {"sum", Hex64(primes().sum)}}}};
    case WorkloadKind::kMatmul:
      return {{"matmul",
               {{"blocks", matmul().blocks},
                {"sum", Hex64(matmul().sum)},
                {"checksum", Hex64(matmul().checksum)}}}};
    case WorkloadKind::kExec:
      break;
  }
  json failures = json::array();
  for (const ExecFailure& failure : exec().failures) {
    failures.push_back({{"begin", failure.items.begin},
                        {"end", failure.items.end},
                        {"exitCode", failure.exit_code},
                        {"attempts", failure.attempts}});
  }
  return {{"exec", {{"succeeded", exec().succeeded}, {"failures", std::move(failures)}}}};
}

StatusOr<Result> Result::FromJson(WorkloadKind kind, const json& node) {
  const std::string name = WorkloadKindName(kind);
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "result", {name}));
  auto body = node.find(name);
  if (body == node.end()) return Status::Invalid(fmt::format("result.{}: missing", name));
  switch (kind) {
    case WorkloadKind::kPrimes: {
      BALLAST_RETURN_IF_ERROR(ExpectObject(*body, "primes", {"count", "sum"}));
      BALLAST_ASSIGN_OR_RETURN(uint64_t count, RequireUint(*body, "primes", "count"));
      BALLAST_ASSIGN_OR_RETURN(uint64_t sum, RequireHex64(*body, "primes", "sum"));
      return Primes(count, sum);
    }
    case WorkloadKind::kMatmul: {
      BALLAST_RETURN_IF_ERROR(ExpectObject(*body, "matmul", {"blocks", "sum", "checksum"}));
      BALLAST_ASSIGN_OR_RETURN(uint64_t blocks, RequireUint(*body, "matmul", "blocks"));
      BALLAST_ASSIGN_OR_RETURN(uint64_t sum, RequireHex64(*body, "matmul", "sum"));
      BALLAST_ASSIGN_OR_RETURN(uint64_t checksum, RequireHex64(*body, "matmul", "checksum"));
      return Matmul(blocks, sum, checksum);
    }
    case WorkloadKind::kExec:
      break;
  }
  return ExecFromJson(*body);
}

std::string Result::Summary() const {
  switch (kind_) {
    case WorkloadKind::kPrimes:
      return fmt::format("{} primes, checksum {}", primes().count, Hex64(primes().sum));
    case WorkloadKind::kMatmul:
      return fmt::format("{} blocks of C, sum of entries {}, checksum {}", matmul().blocks,
                         static_cast<int64_t>(matmul().sum), Hex64(matmul().checksum));
    case WorkloadKind::kExec:
      break;
  }
  uint64_t failed = 0;
  for (const ExecFailure& failure : exec().failures) failed += failure.items.size();
  std::string line = fmt::format("{} items succeeded, {} failed", exec().succeeded, failed);
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < exec().failures.size() && i < kShown; ++i) {
    const ExecFailure& f = exec().failures[i];
    line += fmt::format("{} {} exit {} after {} attempts", i == 0 ? ":" : ";", f.items.ToString(),
                        f.exit_code, f.attempts);
  }
  if (exec().failures.size() > kShown) {
    line += fmt::format("; and {} more ranges", exec().failures.size() - kShown);
  }
  return line;
}

}  // namespace ballast::workload
