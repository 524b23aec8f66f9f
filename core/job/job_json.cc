// JobSpecFromJson and its parts: the JSON form of a job's spec, read with
// common/json_read.h so that nothing throws and every error names its path.
#include "core/job/job_json.h"

#include <fmt/format.h>

#include "core/common/json_read.h"

namespace ballast::job {
namespace {

using nlohmann::json;
namespace jr = json_read;

Status ParsePrimes(const json& node, std::string_view path, workload::PrimesSpec* primes) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"limit", "method", "checksum"}));
  BALLAST_ASSIGN_OR_RETURN(const json* limit, jr::Require(node, path, "limit"));
  BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*limit, jr::Field(path, "limit"), 2,
                                                  static_cast<int64_t>(workload::kMaxPrimesLimit)));
  primes->limit = static_cast<uint64_t>(value);
  if (const json* method = jr::Find(node, "method")) {
    const std::string field = jr::Field(path, "method");
    if (*method == "trial") {
      primes->method = workload::PrimesSpec::Method::kTrial;
    } else if (*method == "sieve") {
      primes->method = workload::PrimesSpec::Method::kSieve;
    } else {
      return jr::Expected(field, "\"trial\" or \"sieve\"", *method);
    }
  }
  if (const json* checksum = jr::Find(node, "checksum")) {
    BALLAST_ASSIGN_OR_RETURN(primes->checksum, jr::Bool(*checksum, jr::Field(path, "checksum")));
  }
  return Status::Ok();
}

Status ParseMatmul(const json& node, std::string_view path, workload::MatmulSpec* matmul) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"size", "block", "seed"}));
  BALLAST_ASSIGN_OR_RETURN(const json* size_node, jr::Require(node, path, "size"));
  BALLAST_ASSIGN_OR_RETURN(int64_t size,
                           jr::Int(*size_node, jr::Field(path, "size"), 1, workload::kMaxMatmulN));
  BALLAST_ASSIGN_OR_RETURN(const json* block_node, jr::Require(node, path, "block"));
  BALLAST_ASSIGN_OR_RETURN(
      int64_t block, jr::Int(*block_node, jr::Field(path, "block"), 1, workload::kMaxMatmulN));
  if (size % block != 0) {
    return jr::Expected(jr::Field(path, "block"), fmt::format("a divisor of size = {}", size),
                        *block_node);
  }
  matmul->n = static_cast<uint32_t>(size);
  matmul->block = static_cast<uint32_t>(block);
  if (const json* seed = jr::Find(node, "seed")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*seed, jr::Field(path, "seed"), 0));
    matmul->seed = static_cast<uint64_t>(value);
  }
  return Status::Ok();
}

Status ParseExec(const json& node, std::string_view path, workload::ExecSpec* exec) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"command", "perItem", "retries", "image"}));
  BALLAST_ASSIGN_OR_RETURN(const json* command, jr::Require(node, path, "command"));
  const std::string command_path = jr::Field(path, "command");
  if (!command->is_array() || command->empty()) {
    return jr::Expected(command_path, "a non-empty list of strings", *command);
  }
  for (size_t i = 0; i < command->size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(std::string word,
                             jr::String((*command)[i], jr::Element(command_path, i)));
    exec->command.push_back(std::move(word));
  }
  if (exec->command[0].empty()) {
    return jr::Expected(jr::Element(command_path, 0), "a program name", (*command)[0]);
  }
  if (const json* per_item = jr::Find(node, "perItem")) {
    BALLAST_ASSIGN_OR_RETURN(exec->per_item, jr::Bool(*per_item, jr::Field(path, "perItem")));
  }
  if (const json* retries = jr::Find(node, "retries")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*retries, jr::Field(path, "retries"), 0, 100));
    exec->retries = static_cast<uint32_t>(count);
  }
  if (const json* image = jr::Find(node, "image")) {
    BALLAST_ASSIGN_OR_RETURN(exec->image, jr::String(*image, jr::Field(path, "image")));
  }
  return Status::Ok();
}

// A policy option's value as MakePolicy reads it: the text of a string, a
// number or a boolean.
StatusOr<std::string> OptionText(const json& value, std::string_view path) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
  if (value.is_number_integer() || value.is_number_unsigned()) return value.dump();
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  return jr::Expected(path, "a string, number or boolean", value);
}

}  // namespace

