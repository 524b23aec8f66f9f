// Reading and merging the results exec commands hand back (workload/user_result.h).
#include "core/workload/user_result.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/common/bounded_json.h"
#include "core/common/json_read.h"
#include "core/common/utf8.h"

namespace ballast::workload {
namespace {

using json = nlohmann::json;
namespace jr = json_read;

// Whole numbers a `sum` takes from a file: exact in a double, so any reader
// of the file (Python, jq, JavaScript) meant the number we read.
constexpr int64_t kMaxSummand = int64_t{1} << 53;

bool EntryBefore(const ListEntry& a, const ListEntry& b) {
  return a.item != b.item ? a.item < b.item : a.index < b.index;
}

void AddSum(FieldTotal& into, int64_t value, bool overflowed) {
  // Past 64 bits the sum stays at the bound it crossed, marked overflowed.
  int64_t sum = 0;
  if (__builtin_add_overflow(into.sum, value, &sum)) {
    into.overflowed = true;
    into.sum = value > 0 ? INT64_MAX : INT64_MIN;
  } else {
    into.sum = sum;
  }
  into.overflowed = into.overflowed || overflowed;
}

void AddExtreme(FieldTotal& into, double value, uint64_t count) {
  if (count == 0) return;
  const bool better = into.rule == MergeRule::kMin ? value < into.extreme : value > into.extreme;
  if (into.count == 0 || better) into.extreme = value;
  into.count += count;
}

void AddEntries(FieldTotal& into, const std::vector<ListEntry>& entries, uint64_t count) {
  std::vector<ListEntry> merged;
  merged.reserve(into.kept.size() + entries.size());
  std::merge(into.kept.begin(), into.kept.end(), entries.begin(), entries.end(),
             std::back_inserter(merged), EntryBefore);
  if (merged.size() > into.limit) merged.resize(into.limit);
  into.kept = std::move(merged);
  into.count += count;
}

// A whole number a `sum` may take, or Invalid.
StatusOr<int64_t> Summand(const json& value, std::string_view path) {
  if (value.is_number_float()) {
    return Status::Invalid(fmt::format(
        "{}: `sum` adds whole numbers (exact in any order), got {}; count in smaller units "
        "(bytes, milliseconds) or use min, max or list",
        path, jr::Shown(value)));
  }
  return jr::Int(value, path, -kMaxSummand, kMaxSummand);
}

// A number `min` or `max` keeps: a double, so a whole number only while a
// double holds it exactly (|n| <= 2^53: 2^53 + 1 would become 2^53).
StatusOr<double> Number(const json& value, std::string_view path) {
  if (!value.is_number()) return jr::Expected(path, "a number", value);
  bool exact = true;
  if (value.is_number_unsigned()) {
    exact = value.get<uint64_t>() <= uint64_t{kMaxSummand};
  } else if (value.is_number_integer()) {
    const int64_t n = value.get<int64_t>();
    exact = n >= -kMaxSummand && n <= kMaxSummand;
  }
  if (!exact) {
    return Status::Invalid(fmt::format(
        "{}: `min` and `max` keep numbers as doubles, exact for whole numbers up to 2^53 "
        "({}), got {}; write it as a string in a `list` field, or in larger units",
        path, kMaxSummand, value.dump()));
  }
  return value.get<double>();
}

StatusOr<ListEntry> Entry(const json& value, uint64_t item, uint32_t index, std::string_view path) {
  std::string text = DumpJson(value);
  if (text.size() > kMaxListEntryBytes) {
    return Status::Invalid(fmt::format(
        "{}: a list entry is {} bytes of JSON, more than {}; write large outputs to a volume and "
        "list their names",
        path, text.size(), kMaxListEntryBytes));
  }
  return ListEntry{item, index, std::move(text)};
}

// The value `value` of field `name` under `rule` into a fresh total.
StatusOr<FieldTotal> ReadValue(const json& value, MergeRule rule, uint32_t limit,
                               uint64_t first_item, std::string_view path) {
  FieldTotal total;
  total.rule = rule;
  switch (rule) {
    case MergeRule::kSum: {
      BALLAST_ASSIGN_OR_RETURN(total.sum, Summand(value, path));
      break;
    }
    case MergeRule::kMin:
    case MergeRule::kMax: {
      BALLAST_ASSIGN_OR_RETURN(total.extreme, Number(value, path));
      total.count = 1;
      break;
    }
    case MergeRule::kList: {
      total.limit = limit;
      const bool many = value.is_array();
      const size_t size = many ? value.size() : 1;
      for (size_t i = 0; i < size; ++i) {
        const json& one = many ? value[i] : value;
        BALLAST_ASSIGN_OR_RETURN(ListEntry entry, Entry(one, first_item, static_cast<uint32_t>(i),
                                                        many ? jr::Element(path, i) : path));
        if (total.kept.size() < limit) total.kept.push_back(std::move(entry));
      }
      total.count = size;
      break;
    }
  }
  return total;
}

}  // namespace

const char* MergeRuleName(MergeRule rule) {
  switch (rule) {
    case MergeRule::kSum:
      return "sum";
    case MergeRule::kMin:
      return "min";
    case MergeRule::kMax:
      return "max";
    case MergeRule::kList:
      break;
  }
  return "list";
}

std::optional<MergeRule> ParseMergeRule(std::string_view name) {
  for (MergeRule rule : {MergeRule::kSum, MergeRule::kMin, MergeRule::kMax, MergeRule::kList}) {
    if (name == MergeRuleName(rule)) return rule;
  }
  return std::nullopt;
}

void MergeFields(UserFields& into, const UserFields& other) {
  for (const auto& [name, theirs] : other) {
    auto [it, added] = into.try_emplace(name, theirs);
    if (added) continue;
    FieldTotal& mine = it->second;
    switch (mine.rule) {
      case MergeRule::kSum:
        AddSum(mine, theirs.sum, theirs.overflowed);
        break;
      case MergeRule::kMin:
      case MergeRule::kMax:
        AddExtreme(mine, theirs.extreme, theirs.count);
        break;
      case MergeRule::kList:
        AddEntries(mine, theirs.kept, theirs.count);
        break;
    }
  }
}

namespace {

// The entries of a result file's failedItems (kFailedItemsKey) at `path`.
StatusOr<std::vector<std::pair<uint64_t, std::string>>> ReadFailedItems(const json& node,
                                                                        balance::Range items,
                                                                        const std::string& path) {
  const std::string expected = fmt::format(
      "a list of the run's items ({} to {}), each a number or {{\"item\": n, "
      "\"error\": \"...\"}}",
      items.begin, items.end - 1);
  if (!node.is_array() || node.size() > items.size()) return jr::Expected(path, expected, node);
  std::vector<std::pair<uint64_t, std::string>> failed;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string at = jr::Element(path, i);
    const json* item = &node[i];
    std::string error;
    if (node[i].is_object()) {
      BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node[i], at, {"item", "error"}));
      BALLAST_ASSIGN_OR_RETURN(item, jr::Require(node[i], at, "item"));
      if (const json* text = jr::Find(node[i], "error")) {
        BALLAST_ASSIGN_OR_RETURN(error, jr::String(*text, jr::Field(at, "error")));
        if (error.size() > kMaxItemErrorBytes) {
          return Status::Invalid(fmt::format("{}: an error of at most {} bytes, got {}",
                                             jr::Field(at, "error"), kMaxItemErrorBytes,
                                             error.size()));
        }
      }
    }
    if (!item->is_number_unsigned() || item->get<uint64_t>() < items.begin ||
        item->get<uint64_t>() >= items.end) {
      return jr::Expected(
          at, fmt::format("an item of the run, {} to {}", items.begin, items.end - 1), *item);
    }
    failed.emplace_back(item->get<uint64_t>(), std::move(error));
  }
  std::sort(failed.begin(), failed.end());
  for (size_t i = 1; i < failed.size(); ++i) {
    if (failed[i].first == failed[i - 1].first) {
      return Status::Invalid(fmt::format("{}: item {} is named twice", path, failed[i].first));
    }
  }
  return failed;
}

}  // namespace

