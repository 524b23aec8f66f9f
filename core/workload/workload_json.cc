// The JSON forms of a WorkloadSpec: the `workload` of a job (its tree, from a
// file or the API server) and the message the coordinator sends workers,
// read by the same member readers with common/json_read.h, so nothing throws
// and every error names its path.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/workload/workload.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;
namespace jr = json_read;

StatusOr<PrimesSpec> ReadPrimes(const json& node, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"limit", "method", "checksum"}));
  PrimesSpec primes;
  BALLAST_ASSIGN_OR_RETURN(const json* limit, jr::Require(node, path, "limit"));
  BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*limit, jr::Field(path, "limit"), 2,
                                                  static_cast<int64_t>(kMaxPrimesLimit)));
  primes.limit = static_cast<uint64_t>(value);
  if (const json* method = jr::Find(node, "method")) {
    if (*method == "trial") {
      primes.method = PrimesSpec::Method::kTrial;
    } else if (*method == "sieve") {
      primes.method = PrimesSpec::Method::kSieve;
    } else {
      return jr::Expected(jr::Field(path, "method"), "\"trial\" or \"sieve\"", *method);
    }
  }
  if (const json* checksum = jr::Find(node, "checksum")) {
    BALLAST_ASSIGN_OR_RETURN(primes.checksum, jr::Bool(*checksum, jr::Field(path, "checksum")));
  }
  return primes;
}

StatusOr<MatmulSpec> ReadMatmul(const json& node, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"size", "block", "seed"}));
  BALLAST_ASSIGN_OR_RETURN(const json* size_node, jr::Require(node, path, "size"));
  BALLAST_ASSIGN_OR_RETURN(int64_t size,
                           jr::Int(*size_node, jr::Field(path, "size"), 1, kMaxMatmulN));
  BALLAST_ASSIGN_OR_RETURN(const json* block_node, jr::Require(node, path, "block"));
  BALLAST_ASSIGN_OR_RETURN(int64_t block,
                           jr::Int(*block_node, jr::Field(path, "block"), 1, kMaxMatmulN));
  if (size % block != 0) {
    return jr::Expected(jr::Field(path, "block"), fmt::format("a divisor of size = {}", size),
                        *block_node);
  }
  MatmulSpec matmul;
  matmul.n = static_cast<uint32_t>(size);
  matmul.block = static_cast<uint32_t>(block);
  if (const json* seed = jr::Find(node, "seed")) {
    // Any 64-bit seed: the coordinator sends what WorkloadToJson wrote.
    if (seed->is_number_unsigned()) {
      matmul.seed = seed->get<uint64_t>();
    } else {
      BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*seed, jr::Field(path, "seed"), 0));
      matmul.seed = static_cast<uint64_t>(value);
    }
  }
  return matmul;
}

StatusOr<ExecSpec> ReadExec(const json& node, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"command", "perItem", "retries", "image"}));
  ExecSpec exec;
  BALLAST_ASSIGN_OR_RETURN(const json* command, jr::Require(node, path, "command"));
  const std::string command_path = jr::Field(path, "command");
  if (!command->is_array() || command->empty()) {
    return jr::Expected(command_path, "a non-empty list of strings, e.g. [\"sh\", \"-c\", \"...\"]",
                        *command);
  }
  for (size_t i = 0; i < command->size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(std::string word,
                             jr::String((*command)[i], jr::Element(command_path, i)));
    exec.command.push_back(std::move(word));
  }
  if (exec.command[0].empty()) {
    return jr::Expected(jr::Element(command_path, 0), "a program name", (*command)[0]);
  }
  if (const json* per_item = jr::Find(node, "perItem")) {
    BALLAST_ASSIGN_OR_RETURN(exec.per_item, jr::Bool(*per_item, jr::Field(path, "perItem")));
  }
  if (const json* retries = jr::Find(node, "retries")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*retries, jr::Field(path, "retries"), 0, 100));
    exec.retries = static_cast<uint32_t>(count);
  }
  if (const json* image = jr::Find(node, "image")) {
    BALLAST_ASSIGN_OR_RETURN(exec.image, jr::String(*image, jr::Field(path, "image")));
  }
  return exec;
}

