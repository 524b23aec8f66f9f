// The JSON forms of a WorkloadSpec: the `workload` of a job (its tree, from a
// file or the API server) and the message the coordinator sends workers,
// read by the same member readers with common/json_read.h, so nothing throws
// and every error names its path.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/common/json_read.h"
#include "core/config/document.h"
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

// The most bytes of a result field's name (a JSON key the command writes).
constexpr size_t kMaxFieldNameBytes = 64;
// keepDir: an absolute path, as a mount path is.
constexpr size_t kMaxKeepDirBytes = 1024;

// Whether go-yaml v2, kubectl's reader, takes `name` written as a plain
// key for a number: what config::ResolvePlainScalar reads as one, after
// the underscores it drops (1_000), or a binary 0b101. kubectl then sends
// the key as that number's decimal text ("0x10" arrives as "16").
bool YamlReadsAsNumber(std::string_view name) {
  if (name.empty() || std::string_view("+-.0123456789").find(name[0]) == std::string_view::npos) {
    return false;
  }
  std::string plain;
  for (char c : name) {
    if (c != '_') plain.push_back(c);
  }
  const std::string_view digits =
      plain.starts_with('-') || plain.starts_with('+') ? std::string_view(plain).substr(1) : plain;
  if (digits.size() > 2 && digits.starts_with("0b") &&
      digits.find_first_not_of("01", 2) == std::string_view::npos) {
    return true;
  }
  return !plain.empty() && config::ResolvePlainScalar(plain).is_number();
}

StatusOr<std::map<std::string, MergeRule>> ReadMerge(const json& node, std::string_view path) {
  if (!node.is_object() || node.empty() || node.size() > kMaxResultFields) {
    return jr::Expected(
        path, fmt::format("a map of 1 to {} fields, each sum, min, max or list", kMaxResultFields),
        node);
  }
  std::map<std::string, MergeRule> merge;
  for (const auto& [name, rule] : node.items()) {
    const std::string field_path = jr::Field(path, name);
    if (name.empty() || name.size() > kMaxFieldNameBytes) {
      return Status::InvalidAt(field_path,
                               fmt::format("a field's name is 1 to {} bytes", kMaxFieldNameBytes));
    }
    if (name == kFailedItemsKey) {
      return Status::InvalidAt(
          field_path,
          fmt::format("{} is reserved: a result file names the run's failed items with it",
                      kFailedItemsKey));
    }
    // kubectl (YAML 1.1) sends an unquoted y, n, yes, no, on, off, true or
    // false as "true" or "false", and so does `ballast run` (config/document.h):
    // a command writing {"n": ...} would then match no field.
    if (name == "true" || name == "false") {
      return Status::InvalidAt(
          field_path,
          fmt::format("a field named {} is what YAML makes of an unquoted {}; quote the name "
                      "(\"n\": sum) or choose another",
                      name, name == "true" ? "y, yes, on or true" : "n, no, off or false"));
    }
    // kubectl sends a plain 0x10, 017, 1e3, +1 or 1_000 as "16", "15",
    // "1000", "1", "1000", where `ballast run` would keep it as written: a
    // name that is a number means a different field to each, so neither
    // takes one (quoted or not: kubectl's "16" cannot tell).
    if (YamlReadsAsNumber(name)) {
      return Status::InvalidAt(
          field_path,
          fmt::format("a field named {} is a number to YAML, which kubectl sends as its decimal "
                      "text (0x10 as 16, 017 as 15, 1e3 and 1_000 as 1000), so `ballast run` "
                      "and the operator would name different fields; choose a name that is not "
                      "a number (count16)",
                      name));
    }
    const auto parsed = rule.is_string() ? ParseMergeRule(rule.get<std::string>()) : std::nullopt;
    if (!parsed) return jr::Expected(field_path, "sum, min, max or list", rule);
    merge[name] = *parsed;
  }
  return merge;
}

