#include "operator/controller/history_configmap.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "operator/controller/resources.h"

namespace ballast::controller {

using history::HistoryLookup;

using nlohmann::json;

ConfigMapHistory::ConfigMapHistory(kube::KubeClient& client, std::string ns, std::string name,
                                   history::StoreLimits limits)
    : client_(client),
      ref_(kube::ConfigMaps().In(std::move(ns)).Named(std::move(name))),
      limits_(limits) {}

std::string ConfigMapHistory::Describe() const {
  return fmt::format("ConfigMap {}/{}", ref_.ns, ref_.name);
}

StatusOr<ConfigMapHistory::Read> ConfigMapHistory::ReadStore() {
  Read read;
  auto object = client_.Get(ref_);
  if (!object.ok()) {
    if (object.status().code() == StatusCode::kNotFound) return read;
    return object.status();
  }
  read.config_map = *object;
  const json text =
      object->value("/data"_json_pointer, json::object()).value(kHistoryDataKey, json(""));
  auto store = history::StoreFromText(text.is_string() ? text.get<std::string>() : "{", limits_);
  if (store.ok()) {
    read.store = std::move(*store);
  } else {
    read.corrupt = store.status().message();
    spdlog::info("history store unreadable, starting empty configmap={} error=\"{}\"", Describe(),
                 read.corrupt);
  }
  return read;
}

Status ConfigMapHistory::WriteStore(const Read& read, const history::SpeedStore& store) {
  const std::string text = history::StoreToText(store, limits_);
  if (!read.config_map) {
    json object = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata",
                    {{"name", ref_.name},
                     {"namespace", ref_.ns},
                     {"labels", {{std::string(kManagedByLabel), std::string(kManagedBy)}}}}},
                   {"data", {{kHistoryDataKey, text}}}};
    return client_.Create(ref_, object).status();
  }
  json object = *read.config_map;
  object["data"][kHistoryDataKey] = text;  // resourceVersion as read: Conflict when stale
  return client_.Update(ref_, object).status();
}

HistoryLookup ConfigMapHistory::Lookup(const std::string& workload,
                                       const std::vector<std::string>& nodes, double now) {
  HistoryLookup lookup;
  lookup.origin = Describe();
  auto read = ReadStore();
  if (!read.ok()) {
    lookup.trouble = read.status().message();
    return lookup;
  }
  if (!read->corrupt.empty()) {
    lookup.trouble = fmt::format(
        "its text is unreadable ({}); the next finished job starts it "
        "again",
        read->corrupt);
    return lookup;
  }
  lookup.nodes = history::LookupHistory(read->store, workload, nodes, now);
  return lookup;
}

Status ConfigMapHistory::Record(const std::string& workload,
                                const std::map<std::string, double>& speeds, double now) {
  return kube::RetryOnConflict([&]() -> Status {
    BALLAST_ASSIGN_OR_RETURN(Read read, ReadStore());
    history::SpeedStore store = read.store;
    if (!history::RecordJob(store, workload, speeds, now, limits_)) return Status::Ok();
    return WriteStore(read, store);
  });
}

}  // namespace ballast::controller
