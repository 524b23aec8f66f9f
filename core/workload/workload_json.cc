// WorkloadToJson / WorkloadFromJson: the JSON form of a WorkloadSpec that the
// coordinator sends to workers. nlohmann::json is used without exceptions
// (every access is checked first), so nothing escapes this file.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/workload/json_fields.h"
#include "core/workload/workload.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;

StatusOr<PrimesSpec> PrimesFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "primes", {"limit", "method", "checksum"}));
  PrimesSpec primes;
  BALLAST_ASSIGN_OR_RETURN(primes.limit, RequireUint(node, "primes", "limit"));
  BALLAST_ASSIGN_OR_RETURN(std::string method, RequireString(node, "primes", "method"));
  if (method == "trial") {
    primes.method = PrimesSpec::Method::kTrial;
  } else if (method == "sieve") {
    primes.method = PrimesSpec::Method::kSieve;
  } else {
    return Status::Invalid(fmt::format("primes.method: expected trial or sieve, got '{}'", method));
  }
  if (auto checksum = node.find("checksum"); checksum != node.end()) {
    if (!checksum->is_boolean()) return Status::Invalid("primes.checksum: expected true or false");
    primes.checksum = checksum->get<bool>();
  }
  return primes;
}

StatusOr<MatmulSpec> MatmulFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "matmul", {"size", "block", "seed"}));
  MatmulSpec matmul;
  BALLAST_ASSIGN_OR_RETURN(uint64_t n, RequireUint(node, "matmul", "size"));
  BALLAST_ASSIGN_OR_RETURN(uint64_t block, RequireUint(node, "matmul", "block"));
  if (n > kMaxMatmulN || block > kMaxMatmulN) {
    return Status::Invalid(fmt::format("matmul: n and block must be at most {}", kMaxMatmulN));
  }
  matmul.n = static_cast<uint32_t>(n);
  matmul.block = static_cast<uint32_t>(block);
  BALLAST_ASSIGN_OR_RETURN(matmul.seed, RequireUint(node, "matmul", "seed"));
  return matmul;
}

StatusOr<ExecSpec> ExecFromJson(const json& node) {
  BALLAST_RETURN_IF_ERROR(ExpectObject(node, "exec", {"command", "perItem", "retries", "image"}));
  ExecSpec exec;
  auto command = node.find("command");
  if (command == node.end() || !command->is_array()) {
    return Status::Invalid("exec.command: expected an array of strings");
  }
  for (const json& word : *command) {
    if (!word.is_string()) return Status::Invalid("exec.command: expected an array of strings");
    exec.command.push_back(word.get<std::string>());
  }
  auto per_item = node.find("perItem");
  if (per_item == node.end() || !per_item->is_boolean()) {
    return Status::Invalid("exec.perItem: expected a boolean");
  }
  exec.per_item = per_item->get<bool>();
  BALLAST_ASSIGN_OR_RETURN(uint64_t retries, RequireUint(node, "exec", "retries"));
  if (retries > 100) return Status::Invalid("exec.retries: expected at most 100");
  exec.retries = static_cast<uint32_t>(retries);
  BALLAST_ASSIGN_OR_RETURN(exec.image, RequireString(node, "exec", "image"));
  return exec;
}

}  // namespace

json WorkloadToJson(const WorkloadSpec& spec) {
  json out = json::object();
  switch (spec.kind) {
    case WorkloadKind::kPrimes:
      out["primes"] = {
          {"limit", spec.primes.limit},
          {"method", spec.primes.method == PrimesSpec::Method::kTrial ? "trial" : "sieve"},
          {"checksum", spec.primes.checksum}};
      break;
    case WorkloadKind::kMatmul:
      out["matmul"] = {
          {"size", spec.matmul.n}, {"block", spec.matmul.block}, {"seed", spec.matmul.seed}};
      break;
    case WorkloadKind::kExec:
      out["exec"] = {{"command", spec.exec.command},
                     {"perItem", spec.exec.per_item},
                     {"retries", spec.exec.retries},
                     {"image", spec.exec.image}};
      break;
  }
  out["items"] = spec.items;
  out["costModel"] = balance::CostShapeName(spec.cost);
  return out;
}

StatusOr<WorkloadSpec> WorkloadFromJson(const json& node) {
  if (!node.is_object()) return Status::Invalid("workload: expected a JSON object");
  WorkloadSpec spec;
  int members = 0;
  for (const auto& [key, value] : node.items()) {
    if (key == "items" || key == "costModel") continue;
    ++members;
    if (key == "primes") {
      spec.kind = WorkloadKind::kPrimes;
      BALLAST_ASSIGN_OR_RETURN(spec.primes, PrimesFromJson(value));
    } else if (key == "matmul") {
      spec.kind = WorkloadKind::kMatmul;
      BALLAST_ASSIGN_OR_RETURN(spec.matmul, MatmulFromJson(value));
    } else if (key == "exec") {
      spec.kind = WorkloadKind::kExec;
      BALLAST_ASSIGN_OR_RETURN(spec.exec, ExecFromJson(value));
    } else {
      return Status::Invalid(fmt::format(
          "workload: unknown key '{}' (allowed: primes, matmul, exec, items, costModel)", key));
    }
  }
  if (members != 1) {
    return Status::Invalid(
        fmt::format("workload: expected exactly one of primes, matmul, exec, got {}", members));
  }
  BALLAST_ASSIGN_OR_RETURN(spec.items, RequireUint(node, "workload", "items"));
  BALLAST_ASSIGN_OR_RETURN(std::string cost, RequireString(node, "workload", "costModel"));
  auto shape = balance::ParseCostShape(cost);
  if (!shape) {
    return Status::Invalid(
        fmt::format("workload.costModel: expected uniform, linear or sqrt, got '{}'", cost));
  }
  spec.cost = *shape;
  BALLAST_RETURN_IF_ERROR(ValidateWorkload(spec));
  return spec;
}

}  // namespace ballast::workload