StatusOr<ResultSpec> ReadResult(const json& node, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(node, path, {"merge", "listLimit", "maxBytes", "keepDir"}));
  ResultSpec result;
  BALLAST_ASSIGN_OR_RETURN(const json* merge, jr::Require(node, path, "merge"));
  BALLAST_ASSIGN_OR_RETURN(result.merge, ReadMerge(*merge, jr::Field(path, "merge")));
  if (const json* limit = jr::Find(node, "listLimit")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value,
                             jr::Int(*limit, jr::Field(path, "listLimit"), 1, kMaxListLimit));
    result.list_limit = static_cast<uint32_t>(value);
  }
  if (const json* bytes = jr::Find(node, "maxBytes")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value,
                             jr::Int(*bytes, jr::Field(path, "maxBytes"), 2, kMaxResultBytes));
    result.max_bytes = static_cast<uint32_t>(value);
  }
  const auto lists = std::count_if(result.merge.begin(), result.merge.end(), [](const auto& field) {
    return field.second == MergeRule::kList;
  });
  if (lists * result.list_limit > kMaxListLimit) {
    return Status::InvalidAt(
        jr::Field(path, "listLimit"),
        fmt::format("{} list fields keeping {} entries each, more than {} in all (they go into the "
                    "job's status); lower listLimit and keep the rest with keepDir",
                    lists, result.list_limit, kMaxListLimit));
  }
  if (const json* keep = jr::Find(node, "keepDir")) {
    const std::string keep_path = jr::Field(path, "keepDir");
    BALLAST_ASSIGN_OR_RETURN(result.keep_dir, jr::String(*keep, keep_path));
    if (!result.keep_dir.starts_with('/') || result.keep_dir.size() > kMaxKeepDirBytes ||
        result.keep_dir.find('\0') != std::string::npos) {
      return jr::Expected(keep_path, "an absolute directory path (on the job's volume)", *keep);
    }
  }
  return result;
}

json ResultToJson(const ResultSpec& result) {
  json merge = json::object();
  for (const auto& [name, rule] : result.merge) merge[name] = MergeRuleName(rule);
  json out = {{"merge", std::move(merge)},
              {"listLimit", result.list_limit},
              {"maxBytes", result.max_bytes}};
  if (!result.keep_dir.empty()) out["keepDir"] = result.keep_dir;
  return out;
}

StatusOr<ExecSpec> ReadExec(const json& node, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
      node, path,
      {"command", "perItem", "serve", "retries", "concurrency", "backups", "image", "result"}));
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
  if (const json* serve = jr::Find(node, "serve")) {
    BALLAST_ASSIGN_OR_RETURN(exec.serve, jr::Bool(*serve, jr::Field(path, "serve")));
  }
  if (const json* retries = jr::Find(node, "retries")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*retries, jr::Field(path, "retries"), 0, 100));
    exec.retries = static_cast<uint32_t>(count);
  }
  if (const json* concurrency = jr::Find(node, "concurrency")) {
    BALLAST_ASSIGN_OR_RETURN(
        int64_t count, jr::Int(*concurrency, jr::Field(path, "concurrency"), 1, kMaxConcurrency));
    exec.concurrency = static_cast<uint32_t>(count);
  }
  if (const json* backups = jr::Find(node, "backups")) {
    BALLAST_ASSIGN_OR_RETURN(exec.backups, jr::Bool(*backups, jr::Field(path, "backups")));
  }
  if (const json* image = jr::Find(node, "image")) {
    BALLAST_ASSIGN_OR_RETURN(exec.image, jr::String(*image, jr::Field(path, "image")));
  }
  if (const json* result = jr::Find(node, "result")) {
    BALLAST_ASSIGN_OR_RETURN(exec.result, ReadResult(*result, jr::Field(path, "result")));
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
    return Status::InvalidAt(
        at, fmt::format("expected exactly one of primes, matmul, exec, got {}",
                        members.empty() ? std::string("none")
                                        : fmt::format("{}", fmt::join(members, " and "))));
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

// The `values` (and `costs`) a coordinator sent with the workload.
StatusOr<ItemList> ReadSentList(const json& node, std::string_view path) {
  BALLAST_ASSIGN_OR_RETURN(const json* values, jr::Require(node, path, "values"));
  const std::string values_path = jr::Field(path, "values");
  if (!values->is_array() || values->size() > kMaxListedItems) {
    return jr::Expected(values_path, fmt::format("a list of at most {} strings", kMaxListedItems),
                        *values);
  }
  ItemList list;
  for (size_t i = 0; i < values->size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(list.values.emplace_back(),
                             jr::String((*values)[i], jr::Element(values_path, i)));
  }
  if (const json* costs = jr::Find(node, "costs")) {
    const std::string costs_path = jr::Field(path, "costs");
    if (!costs->is_array() || costs->size() != values->size()) {
      return jr::Expected(costs_path, fmt::format("a list of {} costs", values->size()), *costs);
    }
    for (size_t i = 0; i < costs->size(); ++i) {
      BALLAST_ASSIGN_OR_RETURN(list.costs.emplace_back(),
                               jr::Positive((*costs)[i], jr::Element(costs_path, i), kMaxItemCost));
    }
  }
  return list;
}

}  // namespace

