// `ballast selftest` without the network (selftest.h).
#include "cli/selftest.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

#include "core/common/json_read.h"
#include "core/common/names.h"
#include "operator/api/weighted_job.h"

namespace ballast::cli::selftest {
namespace {

using nlohmann::json;

// Seconds a finished job stays before the operator deletes it (a safety net:
// the selftest deletes it itself).
constexpr int kTtlAfterFinished = 600;

// The Failed condition's "Reason: message", or "" when absent.
std::string FailedCondition(const api::WeightedJobStatus& status) {
  for (const api::StatusCondition& condition : status.conditions) {
    if (condition.type != api::ConditionType::kFailed) continue;
    return fmt::format("{}: {}", api::ReasonName(condition.reason), condition.message);
  }
  return "";
}

// "Running 42% (63000/150000 items), 3 workers", from what status has. A
// status without observedGeneration was written by no operator (its phase
// Pending is the CRD's default).
std::string ProgressLine(const api::WeightedJobStatus& status) {
  const bool waiting =
      !status.phase || (status.Is(api::JobPhase::kPending) && !status.observed_generation);
  std::string line =
      waiting ? "waiting for the operator (not taken in yet)" : api::JobPhaseName(*status.phase);
  if (status.progress) line += " " + *status.progress;
  if (status.completed_items && status.items) {
    line += fmt::format(" ({}/{} items)", *status.completed_items, *status.items);
  }
  if (status.workers) line += fmt::format(", {} workers", *status.workers);
  return line;
}

// ", on 3 nodes (pi-a, pi-b, pi-c)" from a finished job's node rows, the
// first kListedNodes by name; "" when it has none.
std::string NodesThatRanIt(const api::WeightedJobStatus& status) {
  constexpr size_t kListedNodes = 6;
  if (!status.nodes || status.nodes->empty()) return "";
  std::vector<std::string> names;
  for (const api::NodeRow& row : *status.nodes) names.push_back(row.name);
  std::sort(names.begin(), names.end());
  const size_t count = names.size();
  std::string more;
  if (count > kListedNodes) {
    more = fmt::format(" and {} more", count - kListedNodes);
    names.resize(kListedNodes);
  }
  return fmt::format(", on {} node{} ({}{})", count, count == 1 ? "" : "s", fmt::join(names, ", "),
                     more);
}

// The verdict on a Succeeded job's status.result.
Assessment CompareResult(const api::WeightedJobStatus& status, const workload::Result& expected) {
  if (!status.result) return {Verdict::kFailed, "the job Succeeded without status.result"};
  const json* result_json = &*status.result;
  auto result = workload::Result::FromJson(workload::WorkloadKind::kPrimes, *result_json);
  if (!result.ok()) {
    return {Verdict::kFailed,
            fmt::format("status.result {}: {}", result_json->dump(), result.status().message())};
  }
  const auto& got = result->primes();
  const auto& want = expected.primes();
  std::vector<std::string> differences;
  if (got.count != want.count) {
    differences.push_back(fmt::format("count: expected {}, got {}", want.count, got.count));
  }
  if (got.sum != want.sum) {
    differences.push_back(fmt::format("checksum (sum of the primes mod 2^64): expected {}, got {}",
                                      workload::Hex64(want.sum), workload::Hex64(got.sum)));
  }
  if (!differences.empty()) {
    return {Verdict::kFailed, fmt::format("the job's result differs from the sieve's here: {}",
                                          fmt::join(differences, "; "))};
  }
  return {Verdict::kPassed, fmt::format("{}, as the sieve here counts them{}", result->Summary(),
                                        NodesThatRanIt(status))};
}

}  // namespace

Status Validate(const Spec& spec) {
  if (Status s = CheckName(spec.ns, NameKind::kDnsLabel); !s.ok()) {
    return Status::Invalid("--namespace: " + s.message());
  }
  if (Status s = CheckName(spec.name, NameKind::kDnsLabel); !s.ok()) {
    return Status::Invalid("--name: " + s.message());
  }
  if (Status s = CheckName(spec.profile, NameKind::kDnsSubdomain); !s.ok()) {
    return Status::Invalid("--profile: " + s.message());
  }
  if (spec.limit < kMinLimit || spec.limit > kMaxLimit) {
    return Status::Invalid(fmt::format("--limit: expected an integer in [{}, {}], got {}",
                                       kMinLimit, kMaxLimit, spec.limit));
  }
  if (spec.timeout_seconds <= 0) {
    return Status::Invalid(
        fmt::format("--timeout: expected seconds > 0, got {}", spec.timeout_seconds));
  }
  for (const auto& [key, value] : spec.node_selector) {
    if (key.empty()) {
      return Status::Invalid(fmt::format("--node-selector: expected KEY=VALUE, got '={}'", value));
    }
  }
  return Status::Ok();
}

json Job(const Spec& spec) {
  json job_spec = {
      {"workload", {{"primes", {{"limit", spec.limit}, {"method", "trial"}}}}},
      {"policy", "adaptive"},
      {"profile", spec.profile},
      {"activeDeadlineSeconds", spec.timeout_seconds},
      {"ttlSecondsAfterFinished", kTtlAfterFinished},
  };
  if (!spec.node_selector.empty()) job_spec["nodeSelector"] = spec.node_selector;
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata",
           {{"name", spec.name},
            {"namespace", spec.ns},
            {"labels", {{"app.kubernetes.io/created-by", "ballast-selftest"}}}}},
          {"spec", job_spec}};
}

workload::Result ExpectedPrimes(uint64_t limit) {
  std::vector<bool> composite(limit, false);
  uint64_t count = 0;
  uint64_t sum = 0;
  for (uint64_t n = 2; n < limit; ++n) {
    if (composite[n]) continue;
    ++count;
    sum += n;
    for (uint64_t multiple = n * n; multiple < limit; multiple += n) composite[multiple] = true;
  }
  return workload::Result::Primes(count, sum);
}

Assessment Assess(const json& job, const workload::Result& expected) {
  // The status by the one reader of a WeightedJob's status (an error names
  // the field); none yet is waiting.
  StatusOr<api::WeightedJobStatus> status = api::StatusFromJson(json_read::At(job, "status"));
  if (!status.ok()) return {Verdict::kFailed, status.status().message()};
  if (status->Is(api::JobPhase::kSucceeded)) return CompareResult(*status, expected);
  if (status->Is(api::JobPhase::kFailed)) {
    const std::string condition = FailedCondition(*status);
    return {Verdict::kFailed,
            "the job Failed" + (condition.empty() ? std::string() : " (" + condition + ")")};
  }
  return {Verdict::kWaiting, ProgressLine(*status)};
}

}  // namespace ballast::cli::selftest