StatusOr<HandedBack> ReadResultFile(std::string_view text, const ResultSpec& spec,
                                    balance::Range items, std::string_view where) {
  const uint64_t first_item = items.begin;
  if (text.size() > spec.max_bytes) {
    return Status::Invalid(fmt::format(
        "{}: {} bytes, more than the job's result.maxBytes {}; write large outputs to a volume",
        where, text.size(), spec.max_bytes));
  }
  BALLAST_ASSIGN_OR_RETURN(json root, ParseBoundedJson(text, where, {spec.max_bytes, 16}));
  if (!root.is_object()) return jr::Expected(where, "a JSON object", root);
  HandedBack back;
  UserFields& fields = back.fields;
  for (const auto& [name, value] : root.items()) {
    const std::string path = fmt::format("{}: {}", where, jr::Cut(name));
    if (name == kFailedItemsKey) {
      BALLAST_ASSIGN_OR_RETURN(back.failed, ReadFailedItems(value, items, path));
      continue;
    }
    const auto rule = spec.merge.find(name);
    if (rule == spec.merge.end()) {
      std::vector<std::string> declared;
      for (const auto& [known, unused] : spec.merge) declared.push_back(known);
      return Status::Invalid(
          fmt::format("{}: a field the job's result.merge does not declare "
                      "(declared: {})",
                      path, fmt::join(declared, ", ")));
    }
    BALLAST_ASSIGN_OR_RETURN(fields[name],
                             ReadValue(value, rule->second, spec.list_limit, first_item, path));
  }
  return back;
}