namespace {

// One entry of items.list: a value, or {value, cost}.
Status ReadListedItem(const json& entry, std::string_view path, ItemList* list, bool* costed) {
  if (entry.is_object()) {
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(entry, path, {"value", "cost"}));
    BALLAST_ASSIGN_OR_RETURN(const json* value, jr::Require(entry, path, "value"));
    BALLAST_ASSIGN_OR_RETURN(const json* cost, jr::Require(entry, path, "cost"));
    BALLAST_ASSIGN_OR_RETURN(list->values.emplace_back(),
                             jr::String(*value, jr::Field(path, "value")));
    BALLAST_ASSIGN_OR_RETURN(list->costs.emplace_back(),
                             jr::Positive(*cost, jr::Field(path, "cost"), kMaxItemCost));
    *costed = true;
    return Status::Ok();
  }
  if (!entry.is_string()) {
    return jr::Expected(path, "a string or {value, cost} (quote a value YAML reads as a number)",
                        entry);
  }
  list->values.push_back(entry.get<std::string>());
  list->costs.push_back(1);
  return Status::Ok();
}

}  // namespace

StatusOr<ItemList> InlineItemsFromJson(const json& node, std::string_view path) {
  if (!node.is_array() || node.empty() || node.size() > kMaxListedItems) {
    return jr::Expected(path, fmt::format("a list of 1 to {} items", kMaxListedItems), node);
  }
  ItemList list;
  bool costed = false;
  for (size_t i = 0; i < node.size(); ++i) {
    BALLAST_RETURN_IF_ERROR(ReadListedItem(node[i], jr::Element(path, i), &list, &costed));
  }
  if (!costed) list.costs.clear();
  return list;
}

StatusOr<WorkloadSpec> WorkloadSpecFromJson(const json& workload, std::optional<uint64_t> items,
                                            std::string_view path) {
  WorkloadSpec spec;
  BALLAST_RETURN_IF_ERROR(ReadMember(workload, path, {"primes", "matmul", "exec"}, &spec));
  if (spec.kind == WorkloadKind::kExec && !items) {
    return Status::InvalidAt(jr::Field(path, "exec"),
                             "exec needs the job's items (how many to run)");
  }
  spec.items = items ? *items : DefaultItems(spec);
  spec.cost = DefaultCost(spec);
  // What is left concerns the job's items against the workload; the items
  // are not in this object, so the message names the workload.
  Status valid = ValidateWorkload(spec);
  if (!valid.ok()) {
    return Status::InvalidAt(jr::Field(path, WorkloadKindName(spec.kind)), valid.message());
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
      if (spec.exec.concurrency > 0) out["exec"]["concurrency"] = spec.exec.concurrency;
      if (!spec.exec.backups) out["exec"]["backups"] = false;
      if (spec.exec.serve) out["exec"]["serve"] = true;
      if (!spec.exec.result.merge.empty()) out["exec"]["result"] = ResultToJson(spec.exec.result);
      break;
  }
  out["items"] = spec.items;
  out["costModel"] = balance::CostShapeName(spec.cost);
  if (spec.item_values != nullptr) out["values"] = *spec.item_values;
  if (spec.item_costs != nullptr) out["costs"] = *spec.item_costs;
  return out;
}

StatusOr<WorkloadSpec> WorkloadFromJson(const json& node) {
  const std::string path = "workload";
  WorkloadSpec spec;
  BALLAST_RETURN_IF_ERROR(ReadMember(
      node, path, {"primes", "matmul", "exec", "items", "costModel", "values", "costs"}, &spec));
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
  if (jr::Find(node, "values") || jr::Find(node, "costs")) {
    BALLAST_ASSIGN_OR_RETURN(ItemList list, ReadSentList(node, path));
    list.order = balance::ItemOrder::kListed;  // dealt by the coordinator already
    if (list.values.size() != spec.items) {
      return Status::InvalidAt(
          jr::Field(path, "values"),
          fmt::format("{} values for {} items", list.values.size(), spec.items));
    }
    BALLAST_RETURN_IF_ERROR(AttachItems(&spec, std::move(list), jr::Field(path, "values")));
  }
  BALLAST_RETURN_IF_ERROR(ValidateWorkload(spec));
  return spec;
}

}  // namespace ballast::workload
