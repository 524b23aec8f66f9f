// NodesFromJson: the one reader of an emulated node, over the tree with
// common/json_read.h, for cluster files and scenarios alike.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "core/cluster/emulated_node.h"
#include "core/common/json_read.h"
#include "core/common/names.h"

namespace ballast::cluster {
namespace {

using nlohmann::json;
namespace jr = json_read;
using Bounds = SimulatedNodeBounds;

// The fields a simulated node has beyond a cluster file's.
constexpr std::array<std::string_view, 7> kSimulatorFields = {
    "changes", "latency", "bandwidth", "bytesPerItem", "failAt", "localItems", "cores"};

// Ok when `node` is an object of the fields `rules` allow; a simulator's
// field in a cluster file is named as such.
Status ExpectNodeFields(const json& node, const std::string& path, const NodeRules& rules) {
  if (rules.simulated) {
    return jr::ExpectObject(node, path,
                            {"name", "labels", "speed", "changes", "latency", "bandwidth",
                             "bytesPerItem", "failAt", "localItems", "joinAt", "leaveAt", "cores"});
  }
  if (node.is_object()) {
    for (std::string_view field : kSimulatorFields) {
      if (jr::Find(node, field) != nullptr) {
        return Status::InvalidAt(
            jr::Field(path, field),
            fmt::format("a simulated node's field (ballast simulate), not a {}'s; a node here has "
                        "name, speed, labels, joinAt, leaveAt",
                        rules.file_kind));
      }
    }
  }
  return jr::ExpectObject(node, path, {"name", "speed", "labels", "joinAt", "leaveAt"});
}

// The node's name and labels.
Status ReadIdentity(const json& node, const std::string& path, EmulatedNode& out) {
  BALLAST_ASSIGN_OR_RETURN(const json* name, jr::Require(node, path, "name"));
  const std::string name_path = jr::Field(path, "name");
  BALLAST_ASSIGN_OR_RETURN(out.name, jr::String(*name, name_path));
  // Node names as Kubernetes names nodes.
  if (Status checked = CheckName(out.name, NameKind::kDnsSubdomain); !checked.ok()) {
    return Status::InvalidAt(name_path, checked.message());
  }
  if (const json* labels = jr::Find(node, "labels")) {
    const std::string labels_path = jr::Field(path, "labels");
    if (!labels->is_object()) return jr::Expected(labels_path, "a map of label: value", *labels);
    for (const auto& [key, value] : labels->items()) {
      BALLAST_ASSIGN_OR_RETURN(out.labels[key], jr::LabelValue(value, jr::Field(labels_path, key)));
    }
  }
  return Status::Ok();
}

// When the node fails, joins and leaves, each after it joined.
Status ReadTimes(const json& node, const std::string& path, const NodeRules& rules,
                 EmulatedNode& out) {
  if (const json* fail = jr::Find(node, "failAt")) {
    BALLAST_ASSIGN_OR_RETURN(out.fail_at, jr::InRange(*fail, jr::Field(path, "failAt"), 0,
                                                      rules.max_seconds, rules.seconds_unit));
  }
  for (const auto& [key, at] : {std::pair{"joinAt", &out.join_at}, {"leaveAt", &out.leave_at}}) {
    if (const json* time = jr::Find(node, key)) {
      BALLAST_ASSIGN_OR_RETURN(
          *at, jr::InRange(*time, jr::Field(path, key), 0, rules.max_seconds, rules.seconds_unit));
    }
  }
  // A node present from the start has no joinAt: joinAt 0 says the same.
  if (out.join_at && *out.join_at == 0) out.join_at.reset();
  const double joins = out.join_at.value_or(0);
  if (out.leave_at && !(*out.leave_at > joins)) {
    return Status::InvalidAt(
        jr::Field(path, "leaveAt"),
        fmt::format("expected a time after joinAt ({:g}), got {:g}", joins, *out.leave_at));
  }
  if (out.fail_at && out.join_at && !(*out.fail_at > joins)) {
    return Status::InvalidAt(
        jr::Field(path, "failAt"),
        fmt::format("expected a time after joinAt ({:g}), got {:g}", joins, *out.fail_at));
  }
  return Status::Ok();
}

// changes, latency, bandwidth, bytesPerItem, localItems and cores.
Status ReadSimulated(const json& node, const std::string& path, const NodeRules& rules,
                     EmulatedNode& out) {
  if (const json* changes = jr::Find(node, "changes")) {
    BALLAST_ASSIGN_OR_RETURN(out.changes,
                             SpeedChangesFromJson(*changes, jr::Field(path, "changes"), rules));
  }
  if (const json* latency = jr::Find(node, "latency")) {
    BALLAST_ASSIGN_OR_RETURN(out.latency, jr::InRange(*latency, jr::Field(path, "latency"), 0,
                                                      Bounds::kMaxLatency, "seconds"));
  }
  if (const json* bandwidth = jr::Find(node, "bandwidth")) {
    BALLAST_ASSIGN_OR_RETURN(
        out.bandwidth, jr::InRange(*bandwidth, jr::Field(path, "bandwidth"), Bounds::kMinBandwidth,
                                   Bounds::kMaxBandwidth, "bytes per second"));
  }
  if (const json* bytes = jr::Find(node, "bytesPerItem")) {
    BALLAST_ASSIGN_OR_RETURN(
        out.bytes_per_item,
        jr::InRange(*bytes, jr::Field(path, "bytesPerItem"), 0, Bounds::kMaxBytesPerItem, "bytes"));
  }
  if (const json* local = jr::Find(node, "localItems")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count, jr::Int(*local, jr::Field(path, "localItems"), 0,
                                                    static_cast<int64_t>(Bounds::kMaxLocalItems)));
    out.local_items = static_cast<uint64_t>(count);
  }
  if (const json* cores = jr::Find(node, "cores")) {
    BALLAST_ASSIGN_OR_RETURN(out.cores, jr::InRange(*cores, jr::Field(path, "cores"),
                                                    Bounds::kMinSpeed, Bounds::kMaxCores, "cores"));
  }
  return Status::Ok();
}

StatusOr<EmulatedNode> ReadNode(const json& node, const std::string& path, const NodeRules& rules) {
  BALLAST_RETURN_IF_ERROR(ExpectNodeFields(node, path, rules));
  EmulatedNode out;
  BALLAST_RETURN_IF_ERROR(ReadIdentity(node, path, out));
  BALLAST_ASSIGN_OR_RETURN(const json* speed, jr::Require(node, path, "speed"));
  BALLAST_ASSIGN_OR_RETURN(out.speed, jr::InRange(*speed, jr::Field(path, "speed"), rules.min_speed,
                                                  rules.max_speed, rules.speed_unit));
  BALLAST_RETURN_IF_ERROR(ReadTimes(node, path, rules, out));
  if (rules.simulated) BALLAST_RETURN_IF_ERROR(ReadSimulated(node, path, rules, out));
  return out;
}

}  // namespace

