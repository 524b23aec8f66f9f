// ParseWorkload: the YAML form of a WorkloadSpec, read through YamlNode.
#include <fmt/format.h>

#include "core/config/yaml_node.h"
#include "core/workload/workload.h"

namespace ballast::workload {
namespace {

using config::ReadOr;
using config::YamlNode;

Status ParsePrimes(const YamlNode& node, PrimesSpec* primes) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"limit", "method", "checksum"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode limit, node.Require("limit"));
  BALLAST_ASSIGN_OR_RETURN(int64_t value, limit.AsInt(2, static_cast<int64_t>(kMaxPrimesLimit)));
  primes->limit = static_cast<uint64_t>(value);
  if (auto method = node.Get("method")) {
    BALLAST_ASSIGN_OR_RETURN(std::string name, method->AsString());
    if (name == "trial") {
      primes->method = PrimesSpec::Method::kTrial;
    } else if (name == "sieve") {
      primes->method = PrimesSpec::Method::kSieve;
    } else {
      return method->Error("trial or sieve");
    }
  }
  BALLAST_ASSIGN_OR_RETURN(primes->checksum,
                           ReadOr(node, "checksum", primes->checksum, &YamlNode::AsBool));
  return Status::Ok();
}

Status ParseMatmul(const YamlNode& node, MatmulSpec* matmul) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"size", "block", "seed"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode n, node.Require("size"));
  BALLAST_ASSIGN_OR_RETURN(int64_t size, n.AsInt(1, kMaxMatmulN));
  matmul->n = static_cast<uint32_t>(size);
  BALLAST_ASSIGN_OR_RETURN(YamlNode block, node.Require("block"));
  BALLAST_ASSIGN_OR_RETURN(int64_t width, block.AsInt(1, kMaxMatmulN));
  if (size % width != 0) return block.Error(fmt::format("a divisor of size = {}", size));
  matmul->block = static_cast<uint32_t>(width);
  if (auto seed = node.Get("seed")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, seed->AsInt(0));
    matmul->seed = static_cast<uint64_t>(value);
  }
  return Status::Ok();
}

Status ParseExec(const YamlNode& node, ExecSpec* exec) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"command", "perItem", "retries", "image"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode command, node.Require("command"));
  if (!command.IsSequence() || command.Elements().empty()) {
    return command.Error("a non-empty list of strings, e.g. [\"sh\", \"-c\", \"...\"]");
  }
  for (const YamlNode& word : command.Elements()) {
    if (!word.IsScalar()) return word.Error("a string");
    BALLAST_ASSIGN_OR_RETURN(std::string text, word.AsString());
    exec->command.push_back(std::move(text));
  }
  if (exec->command[0].empty()) return command.Elements()[0].Error("a program name");
  BALLAST_ASSIGN_OR_RETURN(exec->per_item, ReadOr(node, "perItem", false, &YamlNode::AsBool));
  if (auto retries = node.Get("retries")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, retries->AsInt(0, 100));
    exec->retries = static_cast<uint32_t>(count);
  }
  if (auto image = node.Get("image")) {
    BALLAST_ASSIGN_OR_RETURN(exec->image, image->AsString());
  }
  return Status::Ok();
}

}  // namespace

StatusOr<WorkloadSpec> ParseWorkload(const YamlNode& workload, std::optional<uint64_t> items) {
  BALLAST_RETURN_IF_ERROR(workload.ExpectMap({"primes", "matmul", "exec"}));
  const auto entries = workload.Entries();
  if (entries.empty())
    return workload.Fail("expected exactly one of primes, matmul, exec, got none");
  if (entries.size() > 1) {
    return entries[1].second.Fail(
        fmt::format("expected exactly one of primes, matmul, exec, got {} as well as {}",
                    entries[1].first, entries[0].first));
  }
  const auto& [name, member] = entries[0];
  if (!member.IsMap()) return member.Error(fmt::format("a map of {} settings", name));
  WorkloadSpec spec;
  if (name == "primes") {
    spec.kind = WorkloadKind::kPrimes;
    BALLAST_RETURN_IF_ERROR(ParsePrimes(member, &spec.primes));
  } else if (name == "matmul") {
    spec.kind = WorkloadKind::kMatmul;
    BALLAST_RETURN_IF_ERROR(ParseMatmul(member, &spec.matmul));
  } else {
    spec.kind = WorkloadKind::kExec;
    BALLAST_RETURN_IF_ERROR(ParseExec(member, &spec.exec));
    if (!items) return member.Fail("exec needs the job's top-level items: (how many to run)");
  }
  spec.items = items ? *items : DefaultItems(spec);
  spec.cost = DefaultCost(spec);
  // What is left to check concerns the job's items against the workload; the
  // items: key is not in this node, so the workload member carries the line.
  Status valid = ValidateWorkload(spec);
  if (!valid.ok()) return member.Fail(valid.message());
  return spec;
}

}  // namespace ballast::workload
