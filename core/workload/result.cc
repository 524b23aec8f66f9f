// Result: merging, JSON and summaries (workload/result.h).
#include "core/workload/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/workload/json_fields.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;

// A failure's error travels in reports and status: a line, not a log.
constexpr size_t kMaxErrorBytes = 512;

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
        joined.back().attempts == failure.attempts && joined.back().error == failure.error) {
      joined.back().items.end = failure.items.end;
    } else {
      joined.push_back(failure);
    }
  }
  *failures = std::move(joined);
}

StatusOr<Result> ExecFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "exec", {"succeeded", "failures", "fields"}));
  BALLAST_ASSIGN_OR_RETURN(uint64_t succeeded, RequireUint(node, "exec", "succeeded"));
  UserFields fields;
  if (auto found = node.find("fields"); found != node.end()) {
    BALLAST_ASSIGN_OR_RETURN(fields, FieldsFromJson(*found, "exec.fields"));
  }
  Result result = Result::ExecHandedBack(succeeded, std::move(fields));
  auto failures = node.find("failures");
  if (failures == node.end() || !failures->is_array()) {
    return Status::Invalid("exec.failures: expected an array");
  }
  for (const json& entry : *failures) {
    const std::string where = "exec.failures[]";
    BALLAST_RETURN_IF_ERROR(
        ExpectObject(entry, where, {"begin", "end", "exitCode", "attempts", "error"}));
    BALLAST_ASSIGN_OR_RETURN(uint64_t begin, RequireUint(entry, where, "begin"));
    BALLAST_ASSIGN_OR_RETURN(uint64_t end, RequireUint(entry, where, "end"));
    if (end <= begin) return Status::Invalid("exec.failures[].end: expected end > begin");
    // Whole numbers that fit what they are read into, never narrowed; what
    // a job allows (1 to 255, the attempts its retries give) is checked by
    // the coordinator (coordinator/result_bounds.h).
    auto code = entry.find("exitCode");
    if (code == entry.end() || !code->is_number_integer() ||
        code->get<int64_t>() < std::numeric_limits<int>::min() ||
        code->get<int64_t>() > std::numeric_limits<int>::max() ||
        (code->is_number_unsigned() && code->get<uint64_t>() > INT64_MAX)) {
      return Status::Invalid("exec.failures[].exitCode: expected a whole number of 32 bits");
    }
    BALLAST_ASSIGN_OR_RETURN(uint64_t attempts, RequireUint(entry, where, "attempts"));
    if (attempts > std::numeric_limits<uint32_t>::max()) {
      return Status::Invalid("exec.failures[].attempts: expected a whole number of 32 bits");
    }
    std::string error;
    if (auto found = entry.find("error"); found != entry.end()) {
      if (!found->is_string() || found->get_ref<const std::string&>().size() > kMaxErrorBytes) {
        return Status::Invalid(
            fmt::format("exec.failures[].error: expected a string of at most "
                        "{} bytes",
                        kMaxErrorBytes));
      }
      error = found->get<std::string>();
    }
    BALLAST_RETURN_IF_ERROR(
        result.Merge(Result::ExecFailed({begin, end}, static_cast<int>(code->get<int64_t>()),
                                        static_cast<uint32_t>(attempts), std::move(error))));
  }
  return result;
}

// The values of the first `max` items of `items` that `values` holds.
std::vector<std::string> ValuesOf(const std::vector<std::string>& values, balance::Range items,
                                  size_t max) {
  std::vector<std::string> named;
  for (uint64_t i = items.begin; i < items.end && i < values.size() && named.size() < max; ++i) {
    named.push_back(values[i]);
  }
  return named;
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
  return Result(WorkloadKind::kExec, ExecTotals{items, {}, {}});
}

Result Result::ExecHandedBack(uint64_t items, UserFields fields) {
  return Result(WorkloadKind::kExec, ExecTotals{items, {}, std::move(fields)});
}

Result Result::ExecFailed(balance::Range items, int exit_code, uint32_t attempts,
                          std::string error) {
  if (error.size() > kMaxErrorBytes) error = json_read::Cut(error, kMaxErrorBytes - 4);
  return Result(WorkloadKind::kExec,
                ExecTotals{0, {{items, exit_code, attempts, std::move(error)}}, {}});
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
      MergeFields(mine.fields, other.exec().fields);
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
    json entry = {{"begin", failure.items.begin},
                  {"end", failure.items.end},
                  {"exitCode", failure.exit_code},
                  {"attempts", failure.attempts}};
    if (!failure.error.empty()) entry["error"] = failure.error;
    failures.push_back(std::move(entry));
  }
  json body = {{"succeeded", exec().succeeded}, {"failures", std::move(failures)}};
  if (!exec().fields.empty()) body["fields"] = FieldsToJson(exec().fields);
  return {{"exec", std::move(body)}};
}

json Result::ToStatusJson(const std::vector<std::string>* values) const {
  json out = ToJson();
  if (kind_ == WorkloadKind::kExec && values != nullptr && !exec().failures.empty()) {
    out["exec"]["failedValues"] = FailedValues(*values, kShownFailedValues);
  }
  return out;
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

std::string Result::Summary(const std::vector<std::string>* values) const {
  switch (kind_) {
    case WorkloadKind::kPrimes:
      return fmt::format("{} primes, checksum {}", primes().count, Hex64(primes().sum));
    case WorkloadKind::kMatmul:
      return fmt::format("{} blocks of C, sum of entries {}, checksum {}", matmul().blocks,
                         static_cast<int64_t>(matmul().sum), Hex64(matmul().checksum));
    case WorkloadKind::kExec:
      break;
  }
  std::string line = fmt::format("{} items succeeded, {} failed", exec().succeeded, FailedItems());
  if (!exec().fields.empty()) line += "; " + FieldsSummary(exec().fields);
  constexpr size_t kShown = 3;
  for (size_t i = 0; i < exec().failures.size() && i < kShown; ++i) {
    const ExecFailure& f = exec().failures[i];
    std::string items = f.items.ToString();
    if (values != nullptr && f.items.end <= values->size()) {
      items = fmt::format("{} ({}{})", items, fmt::join(ValuesOf(*values, f.items, kShown), ", "),
                          f.items.size() > kShown ? ", ..." : "");
    }
    const std::string why =
        f.error.empty() ? fmt::format("exit {}", f.exit_code) : json_read::Cut(f.error, 120);
    line += fmt::format("{} {} {} after {} attempts", i == 0 ? ":" : ";", items, why, f.attempts);
  }
  if (exec().failures.size() > kShown) {
    line += fmt::format("; and {} more ranges", exec().failures.size() - kShown);
  }
  return line;
}

uint64_t Result::FailedItems() const {
  if (kind_ != WorkloadKind::kExec) return 0;
  uint64_t failed = 0;
  for (const ExecFailure& failure : exec().failures) failed += failure.items.size();
  return failed;
}

std::vector<std::string> Result::FailedValues(const std::vector<std::string>& values,
                                              size_t max) const {
  std::vector<std::string> named;
  if (kind_ != WorkloadKind::kExec) return named;
  for (const ExecFailure& failure : exec().failures) {
    if (named.size() >= max) break;
    for (const std::string& value : ValuesOf(values, failure.items, max - named.size())) {
      named.push_back(value);
    }
  }
  return named;
}

}  // namespace ballast::workload