StatusOr<workload::WorkloadSpec> WorkloadSpecFromJson(const json& workload,
                                                      std::optional<uint64_t> items,
                                                      std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(workload, path, {"primes", "matmul", "exec"}));
  if (workload.size() != 1) {
    return jr::Expected(path, "exactly one of primes, matmul, exec", workload);
  }
  const auto only = workload.begin();
  const std::string& name = only.key();
  const json& member = only.value();
  const std::string member_path = jr::Field(path, name);
  workload::WorkloadSpec spec;
  if (name == "primes") {
    spec.kind = workload::WorkloadKind::kPrimes;
    BALLAST_RETURN_IF_ERROR(ParsePrimes(member, member_path, &spec.primes));
  } else if (name == "matmul") {
    spec.kind = workload::WorkloadKind::kMatmul;
    BALLAST_RETURN_IF_ERROR(ParseMatmul(member, member_path, &spec.matmul));
  } else {
    spec.kind = workload::WorkloadKind::kExec;
    BALLAST_RETURN_IF_ERROR(ParseExec(member, member_path, &spec.exec));
    if (!items) {
      return Status::Invalid(
          fmt::format("{}: exec needs the job's items (how many to run)", member_path));
    }
  }
  spec.items = items ? *items : workload::DefaultItems(spec);
  spec.cost = workload::DefaultCost(spec);
  Status valid = workload::ValidateWorkload(spec);
  if (!valid.ok()) return Status::Invalid(fmt::format("{}: {}", path, valid.message()));
  return spec;
}

StatusOr<balance::PolicySpec> PolicySpecFromJson(const json& policy, std::string_view path) {
  balance::PolicySpec spec;
  if (policy.is_string()) {
    spec.name = policy.get<std::string>();
  } else if (policy.is_object()) {
    BALLAST_ASSIGN_OR_RETURN(const json* name, jr::Require(policy, path, "name"));
    BALLAST_ASSIGN_OR_RETURN(spec.name, jr::String(*name, jr::Field(path, "name")));
    for (const auto& [key, value] : policy.items()) {
      if (key == "name") continue;
      const std::string field = jr::Field(path, key);
      if (key == "label") {
        BALLAST_ASSIGN_OR_RETURN(spec.label, jr::String(value, field));
        continue;
      }
      BALLAST_ASSIGN_OR_RETURN(spec.options[key], OptionText(value, field));
    }
  } else {
    return jr::Expected(path, "a policy name or an object with name and options", policy);
  }
  auto made = balance::MakePolicy(spec);
  if (!made.ok()) return Status::Invalid(fmt::format("{}: {}", path, made.status().message()));
  return spec;
}

StatusOr<JobSpec> JobSpecFromJson(const json& spec, std::string_view name, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(spec, path,
                       {"name", "workload", "items", "policy", "profile", "leaseSeconds",
                        "backoffLimit", "activeDeadlineSeconds", "verify", "nodeSelector",
                        "tolerations", "worker", "suspend", "ttlSecondsAfterFinished"}));
  JobSpec job;
  job.name = std::string(name);
  std::optional<uint64_t> items;
  if (const json* node = jr::Find(spec, "items")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*node, jr::Field(path, "items"), 1));
    items = static_cast<uint64_t>(value);
  }
  BALLAST_ASSIGN_OR_RETURN(const json* workload, jr::Require(spec, path, "workload"));
  BALLAST_ASSIGN_OR_RETURN(job.workload,
                           WorkloadSpecFromJson(*workload, items, jr::Field(path, "workload")));
  if (const json* policy = jr::Find(spec, "policy")) {
    BALLAST_ASSIGN_OR_RETURN(job.policy, PolicySpecFromJson(*policy, jr::Field(path, "policy")));
  }
  if (const json* profile = jr::Find(spec, "profile")) {
    BALLAST_ASSIGN_OR_RETURN(job.profile, jr::String(*profile, jr::Field(path, "profile")));
    if (job.profile.empty()) {
      return jr::Expected(jr::Field(path, "profile"), "a WeightProfile name", *profile);
    }
  }
  if (const json* lease = jr::Find(spec, "leaseSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(job.lease_seconds,
                             jr::Positive(*lease, jr::Field(path, "leaseSeconds")));
  }
  if (const json* backoff = jr::Find(spec, "backoffLimit")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value,
                             jr::Int(*backoff, jr::Field(path, "backoffLimit"), 0, 1000));
    job.backoff_limit = static_cast<uint32_t>(value);
  }
  if (const json* deadline = jr::Find(spec, "activeDeadlineSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(job.active_deadline_s,
                             jr::Positive(*deadline, jr::Field(path, "activeDeadlineSeconds")));
  }
  if (const json* verify = jr::Find(spec, "verify")) {
    const std::string verify_path = jr::Field(path, "verify");
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(*verify, verify_path, {"fraction"}));
    BALLAST_ASSIGN_OR_RETURN(const json* fraction, jr::Require(*verify, verify_path, "fraction"));
    BALLAST_ASSIGN_OR_RETURN(job.verify_fraction,
                             jr::Positive(*fraction, jr::Field(verify_path, "fraction"), 1.0));
  }
  return job;
}

}  // namespace ballast::job