// The one member of the union at `path` (primes, matmul or exec) into `spec`;
// `allowed` are every key the object may hold beside it.
Status ReadMember(const json& node, std::string_view path,
                  std::initializer_list<std::string_view> allowed, WorkloadSpec* spec) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, allowed));
  std::vector<std::string> members;
  for (const char* name : {"primes", "matmul", "exec"}) {
    if (jr::Find(node, name)) members.push_back(name);
  }
  if (members.size() != 1) {
    // The second member is where the mistake was written.
    const std::string at = members.size() > 1 ? jr::Field(path, members[1])
                           : path.empty()     ? std::string("workload")
                                              : std::string(path);
    return Status::Invalid(fmt::format(
        "{}: expected exactly one of primes, matmul, exec, got {}", at,
        members.empty() ? std::string("none") : fmt::format("{}", fmt::join(members, " and "))));
  }
  const std::string& name = members[0];
  const json& member = node.at(name);
  const std::string member_path = jr::Field(path, name);
  if (name == "primes") {
    spec->kind = WorkloadKind::kPrimes;
    BALLAST_ASSIGN_OR_RETURN(spec->primes, ReadPrimes(member, member_path));
  } else if (name == "matmul") {
    spec->kind = WorkloadKind::kMatmul;
    BALLAST_ASSIGN_OR_RETURN(spec->matmul, ReadMatmul(member, member_path));
  } else {
    spec->kind = WorkloadKind::kExec;
    BALLAST_ASSIGN_OR_RETURN(spec->exec, ReadExec(member, member_path));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<WorkloadSpec> WorkloadSpecFromJson(const json& workload, std::optional<uint64_t> items,
                                            std::string_view path) {
  WorkloadSpec spec;
  BALLAST_RETURN_IF_ERROR(ReadMember(workload, path, {"primes", "matmul", "exec"}, &spec));
  if (spec.kind == WorkloadKind::kExec && !items) {
    return Status::Invalid(
        fmt::format("{}: exec needs the job's items (how many to run)", jr::Field(path, "exec")));
  }
  spec.items = items ? *items : DefaultItems(spec);
  spec.cost = DefaultCost(spec);
  // What is left concerns the job's items against the workload; the items
  // are not in this object, so the message names the workload.
  Status valid = ValidateWorkload(spec);
  if (!valid.ok()) {
    return Status::Invalid(
        fmt::format("{}: {}", jr::Field(path, WorkloadKindName(spec.kind)), valid.message()));
  }
  return spec;
}

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
  const std::string path = "workload";
  WorkloadSpec spec;
  BALLAST_RETURN_IF_ERROR(
      ReadMember(node, path, {"primes", "matmul", "exec", "items", "costModel"}, &spec));
  BALLAST_ASSIGN_OR_RETURN(const json* items, jr::Require(node, path, "items"));
  if (items->is_number_unsigned()) {
    spec.items = items->get<uint64_t>();
  } else {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*items, jr::Field(path, "items"), 1));
    spec.items = static_cast<uint64_t>(count);
  }
  BALLAST_ASSIGN_OR_RETURN(const json* cost, jr::Require(node, path, "costModel"));
  const auto shape =
      cost->is_string() ? balance::ParseCostShape(cost->get<std::string>()) : std::nullopt;
  if (!shape) {
    return jr::Expected(jr::Field(path, "costModel"), "\"uniform\", \"linear\" or \"sqrt\"", *cost);
  }
  spec.cost = *shape;
  BALLAST_RETURN_IF_ERROR(ValidateWorkload(spec));
  return spec;
}

}  // namespace ballast::workload
