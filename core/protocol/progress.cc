#include "core/protocol/progress.h"

#include <fmt/format.h>

#include <cmath>

#include "core/common/json_read.h"

namespace ballast::protocol {
namespace {

using nlohmann::json;

// A finite number >= 0.
StatusOr<double> NonNegative(const json& value, std::string_view path) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
    return json_read::Expected(path, "a finite number >= 0", value);
  }
  return value.get<double>();
}

// The member `key` read by `read`, or `fallback` when absent.
template <typename T, typename Read>
StatusOr<T> Optional(const json& node, std::string_view path, std::string_view key, T fallback,
                     Read read) {
  const json* found = json_read::Find(node, key);
  if (!found) return fallback;
  return read(*found, json_read::Field(path, key));
}

StatusOr<NodeProgress> ParseNode(const json& node, const std::string& path) {
  if (!node.is_object()) return json_read::Expected(path, "an object", node);
  NodeProgress out;
  BALLAST_ASSIGN_OR_RETURN(out.name, json_read::Member(node, path, "name", json_read::String));
  if (out.name.empty() || out.name.size() > kMaxProgressNameBytes) {
    return json_read::Expected(json_read::Field(path, "name"),
                               fmt::format("a node name of 1 to {} bytes", kMaxProgressNameBytes),
                               json_read::At(node, "name"));
  }
  BALLAST_ASSIGN_OR_RETURN(out.prior, Optional(node, path, "prior", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.items, Optional<uint64_t>(node, path, "items", 0, json_read::Uint));
  BALLAST_ASSIGN_OR_RETURN(out.cost, Optional(node, path, "cost", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.items_per_second,
                           Optional(node, path, "itemsPerSecond", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.cost_per_second,
                           Optional(node, path, "costPerSecond", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.steals,
                           Optional<uint64_t>(node, path, "steals", 0, json_read::Uint));
  return out;
}

StatusOr<std::optional<double>> OptionalSeconds(const json& node, std::string_view key) {
  const json* found = json_read::Find(node, key);
  if (!found) return std::optional<double>();
  BALLAST_ASSIGN_OR_RETURN(double seconds, NonNegative(*found, json_read::Field("costModel", key)));
  return std::optional<double>(seconds);
}

StatusOr<ProgressCostModel> ParseCostModel(const json& node) {
  if (!node.is_object()) return json_read::Expected("costModel", "an object", node);
  ProgressCostModel out;
  BALLAST_ASSIGN_OR_RETURN(out.start_cost,
                           Optional(node, "costModel", "startCost", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.samples,
                           Optional<uint64_t>(node, "costModel", "samples", 0, json_read::Uint));
  BALLAST_ASSIGN_OR_RETURN(out.seconds_per_cost, OptionalSeconds(node, "secondsPerCost"));
  BALLAST_ASSIGN_OR_RETURN(out.start_seconds, OptionalSeconds(node, "startSeconds"));
  return out;
}

Status ParseNodes(const json& list, JobProgress& out) {
  if (!list.is_array()) return json_read::Expected("nodes", "a list", list);
  if (list.size() > kMaxProgressNodes) {
    return Status::InvalidAt(
        "nodes", fmt::format("expected at most {} rows, got {}", kMaxProgressNodes, list.size()));
  }
  for (size_t i = 0; i < list.size(); ++i) {
    BALLAST_ASSIGN_OR_RETURN(NodeProgress node, ParseNode(list[i], json_read::Element("nodes", i)));
    out.nodes.push_back(std::move(node));
  }
  return Status::Ok();
}

}  // namespace

json ToJson(const JobProgress& progress) {
  json nodes = json::array();
  for (const NodeProgress& node : progress.nodes) {
    nodes.push_back({{"name", node.name},
                     {"prior", node.prior},
                     {"items", node.items},
                     {"cost", node.cost},
                     {"itemsPerSecond", node.items_per_second},
                     {"costPerSecond", node.cost_per_second},
                     {"steals", node.steals}});
  }
  json out = {{"job", progress.job},
              {"items", progress.items},
              {"completed", progress.completed},
              {"totalCost", progress.total_cost},
              {"completedCost", progress.completed_cost},
              {"done", progress.done},
              {"nodeCount", progress.node_count},
              {"reporting", progress.reporting},
              {"steals", progress.steals},
              {"nodes", std::move(nodes)}};
  if (const auto& model = progress.cost_model) {
    json cost_model = {{"startCost", model->start_cost}, {"samples", model->samples}};
    if (model->seconds_per_cost) cost_model["secondsPerCost"] = *model->seconds_per_cost;
    if (model->start_seconds) cost_model["startSeconds"] = *model->start_seconds;
    out["costModel"] = std::move(cost_model);
  }
  return out;
}

StatusOr<JobProgress> ParseJobProgress(const json& json) {
  if (!json.is_object()) return json_read::Expected("", "an object", json);
  JobProgress out;
  BALLAST_ASSIGN_OR_RETURN(out.job, json_read::Member(json, "", "job", json_read::String));
  BALLAST_ASSIGN_OR_RETURN(out.items, json_read::Member(json, "", "items", json_read::Uint));
  BALLAST_ASSIGN_OR_RETURN(out.completed,
                           json_read::Member(json, "", "completed", json_read::Uint));
  if (out.completed > out.items) {
    return json_read::Expected("completed", fmt::format("at most items ({})", out.items),
                               json_read::At(json, "completed"));
  }
  BALLAST_ASSIGN_OR_RETURN(out.total_cost, Optional(json, "", "totalCost", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.completed_cost,
                           Optional(json, "", "completedCost", 0.0, NonNegative));
  BALLAST_ASSIGN_OR_RETURN(out.done, Optional(json, "", "done", false, json_read::Bool));
  BALLAST_ASSIGN_OR_RETURN(out.steals, Optional<uint64_t>(json, "", "steals", 0, json_read::Uint));
  if (const nlohmann::json* nodes = json_read::Find(json, "nodes")) {
    BALLAST_RETURN_IF_ERROR(ParseNodes(*nodes, out));
  }
  BALLAST_ASSIGN_OR_RETURN(
      out.node_count, Optional<uint64_t>(json, "", "nodeCount", out.nodes.size(), json_read::Uint));
  BALLAST_ASSIGN_OR_RETURN(out.reporting,
                           Optional<uint64_t>(json, "", "reporting", 0, json_read::Uint));
  if (out.node_count < out.nodes.size()) {
    return json_read::Expected("nodeCount", fmt::format("at least the rows ({})", out.nodes.size()),
                               json_read::At(json, "nodeCount"));
  }
  if (out.reporting > out.node_count) {
    return json_read::Expected("reporting", fmt::format("at most nodeCount ({})", out.node_count),
                               json_read::At(json, "reporting"));
  }
  if (const nlohmann::json* model = json_read::Find(json, "costModel")) {
    BALLAST_ASSIGN_OR_RETURN(out.cost_model, ParseCostModel(*model));
  }
  return out;
}

}  // namespace ballast::protocol
