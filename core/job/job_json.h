// JobSpecFromJson: the `spec` of a WeightedJob as the Kubernetes API server
// hands it over (a JSON object), read into the same JobSpec that `ballast run`
// reads from YAML, with the same defaults and rules. Every error names the
// field's path as the user wrote it and what was there:
//
//   spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got "abc"
//   spec.policy.chunk: ... (the policy's own message, after the path)
//
// The Kubernetes-only keys (nodeSelector, tolerations, worker, suspend,
// ttlSecondsAfterFinished) are allowed and left to the caller (the operator
// reads them: operator/controller/weighted_job.h).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/job/job_spec.h"
#include "core/workload/workload.h"

namespace ballast::job {

// The job described by `spec`, its name `name`. Returns Invalid
// "<path>.<field>: expected ..., got ..." for an unknown key, a missing or
// mistyped field, a value out of range, an unknown policy or policy option, or
// items that do not fit the workload.
StatusOr<JobSpec> JobSpecFromJson(const nlohmann::json& spec, std::string_view name,
                                  std::string_view path = "spec");

// The `workload` union (exactly one of primes, matmul, exec) with the job's
// `items` when given; items and cost resolved as ParseWorkload does. Invalid
// naming the path otherwise.
StatusOr<workload::WorkloadSpec> WorkloadSpecFromJson(const nlohmann::json& workload,
                                                      std::optional<uint64_t> items,
                                                      std::string_view path);

// A policy: a name, or an object with name, an optional label and options
// (strings, numbers or booleans). Invalid naming the path when the form is
// wrong or MakePolicy refuses the name or an option.
StatusOr<balance::PolicySpec> PolicySpecFromJson(const nlohmann::json& policy,
                                                 std::string_view path);

}  // namespace ballast::job
