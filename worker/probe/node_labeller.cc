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

json NodeApplyObject(const std::string& node, const std::map<std::string, std::string>& labels,
                     const std::string& board_note) {
  std::string keys;
  for (const auto& [key, value] : labels) keys += (keys.empty() ? "" : ",") + key;
  json object = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata",
                  {{"name", node},
                   {"labels", json::object()},
                   {"annotations", {{std::string(probe::kProbeLabelsAnnotation), keys}}}}}};
  for (const auto& [key, value] : labels) object["metadata"]["labels"][key] = value;
  if (!board_note.empty()) {
    object["metadata"]["annotations"][std::string(probe::kBoardNoteAnnotation)] = board_note;
  }
  return object;
}

json NodeEvent(const json& node_object, const std::string& type, const std::string& reason,
               const std::string& message, const std::string& component) {
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
      {"type", type},
      {"reason", reason},
      {"message", ToValidUtf8(message)},
      {"source", {{"component", component}, {"host", name}}},
      {"reportingComponent", "ballast.io/" + component},
      {"reportingInstance", name},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
}

NodeLabeller::NodeLabeller(kube::KubeClient& client, std::string node, std::string field_manager)
    : client_(client), node_(std::move(node)), field_manager_(std::move(field_manager)) {}

Status NodeLabeller::Apply(const std::map<std::string, std::string>& labels,
                           const std::string& board_note) {
  if (applied_once_ && labels == applied_ && board_note == applied_note_ && conflicts_.empty()) {
    return Status::Ok();
  }
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
    result = client_.Apply(Nodes().Named(node_), NodeApplyObject(node_, mine, board_note), options);
    if (result.ok() || result.status().code() != StatusCode::kConflict) break;
    size_t left = 0;
    for (const std::string& key : ConflictingLabels(result.status().message())) {
      const auto it = mine.find(key);
      if (it == mine.end()) continue;
      conflicts.push_back(
          {key, "",
           fmt::format("label {}: another field manager set it to another value, so the "
                       "probe's '{}' is not applied; remove it to let the probe set it",
                       key, it->second)});
      mine.erase(it);
      ++left;
    }
    if (left == 0) break;  // a conflict on something else: report it
  }
  if (!result.ok()) return result.status();
  node_object_ = *std::move(result);
  conflicts_ = std::move(conflicts);
  applied_ = labels;
  applied_note_ = board_note;
  applied_once_ = true;
  ++applies_;
  return Status::Ok();
}

probe::NodeNotice NodeLabeller::Notice(const std::vector<probe::Warning>& warnings,
                                       const std::map<std::string, std::string>& labels,
                                       const probe::Facts& facts) const {
  std::map<std::string, std::string> on_node;
  const auto meta = node_object_.is_object() ? node_object_.find("metadata") : node_object_.end();
  const bool has_labels = meta != node_object_.end() && meta->is_object() &&
                          meta->contains("labels") && meta->at("labels").is_object();
  if (has_labels) {
    for (const auto& [key, value] : meta->at("labels").items()) {
      if (value.is_string()) on_node[key] = value.get<std::string>();
    }
  }
  return probe::DecideNodeNotice(warnings, labels, on_node, probe::LabelOwners(node_object_),
                                 field_manager_, facts);
}

Status NodeLabeller::Report(const probe::NodeNotice& notice) {
  const struct {
    const char* type;
    const char* reason;
    std::string message;
  } events[] = {{"Warning", "ProbeFactUnknown", probe::MissingMessage(notice)},
                {"Normal", "LabelsSetByOthers", probe::HeldMessage(notice)},
                {"Normal", "NotARaspberryPi", probe::BoardMessage(notice)}};
  for (const auto& event : events) {
    std::string& reported = reported_[event.reason];
    if (event.message == reported) continue;
    if (!event.message.empty()) {
      auto created = client_.Create(
          Events().In("default"),
          NodeEvent(node_object_, event.type, event.reason, event.message, field_manager_));
      if (!created.ok()) return created.status();
    }
    reported = event.message;
  }
  return Status::Ok();
}

}  // namespace ballast::worker