Status CheckFields(const UserFields& fields, const ResultSpec& spec) {
  for (const auto& [name, total] : fields) {
    const std::string path = jr::Field("fields", name);
    const auto rule = spec.merge.find(name);
    if (rule == spec.merge.end()) {
      return Status::Invalid(fmt::format("{}: not declared in the job's result.merge", path));
    }
    if (rule->second != total.rule) {
      return Status::Invalid(fmt::format("{}: merged by {}, the job declares {}", path,
                                         MergeRuleName(total.rule), MergeRuleName(rule->second)));
    }
    if (total.rule == MergeRule::kList) {
      if (total.limit != spec.list_limit || total.kept.size() > total.limit ||
          total.kept.size() > total.count) {
        return Status::Invalid(
            fmt::format("{}: {} entries kept of {}, limit {}; the job's listLimit is {}", path,
                        total.kept.size(), total.count, total.limit, spec.list_limit));
      }
      if (!std::is_sorted(total.kept.begin(), total.kept.end(), EntryBefore)) {
        return Status::Invalid(fmt::format("{}: entries not in item order", path));
      }
    }
  }
  return Status::Ok();
}

json FieldsToJson(const UserFields& fields) {
  json out = json::object();
  for (const auto& [name, total] : fields) {
    json& field = out[name];
    switch (total.rule) {
      case MergeRule::kSum:
        field = {{"sum", total.sum}};
        if (total.overflowed) field["overflowed"] = true;
        break;
      case MergeRule::kMin:
      case MergeRule::kMax:
        field = {{MergeRuleName(total.rule), total.extreme}, {"count", total.count}};
        break;
      case MergeRule::kList: {
        json entries = json::array();
        for (const ListEntry& entry : total.kept) {
          // The text was dumped from a parsed value, so it parses.
          entries.push_back({entry.item, entry.index, json::parse(entry.json, nullptr, false)});
        }
        field = {{"list", std::move(entries)}, {"count", total.count}, {"limit", total.limit}};
        break;
      }
    }
  }
  return out;
}

namespace {

// {"sum": n, "overflowed": bool}
Status SumFromJson(const json& value, const std::string& path, FieldTotal& total) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(value, path, {"sum", "overflowed"}));
  BALLAST_ASSIGN_OR_RETURN(const json* sum, jr::Require(value, path, "sum"));
  BALLAST_ASSIGN_OR_RETURN(total.sum, jr::Int(*sum, jr::Field(path, "sum"), INT64_MIN));
  if (const json* overflowed = jr::Find(value, "overflowed")) {
    BALLAST_ASSIGN_OR_RETURN(total.overflowed,
                             jr::Bool(*overflowed, jr::Field(path, "overflowed")));
  }
  return Status::Ok();
}

// {"min" or "max": x, "count": n}
Status ExtremeFromJson(const json& value, const std::string& path, FieldTotal& total) {
  const char* key = MergeRuleName(total.rule);
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(value, path, {key, "count"}));
  BALLAST_ASSIGN_OR_RETURN(const json* extreme, jr::Require(value, path, key));
  BALLAST_ASSIGN_OR_RETURN(total.extreme, Number(*extreme, jr::Field(path, key)));
  BALLAST_ASSIGN_OR_RETURN(const json* count, jr::Require(value, path, "count"));
  BALLAST_ASSIGN_OR_RETURN(int64_t n, jr::Int(*count, jr::Field(path, "count"), 1));
  total.count = static_cast<uint64_t>(n);
  return Status::Ok();
}

