// Result: merging, JSON and summaries (workload/result.h).
#include "core/workload/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/common/utf8.h"
#include "core/workload/json_fields.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;

// A failure's error travels in reports and status: a line, not a log.
constexpr size_t kMaxErrorBytes = 512;

// The end of `text` in at most `max` (> 3) bytes of valid UTF-8, "..." first
// when cut: what a command wrote last says most.
std::string TextEnd(std::string_view text, size_t max) {
  std::string valid = ToValidUtf8(text);
  if (valid.size() <= max) return valid;
  size_t begin = valid.size() - (max - 3);
  while (begin < valid.size() && (static_cast<unsigned char>(valid[begin]) & 0xC0) == 0x80) {
    ++begin;  // not inside a character
  }
  return "..." + valid.substr(begin);
}

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
        joined.back().attempts == failure.attempts && joined.back().error == failure.error &&
        joined.back().output == failure.output) {
      joined.back().items.end = failure.items.end;
    } else {
      joined.push_back(failure);
    }
  }
  // Past the first few, failures keep no output: a failure's place in a
  // merge of some of the results is never later than in the merge of all,
  // so which ones keep theirs does not depend on the order of merging.
  for (size_t i = kFailuresWithOutput; i < joined.size(); ++i) joined[i].output.clear();
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
        ExpectObject(entry, where, {"begin", "end", "exitCode", "attempts", "error", "output"}));
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
    std::string output;
    if (auto found = entry.find("output"); found != entry.end()) {
      if (!found->is_string() ||
          found->get_ref<const std::string&>().size() > kMaxFailureOutputBytes) {
        return Status::Invalid(
            fmt::format("exec.failures[].output: expected a string of at most {} bytes",
                        kMaxFailureOutputBytes));
      }
      output = found->get<std::string>();
    }
    BALLAST_RETURN_IF_ERROR(result.Merge(
        Result::ExecFailed({begin, end}, static_cast<int>(code->get<int64_t>()),
                           static_cast<uint32_t>(attempts), std::move(error), std::move(output))));
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

std::string LastOutputLine(const ExecFailure& failure, size_t max) {
  std::string_view text = failure.output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  const size_t line = text.rfind('\n');
  if (line != std::string_view::npos) text.remove_prefix(line + 1);
  return json_read::Cut(text, max);
}

Result Result::ExecHandedBack(uint64_t items, UserFields fields) {
  return Result(WorkloadKind::kExec, ExecTotals{items, {}, std::move(fields)});
}

Result Result::ExecFailed(balance::Range items, int exit_code, uint32_t attempts, std::string error,
                          std::string output) {
  if (error.size() > kMaxErrorBytes) error = json_read::Cut(error, kMaxErrorBytes - 4);
  output = TextEnd(output, kMaxFailureOutputBytes);
  return Result(
      WorkloadKind::kExec,
      ExecTotals{0, {{items, exit_code, attempts, std::move(error), std::move(output)}}, {}});
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
    if (!failure.output.empty()) entry["output"] = failure.output;
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
    const std::string said = LastOutputLine(f);
    line += fmt::format("{} {} {} after {} attempts{}", i == 0 ? ":" : ";", items, why, f.attempts,
                        said.empty() ? "" : fmt::format(" (it wrote \"{}\")", said));
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
