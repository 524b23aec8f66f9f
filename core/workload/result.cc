// Result: merging, JSON and summaries (workload/result.h).
#include "core/workload/result.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/common/utf8.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;
namespace jr = json_read;

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

// One entry of exec.failures: a range that failed, how, and what it wrote.
StatusOr<Result> FailureFromJson(const json& entry, const std::string& path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(entry, path, {"begin", "end", "exitCode", "attempts", "error", "output"}));
  BALLAST_ASSIGN_OR_RETURN(const uint64_t begin, jr::Member(entry, path, "begin", jr::Uint));
  BALLAST_ASSIGN_OR_RETURN(const uint64_t end, jr::Member(entry, path, "end", jr::Uint));
  if (end <= begin) {
    return jr::Expected(jr::Field(path, "end"), fmt::format("a number > begin ({})", begin),
                        entry["end"]);
  }
  // Whole numbers that fit what they are read into, never narrowed; what
  // a job allows (1 to 255, the attempts its retries give) is checked by
  // the coordinator (coordinator/result_bounds.h).
  const json* code = jr::Find(entry, "exitCode");
  if (code == nullptr)
    return Status::Invalid(fmt::format("{}: missing", jr::Field(path, "exitCode")));
  BALLAST_ASSIGN_OR_RETURN(const int64_t exit_code, jr::Int(*code, jr::Field(path, "exitCode"),
                                                            std::numeric_limits<int>::min(),
                                                            std::numeric_limits<int>::max()));
  BALLAST_ASSIGN_OR_RETURN(const uint64_t attempts, jr::Member(entry, path, "attempts", jr::Uint));
  if (attempts > std::numeric_limits<uint32_t>::max()) {
    return jr::Expected(jr::Field(path, "attempts"), "a whole number of 32 bits",
                        entry["attempts"]);
  }
  // A bounded string, or none.
  auto bounded = [&](std::string_view key, size_t max) -> StatusOr<std::string> {
    const json* found = jr::Find(entry, key);
    if (found == nullptr) return std::string();
    if (!found->is_string() || found->get_ref<const std::string&>().size() > max) {
      return jr::Expected(jr::Field(path, key), fmt::format("a string of at most {} bytes", max),
                          *found);
    }
    return found->get<std::string>();
  };
  BALLAST_ASSIGN_OR_RETURN(std::string error, bounded("error", kMaxErrorBytes));
  BALLAST_ASSIGN_OR_RETURN(std::string output, bounded("output", kMaxFailureOutputBytes));
  return Result::ExecFailed({begin, end}, static_cast<int>(exit_code),
                            static_cast<uint32_t>(attempts), std::move(error), std::move(output));
}

StatusOr<Result> ExecFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, "exec", {"succeeded", "failures", "fields"}));
  BALLAST_ASSIGN_OR_RETURN(const uint64_t succeeded,
                           jr::Member(node, "exec", "succeeded", jr::Uint));
  UserFields fields;
  if (const json* found = jr::Find(node, "fields")) {
    BALLAST_ASSIGN_OR_RETURN(fields, FieldsFromJson(*found, "exec.fields"));
  }
  Result result = Result::ExecHandedBack(succeeded, std::move(fields));
  const json* failures = jr::Find(node, "failures");
  if (failures == nullptr || !failures->is_array()) {
    return jr::Expected("exec.failures", "an array", failures ? *failures : json());
  }
  for (size_t i = 0; i < failures->size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(const Result failure,
                             FailureFromJson((*failures)[i], jr::Element("exec.failures", i)));
    BALLAST_RETURN_IF_ERROR(result.Merge(failure));
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

std::string Hex64(uint64_t value) { return fmt::format("{:#018x}", value); }

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
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, "result", {name}));
  BALLAST_ASSIGN_OR_RETURN(const json* body, jr::Require(node, "result", name));
  switch (kind) {
    case WorkloadKind::kPrimes: {
      BALLAST_RETURN_IF_ERROR(jr::ExpectObject(*body, "primes", {"count", "sum"}));
      BALLAST_ASSIGN_OR_RETURN(const uint64_t count,
                               jr::Member(*body, "primes", "count", jr::Uint));
      BALLAST_ASSIGN_OR_RETURN(const uint64_t sum, jr::Member(*body, "primes", "sum", jr::Hex64));
      return Primes(count, sum);
    }
    case WorkloadKind::kMatmul: {
      BALLAST_RETURN_IF_ERROR(jr::ExpectObject(*body, "matmul", {"blocks", "sum", "checksum"}));
      BALLAST_ASSIGN_OR_RETURN(const uint64_t blocks,
                               jr::Member(*body, "matmul", "blocks", jr::Uint));
      BALLAST_ASSIGN_OR_RETURN(const uint64_t sum, jr::Member(*body, "matmul", "sum", jr::Hex64));
      BALLAST_ASSIGN_OR_RETURN(const uint64_t checksum,
                               jr::Member(*body, "matmul", "checksum", jr::Hex64));
      return Matmul(blocks, sum, checksum);
    }
    case WorkloadKind::kExec:
      break;
  }
  return ExecFromJson(*body);
}

std::string Result::Summary(ItemNames names) const {
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
    std::string items = names.places != nullptr
                            ? ItemPlacesOf(names.places, f.items.begin, f.items.end, kShown)
                            : f.items.ToString();
    if (names.values != nullptr && f.items.end <= names.values->size()) {
      items =
          fmt::format("{} ({}{})", items, fmt::join(ValuesOf(*names.values, f.items, kShown), ", "),
                      f.items.size() > kShown ? ", ..." : "");
    }
    const std::string why =
        f.error.empty() ? fmt::format("exit {}", f.exit_code) : json_read::Cut(f.error, 120);
    const std::string said = LastOutputLine(f);
    line += fmt::format("{} {} {} after {} attempt{}{}", i == 0 ? ":" : ";", items, why, f.attempts,
                        f.attempts == 1 ? "" : "s",
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