// {"list": [[item, index, value], ...], "count": n, "limit": l}
Status ListFromJson(const json& value, const std::string& path, FieldTotal& total) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(value, path, {"list", "count", "limit"}));
  BALLAST_ASSIGN_OR_RETURN(const json* entries, jr::Require(value, path, "list"));
  const std::string list_path = jr::Field(path, "list");
  if (!entries->is_array() || entries->size() > kMaxListLimit) {
    return jr::Expected(list_path, fmt::format("a list of at most {} entries", kMaxListLimit),
                        *entries);
  }
  for (size_t i = 0; i < entries->size(); ++i) {
    const json& entry = (*entries)[i];
    const std::string entry_path = jr::Element(list_path, i);
    if (!entry.is_array() || entry.size() != 3) {
      return jr::Expected(entry_path, "[item, index, value]", entry);
    }
    BALLAST_ASSIGN_OR_RETURN(int64_t item, jr::Int(entry[0], entry_path, 0));
    BALLAST_ASSIGN_OR_RETURN(int64_t index, jr::Int(entry[1], entry_path, 0, UINT32_MAX));
    BALLAST_ASSIGN_OR_RETURN(ListEntry read, Entry(entry[2], static_cast<uint64_t>(item),
                                                   static_cast<uint32_t>(index), entry_path));
    total.kept.push_back(std::move(read));
  }
  BALLAST_ASSIGN_OR_RETURN(const json* count, jr::Require(value, path, "count"));
  BALLAST_ASSIGN_OR_RETURN(int64_t n, jr::Int(*count, jr::Field(path, "count"), 0));
  BALLAST_ASSIGN_OR_RETURN(const json* limit, jr::Require(value, path, "limit"));
  BALLAST_ASSIGN_OR_RETURN(int64_t l, jr::Int(*limit, jr::Field(path, "limit"), 1, kMaxListLimit));
  total.count = static_cast<uint64_t>(n);
  total.limit = static_cast<uint32_t>(l);
  return Status::Ok();
}

}  // namespace

StatusOr<UserFields> FieldsFromJson(const json& node, std::string_view where) {
  if (!node.is_object()) return jr::Expected(where, "an object", node);
  if (node.size() > kMaxResultFields) {
    return Status::Invalid(
        fmt::format("{}: {} fields, more than {}", where, node.size(), kMaxResultFields));
  }
  UserFields fields;
  for (const auto& [name, value] : node.items()) {
    const std::string path = jr::Field(where, name);
    if (!value.is_object() || value.empty()) return jr::Expected(path, "an object", value);
    std::optional<MergeRule> rule;
    for (const auto& [key, unused] : value.items()) {
      if (auto named = ParseMergeRule(key)) rule = named;
    }
    if (!rule) return jr::Expected(path, "one of sum, min, max, list", value);
    FieldTotal total;
    total.rule = *rule;
    switch (*rule) {
      case MergeRule::kSum:
        BALLAST_RETURN_IF_ERROR(SumFromJson(value, path, total));
        break;
      case MergeRule::kMin:
      case MergeRule::kMax:
        BALLAST_RETURN_IF_ERROR(ExtremeFromJson(value, path, total));
        break;
      case MergeRule::kList:
        BALLAST_RETURN_IF_ERROR(ListFromJson(value, path, total));
        break;
    }
    fields[name] = std::move(total);
  }
  return fields;
}

std::string FieldsSummary(const UserFields& fields) {
  std::vector<std::string> parts;
  for (const auto& [name, total] : fields) {
    switch (total.rule) {
      case MergeRule::kSum:
        parts.push_back(
            fmt::format("{}={}{}", name, total.sum, total.overflowed ? " (overflowed)" : ""));
        break;
      case MergeRule::kMin:
      case MergeRule::kMax:
        parts.push_back(fmt::format("{}={}", name, total.extreme));
        break;
      case MergeRule::kList: {
        std::vector<std::string> shown;
        for (size_t i = 0; i < total.kept.size() && i < 3; ++i) {
          shown.push_back(jr::Cut(total.kept[i].json, 40));
        }
        if (total.count > shown.size()) shown.push_back("...");
        parts.push_back(fmt::format("{}=[{}] ({})", name, fmt::join(shown, ", "), total.count));
        break;
      }
    }
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace ballast::workload
