#include "worker/probe/node_labeller.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cctype>
#include <chrono>

#include "core/common/utf8.h"

namespace ballast::worker {
namespace {

using nlohmann::json;

kube::ResourceRef Nodes() { return {"", "v1", "nodes", /*namespaced=*/false, "", ""}; }
kube::ResourceRef Events() { return {"", "v1", "events", /*namespaced=*/true, "", ""}; }

std::string Now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

std::string WarningsText(const std::vector<probe::Warning>& warnings) {
  std::string text;
  for (const probe::Warning& warning : warnings) {
    if (!text.empty()) text += "\n";
    text += warning.message;
  }
  // Cut between characters, and valid UTF-8 however the warnings were made:
  // the Event is JSON.
  if (text.size() > 1024)
    text = std::string(Utf8Prefix(text, 1000)) + "... (more in the probe's log)";
  return ToValidUtf8(text);
}

}  // namespace

std::vector<std::string> ConflictingLabels(const std::string& message) {
  constexpr std::string_view kPrefix = ".metadata.labels.";
  std::vector<std::string> keys;
  for (size_t at = message.find(kPrefix); at != std::string::npos && keys.size() < 64;
       at = message.find(kPrefix, at + 1)) {
    size_t end = at + kPrefix.size();
    while (end < message.size() &&
           (std::isalnum(static_cast<unsigned char>(message[end])) || message[end] == '.' ||
            message[end] == '-' || message[end] == '_' || message[end] == '/')) {
      ++end;
    }
    std::string key = message.substr(at + kPrefix.size(), end - at - kPrefix.size());
    while (!key.empty() && key.back() == '.') key.pop_back();  // a sentence's full stop
    if (!key.empty()) keys.push_back(std::move(key));
  }
  return keys;
}

json NodeApplyObject(const std::string& node, const std::map<std::string, std::string>& labels) {
  std::string keys;
  for (const auto& [key, value] : labels) keys += (keys.empty() ? "" : ",") + key;
  json object = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata",
                  {{"name", node},
                   {"labels", json::object()},
                   {"annotations", {{std::string(probe::kProbeLabelsAnnotation), keys}}}}}};
  for (const auto& [key, value] : labels) object["metadata"]["labels"][key] = value;
  return object;
}

json MissingFactsEvent(const json& node_object, const std::vector<probe::Warning>& warnings,
                       const std::string& component) {
  const json& meta = node_object.contains("metadata") ? node_object["metadata"] : json::object();
  const std::string name = meta.value("name", "node");
  const std::string now = Now();
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", fmt::format("{}.{:x}", name, nanos)}, {"namespace", "default"}}},
      {"involvedObject",
       {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", name}, {"uid", meta.value("uid", "")}}},
      {"type", "Warning"},
      {"reason", "ProbeFactUnknown"},
      {"message", WarningsText(warnings)},
      {"source", {{"component", component}, {"host", name}}},
      {"reportingComponent", "ballast.io/" + component},
      {"reportingInstance", name},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
}

NodeLabeller::NodeLabeller(kube::KubeClient& client, std::string node, std::string field_manager)
    : client_(client), node_(std::move(node)), field_manager_(std::move(field_manager)) {}

Status NodeLabeller::Apply(const std::map<std::string, std::string>& labels) {
  if (applied_once_ && labels == applied_ && conflicts_.empty()) return Status::Ok();
  if (!applied_once_) {
    // An apply would create a Node of a wrong NODE_NAME: make sure it exists.
    auto existing = client_.Get(Nodes().Named(node_));
    if (!existing.ok()) return existing.status();
  }
  kube::ApplyOptions options;
  options.field_manager = field_manager_;
  std::map<std::string, std::string> mine = labels;
  std::vector<probe::Warning> conflicts;
  StatusOr<json> result = Status::Unavailable("no apply");
  for (int attempt = 0; attempt < 4; ++attempt) {
    result = client_.Apply(Nodes().Named(node_), NodeApplyObject(node_, mine), options);
    if (result.ok() || result.status().code() != StatusCode::kConflict) break;
    size_t left = 0;
    for (const std::string& key : ConflictingLabels(result.status().message())) {
      const auto it = mine.find(key);
      if (it == mine.end()) continue;
      conflicts.push_back(
          {key, "",
           fmt::format("label {}: another field manager set it to another value, so the "
                       "probe's '{}' is not applied ({}); remove it to let the probe set it",
                       key, it->second, Utf8Prefix(result.status().message(), 300))});
      mine.erase(it);
      ++left;
    }
    if (left == 0) break;  // a conflict on something else: report it
  }
  if (!result.ok()) return result.status();
  node_object_ = *std::move(result);
  conflicts_ = std::move(conflicts);
  applied_ = labels;
  applied_once_ = true;
  ++applies_;
  return Status::Ok();
}

Status NodeLabeller::Report(const std::vector<probe::Warning>& warnings) {
  const std::string text = WarningsText(warnings);
  if (text == reported_) return Status::Ok();
  if (!warnings.empty()) {
    auto created = client_.Create(Events().In("default"),
                                  MissingFactsEvent(node_object_, warnings, field_manager_));
    if (!created.ok()) return created.status();
  }
  reported_ = text;
  return Status::Ok();
}

}  // namespace ballast::worker