StatusOr<std::vector<SpeedChange>> SpeedChangesFromJson(const json& node, const std::string& path,
                                                        const NodeRules& rules) {
  if (!node.is_array()) return jr::Expected(path, "a list of {at, speed}", node);
  std::vector<SpeedChange> changes;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string element_path = jr::Element(path, i);
    const json& element = node[i];
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(element, element_path, {"at", "speed"}));
    SpeedChange change;
    BALLAST_ASSIGN_OR_RETURN(const json* at, jr::Require(element, element_path, "at"));
    const std::string at_path = jr::Field(element_path, "at");
    BALLAST_ASSIGN_OR_RETURN(change.at,
                             jr::InRange(*at, at_path, 0, rules.max_seconds, rules.seconds_unit));
    if (!changes.empty() && change.at <= changes.back().at) {
      return jr::Expected(at_path, fmt::format("a time after {}", changes.back().at), *at);
    }
    BALLAST_ASSIGN_OR_RETURN(const json* speed, jr::Require(element, element_path, "speed"));
    BALLAST_ASSIGN_OR_RETURN(change.speed,
                             jr::InRange(*speed, jr::Field(element_path, "speed"), rules.min_speed,
                                         rules.max_speed, rules.speed_unit));
    changes.push_back(change);
  }
  return changes;
}

StatusOr<std::vector<EmulatedNode>> NodesFromJson(const json& nodes, const std::string& path,
                                                  const NodeRules& rules) {
  if (!nodes.is_array() || nodes.empty()) {
    return jr::Expected(path, "a non-empty list of nodes", nodes);
  }
  std::vector<EmulatedNode> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string node_path = jr::Element(path, i);
    BALLAST_ASSIGN_OR_RETURN(EmulatedNode node, ReadNode(nodes[i], node_path, rules));
    for (const EmulatedNode& other : out) {
      if (other.name == node.name) {
        return Status::InvalidAt(jr::Field(node_path, "name"),
                                 fmt::format("duplicate node name '{}'", node.name));
      }
    }
    out.push_back(std::move(node));
  }
  if (std::ranges::all_of(out, [](const EmulatedNode& node) { return node.join_at.has_value(); })) {
    return Status::InvalidAt(path,
                             "every node has joinAt; at least one must be there from the start");
  }
  return out;
}

}  // namespace ballast::cluster
