// WeightedJobSpec: the spec of a WeightedJob as the operator uses it, parsed
// once (per generation) from the JSON object the API server hands over — not
// through the YAML file reader, and with errors that name the field's path:
//
//   spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got "abc"
//
// The keys `ballast run` shares are read by job::JobSpecFromJson (the same
// rules and defaults as the YAML job file); the Kubernetes-only keys here.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "common/status.h"
#include "job/job_spec.h"

namespace ballast::controller {

struct WeightedJobSpec {
  job::JobSpec job;  // workload, policy, profile, leaseSeconds, backoffLimit, deadline
  bool suspend = false;
  std::optional<int64_t> ttl_seconds_after_finished;
  std::map<std::string, std::string> node_selector;
  // core/v1 Tolerations, each an object whose known fields have their types
  // (kept as JSON: they go into the worker pods as they are).
  nlohmann::json tolerations = nlohmann::json::array();
};

// Why a spec was refused: the reason of the Failed condition and the message.
struct SpecError {
  std::string reason;  // "InvalidPolicy" when spec.policy is wrong, else "InvalidSpec"
  Status status;       // Invalid "<path>: expected ..., got ..."
};

// The spec `spec` of the WeightedJob `name`, or the error that fails the job.
// Never throws.
struct ParsedSpec {
  std::optional<WeightedJobSpec> spec;  // set when valid
  SpecError error;                      // set when not
};
ParsedSpec ParseWeightedJobSpec(const nlohmann::json& spec, const std::string& name);

}  // namespace ballast::controller
