#include "core/fuzzy/history_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/common/bounded_json.h"
#include "core/common/json_read.h"
#include "core/common/names.h"
#include "core/common/utf8.h"

namespace ballast::fuzzy {
namespace {

namespace jr = json_read;

constexpr int64_t kMaxTime = int64_t{1} << 40;

StatusOr<HistoryRecord> ParseRecord(const nlohmann::json& value, const std::string& path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(value, path, {"node", "speed", "samples", "time", "spread"}));
  HistoryRecord record;
  BALLAST_ASSIGN_OR_RETURN(const nlohmann::json* node, jr::Require(value, path, "node"));
  BALLAST_ASSIGN_OR_RETURN(record.node, jr::String(*node, jr::Field(path, "node")));
  if (Status checked = CheckName(record.node, NameKind::kDnsSubdomain); !checked.ok()) {
    return Status::Invalid(fmt::format("{}: {}", jr::Field(path, "node"), checked.message()));
  }
  BALLAST_ASSIGN_OR_RETURN(const nlohmann::json* speed, jr::Require(value, path, "speed"));
  BALLAST_ASSIGN_OR_RETURN(record.speed,
                           jr::Positive(*speed, jr::Field(path, "speed"), kMaxHistorySpeed));
  BALLAST_ASSIGN_OR_RETURN(const nlohmann::json* samples, jr::Require(value, path, "samples"));
  BALLAST_ASSIGN_OR_RETURN(record.samples,
                           jr::Positive(*samples, jr::Field(path, "samples"), kMaxHistorySamples));
  BALLAST_ASSIGN_OR_RETURN(const nlohmann::json* time, jr::Require(value, path, "time"));
  BALLAST_ASSIGN_OR_RETURN(record.time, jr::Int(*time, jr::Field(path, "time"), 0, kMaxTime));
  if (const nlohmann::json* spread = jr::Find(value, "spread")) {
    const bool number = spread->is_number() && std::isfinite(spread->get<double>()) &&
                        spread->get<double>() >= 0 && spread->get<double>() <= 1e6;
    if (!number) return jr::Expected(jr::Field(path, "spread"), "a number in [0, 1e6]", *spread);
    record.spread = spread->get<double>();
  }
  return record;
}

StatusOr<std::vector<HistoryRecord>> ParseRecords(const nlohmann::json& value,
                                                  const std::string& path) {
  if (!value.is_array()) return jr::Expected(path, "an array of node records", value);
  if (value.size() > kMaxHistoryNodes) {
    return Status::Invalid(fmt::format("{}: more than {} nodes", path, kMaxHistoryNodes));
  }
  std::vector<HistoryRecord> records;
  std::set<std::string> seen;
  for (size_t i = 0; i < value.size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(HistoryRecord record, ParseRecord(value[i], jr::Element(path, i)));
    if (!seen.insert(record.node).second) {
      return Status::Invalid(
          fmt::format("{}: node {} listed twice", jr::Element(path, i), record.node));
    }
    records.push_back(std::move(record));
  }
  return records;
}

StatusOr<HistoryFile> ParseDocument(const nlohmann::json& root) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(root, "", {"version", "workloads"}));
  BALLAST_ASSIGN_OR_RETURN(const nlohmann::json* version, jr::Require(root, "", "version"));
  BALLAST_RETURN_IF_ERROR(jr::Int(*version, "version", 1, 1).status());
  HistoryFile file;
  const nlohmann::json* workloads = jr::Find(root, "workloads");
  if (!workloads) return file;
  if (!workloads->is_object()) return jr::Expected("workloads", "an object", *workloads);
  if (workloads->size() > kMaxHistoryWorkloads) {
    return Status::Invalid(fmt::format("workloads: more than {}", kMaxHistoryWorkloads));
  }
  for (const auto& [kind, records] : workloads->items()) {
    BALLAST_ASSIGN_OR_RETURN(file.workloads[kind],
                             ParseRecords(records, jr::Field("workloads", kind)));
  }
  return file;
}

}  // namespace

StatusOr<HistoryFile> ParseHistoryFile(std::string_view text, std::string_view file_name) {
  JsonLimits limits;
  limits.max_bytes = kMaxHistoryBytes;
  limits.max_depth = 8;
  BALLAST_ASSIGN_OR_RETURN(nlohmann::json root, ParseBoundedJson(text, file_name, limits));
  auto parsed = ParseDocument(root);
  if (!parsed.ok()) {
    return Status::Invalid(fmt::format("{}: {}", file_name, parsed.status().message()));
  }
  return parsed;
}

std::string FormatHistoryFile(const HistoryFile& file) {
  nlohmann::ordered_json workloads = nlohmann::ordered_json::object();
  for (const auto& [kind, records] : file.workloads) {
    std::map<std::string, const HistoryRecord*> sorted;
    for (const HistoryRecord& record : records) sorted[record.node] = &record;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const auto& [node, record] : sorted) {
      list.push_back({{"node", node},
                      {"speed", record->speed},
                      {"samples", record->samples},
                      {"time", record->time},
                      {"spread", record->spread}});
    }
    workloads[kind] = std::move(list);
  }
  nlohmann::ordered_json out;
  out["version"] = 1;
  out["workloads"] = std::move(workloads);
  return DumpJson(out, 2) + "\n";
}

std::vector<NodeHistory> HistoryAt(const std::vector<HistoryRecord>& records, int64_t now) {
  std::vector<NodeHistory> history;
  for (const HistoryRecord& record : records) {
    history.push_back({record.node, record.speed, record.samples,
                       static_cast<double>(now - record.time), record.spread});
  }
  return history;
}

std::vector<HistoryRecord> RecordsAt(const std::vector<NodeHistory>& history, int64_t now) {
  std::vector<HistoryRecord> records;
  for (const NodeHistory& h : history) {
    const double age = std::isfinite(h.age_seconds) ? std::max(0.0, h.age_seconds) : 0;
    const int64_t time = std::clamp<int64_t>(now - static_cast<int64_t>(age), 0, kMaxTime);
    const double spread = std::isfinite(h.spread) ? std::clamp(h.spread, 0.0, 1e6) : 0;
    records.push_back({h.node, std::min(h.speed, kMaxHistorySpeed),
                       std::min(h.samples, kMaxHistorySamples), time, spread});
  }
  return records;
}

}  // namespace ballast::fuzzy
