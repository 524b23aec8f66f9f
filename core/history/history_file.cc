#include "core/history/history_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/common/bounded_json.h"
#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::history {
namespace {

using nlohmann::json;
namespace jr = json_read;

// One node's aggregate in a file of the earlier form.
struct OldRecord {
  std::string node;
  double speed = 0;  // on the scale of some job
  int64_t time = 0;  // Unix seconds of the newest sample
};

constexpr double kMaxOldSpeed = 1e300;
constexpr double kMaxOldSamples = 1e12;
constexpr int64_t kMaxOldTime = int64_t{1} << 40;
// A relative speed below this (a node 1e12 times slower than the others) is
// brought up to it: a sample is never 0.
constexpr double kMinRelativeSpeed = 1e-12;

// The fields of one record, checked as the earlier reader checked them;
// samples and spread are checked and dropped (a sample of the store is a job).
StatusOr<OldRecord> ReadOldRecord(const json& value, const std::string& path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(value, path, {"node", "speed", "samples", "time", "spread"}));
  OldRecord record;
  BALLAST_ASSIGN_OR_RETURN(const json* node, jr::Require(value, path, "node"));
  BALLAST_ASSIGN_OR_RETURN(record.node, jr::String(*node, jr::Field(path, "node")));
  if (Status checked = CheckName(record.node, NameKind::kDnsSubdomain); !checked.ok()) {
    return Status::Invalid(fmt::format("{}: {}", jr::Field(path, "node"), checked.message()));
  }
  BALLAST_ASSIGN_OR_RETURN(const json* speed, jr::Require(value, path, "speed"));
  BALLAST_ASSIGN_OR_RETURN(record.speed,
                           jr::Positive(*speed, jr::Field(path, "speed"), kMaxOldSpeed));
  BALLAST_ASSIGN_OR_RETURN(const json* samples, jr::Require(value, path, "samples"));
  BALLAST_RETURN_IF_ERROR(
      jr::Positive(*samples, jr::Field(path, "samples"), kMaxOldSamples).status());
  BALLAST_ASSIGN_OR_RETURN(const json* time, jr::Require(value, path, "time"));
  BALLAST_ASSIGN_OR_RETURN(record.time, jr::Int(*time, jr::Field(path, "time"), 0, kMaxOldTime));
  if (const json* spread = jr::Find(value, "spread")) {
    const bool number = spread->is_number() && std::isfinite(spread->get<double>()) &&
                        spread->get<double>() >= 0 && spread->get<double>() <= 1e6;
    if (!number) return jr::Expected(jr::Field(path, "spread"), "a number in [0, 1e6]", *spread);
  }
  return record;
}

StatusOr<std::vector<OldRecord>> ReadOldRecords(const json& value, const std::string& path) {
  if (!value.is_array()) return jr::Expected(path, "an array of node records", value);
  if (value.size() > kMaxOldFileNodes) {
    return Status::Invalid(fmt::format("{}: more than {} nodes", path, kMaxOldFileNodes));
  }
  std::vector<OldRecord> records;
  std::set<std::string> seen;
  for (size_t i = 0; i < value.size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(OldRecord record, ReadOldRecord(value[i], jr::Element(path, i)));
    if (!seen.insert(record.node).second) {
      return Status::Invalid(
          fmt::format("{}: node {} listed twice", jr::Element(path, i), record.node));
    }
    records.push_back(std::move(record));
  }
  return records;
}

// Each record of one workload as one sample under `key`: its speed relative
// to the mean of the workload's speeds, at its time. Nothing for fewer than
// two records.
void ConvertWorkload(const std::vector<OldRecord>& records, const std::string& key,
                     const StoreLimits& limits, SpeedStore& store) {
  if (records.size() < 2 || limits.samples_per_node == 0) return;
  double mean = 0;  // a sum of shares: finite for speeds up to 1e300
  for (const OldRecord& record : records)
    mean += record.speed / static_cast<double>(records.size());
  for (const OldRecord& record : records) {
    const double relative = std::clamp(record.speed / mean, kMinRelativeSpeed, kMaxRelativeSpeed);
    const double at = std::min(static_cast<double>(record.time), kMaxSampleTime);
    store.nodes[record.node][key] = {{relative, at}};
  }
}

StatusOr<SpeedStore> ReadOldForm(const json& root, const StoreLimits& limits) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(root, "", {"version", "workloads"}));
  BALLAST_ASSIGN_OR_RETURN(const json* version, jr::Require(root, "", "version"));
  BALLAST_RETURN_IF_ERROR(jr::Int(*version, "version", 1, 1).status());
  SpeedStore store;
  const json* workloads = jr::Find(root, "workloads");
  if (!workloads) return store;
  if (!workloads->is_object()) return jr::Expected("workloads", "an object", *workloads);
  if (workloads->size() > kMaxOldFileWorkloads) {
    return Status::Invalid(fmt::format("workloads: more than {}", kMaxOldFileWorkloads));
  }
  for (const auto& [kind, list] : workloads->items()) {
    BALLAST_ASSIGN_OR_RETURN(const std::vector<OldRecord> records,
                             ReadOldRecords(list, jr::Field("workloads", kind)));
    ConvertWorkload(records, kind, limits, store);
  }
  return store;
}

}  // namespace

StatusOr<SpeedStore> ReadHistoryFile(std::string_view text, std::string_view file_name,
                                     const StoreLimits& limits) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos &&
      text.size() <= kMaxHistoryFileBytes) {
    return SpeedStore{};
  }
  // Depth: the store's [speed, time] pairs are five deep, the earlier form's records four.
  BALLAST_ASSIGN_OR_RETURN(const json root,
                           ParseBoundedJson(text, file_name, {kMaxHistoryFileBytes, 8}));
  const bool old_form = root.is_object() && root.contains("workloads");
  auto store = old_form ? ReadOldForm(root, limits) : StoreFromJson(root, "", limits);
  if (!store.ok()) {
    return Status::Invalid(fmt::format("{}: {}", file_name, store.status().message()));
  }
  return store;
}

}  // namespace ballast::history
