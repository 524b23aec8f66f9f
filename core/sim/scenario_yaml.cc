// ParseScenario: the YAML form of a Scenario, read through YamlNode.
#include <fmt/format.h>

#include <algorithm>

#include "core/balance/policy_yaml.h"
#include "core/common/names.h"
#include "core/config/yaml_node.h"
#include "core/sim/scenario.h"

namespace ballast::sim {
namespace {

using config::ReadOr;
using config::YamlNode;

using Bounds = ScenarioBounds;

// A number in [min, max]; Invalid "expected <what> in [min, max], got '...'"
// naming the file and line otherwise.
StatusOr<double> ReadIn(const YamlNode& node, double min, double max, std::string_view what) {
  auto value = node.AsDouble();
  if (!value.ok() || *value < min || *value > max) {
    return node.Error(fmt::format("{} in [{:g}, {:g}]", what, min, max));
  }
  return value;
}

// ReadIn of the optional key `key`, or `fallback` when absent.
StatusOr<double> ReadInOr(const YamlNode& map, std::string_view key, double fallback, double min,
                          double max, std::string_view what) {
  auto child = map.Get(key);
  if (!child) return fallback;
  return ReadIn(*child, min, max, what);
}

StatusOr<Workload> ParseWorkload(const YamlNode& node) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"items", "itemSeconds", "costModel", "costJitter",
                                          "bytesPerItem", "transfer", "repeatable"}));
  Workload workload;
  BALLAST_ASSIGN_OR_RETURN(YamlNode items, node.Require("items"));
  BALLAST_ASSIGN_OR_RETURN(int64_t count, items.AsInt(1, static_cast<int64_t>(Bounds::kMaxItems)));
  workload.items = static_cast<uint64_t>(count);
  BALLAST_ASSIGN_OR_RETURN(workload.item_seconds,
                           ReadInOr(node, "itemSeconds", 1.0, Bounds::kMinItemSeconds,
                                    Bounds::kMaxItemSeconds, "seconds"));
  if (auto shape = node.Get("costModel")) {
    BALLAST_ASSIGN_OR_RETURN(std::string name, shape->AsString());
    auto parsed = balance::ParseCostShape(name);
    if (!parsed) return shape->Error("one of uniform, linear, sqrt");
    workload.cost = *parsed;
  }
  if (auto jitter = node.Get("costJitter")) {
    BALLAST_ASSIGN_OR_RETURN(workload.cost_jitter, jitter->AsDouble());
    if (workload.cost_jitter < 0 || workload.cost_jitter >= 1) {
      return jitter->Error("a number in [0, 1)");
    }
    if (workload.cost_jitter > 0 && workload.items > 50'000'000) {
      return jitter->Fail("costJitter needs items <= 50000000 (one cost per item is kept)");
    }
  }
  BALLAST_ASSIGN_OR_RETURN(workload.bytes_per_item, ReadInOr(node, "bytesPerItem", 0.0, 0,
                                                             Bounds::kMaxBytesPerItem, "bytes"));
  if (auto transfer = node.Get("transfer")) {
    BALLAST_ASSIGN_OR_RETURN(std::string mode, transfer->AsString());
    if (mode != "stream" && mode != "block") return transfer->Error("stream or block");
    workload.transfer = mode == "stream" ? Transfer::kStream : Transfer::kBlock;
  }
  if (auto repeatable = node.Get("repeatable")) {
    BALLAST_ASSIGN_OR_RETURN(workload.repeatable, repeatable->AsBool());
  }
  return workload;
}

StatusOr<std::vector<SpeedChange>> ParseChanges(const YamlNode& node) {
  BALLAST_RETURN_IF_ERROR(node.ExpectSequence(/*allow_empty=*/true));
  std::vector<SpeedChange> changes;
  for (const YamlNode& element : node.Elements()) {
    BALLAST_RETURN_IF_ERROR(element.ExpectMap({"at", "speed"}));
    SpeedChange change;
    BALLAST_ASSIGN_OR_RETURN(YamlNode at, element.Require("at"));
    BALLAST_ASSIGN_OR_RETURN(change.at, ReadIn(at, 0, Bounds::kMaxTime, "seconds"));
    if (!changes.empty() && change.at <= changes.back().at) {
      return at.Error(fmt::format("a time after {}", changes.back().at));
    }
    BALLAST_ASSIGN_OR_RETURN(YamlNode speed, element.Require("speed"));
    BALLAST_ASSIGN_OR_RETURN(change.speed,
                             ReadIn(speed, Bounds::kMinSpeed, Bounds::kMaxSpeed, "a speed"));
    changes.push_back(change);
  }
  return changes;
}

// The node's link: latency, bandwidth and its own bytesPerItem.
Status ParseLink(const YamlNode& node, NodeSpec& spec) {
  BALLAST_ASSIGN_OR_RETURN(spec.latency,
                           ReadInOr(node, "latency", 0.0, 0, Bounds::kMaxLatency, "seconds"));
  if (auto bandwidth = node.Get("bandwidth")) {
    BALLAST_ASSIGN_OR_RETURN(spec.bandwidth, ReadIn(*bandwidth, Bounds::kMinBandwidth,
                                                    Bounds::kMaxBandwidth, "bytes per second"));
  }
  if (auto bytes = node.Get("bytesPerItem")) {
    BALLAST_ASSIGN_OR_RETURN(spec.bytes_per_item,
                             ReadIn(*bytes, 0, Bounds::kMaxBytesPerItem, "bytes"));
  }
  return Status::Ok();
}

StatusOr<NodeSpec> ParseNode(const YamlNode& node) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"name", "labels", "speed", "changes", "latency",
                                          "bandwidth", "bytesPerItem", "failAt", "localItems"}));
  NodeSpec spec;
  spec.line = node.line();
  BALLAST_ASSIGN_OR_RETURN(YamlNode name, node.Require("name"));
  BALLAST_ASSIGN_OR_RETURN(spec.name, name.AsString());
  // Node names as Kubernetes names nodes, as in cluster files.
  if (Status checked = CheckName(spec.name, NameKind::kDnsSubdomain); !checked.ok()) {
    return name.Fail(checked.message());
  }
  if (auto labels = node.Get("labels")) {
    if (!labels->IsMap()) return labels->Error("a map of label names to values");
    for (const auto& [key, value] : labels->Entries()) {
      BALLAST_ASSIGN_OR_RETURN(spec.labels[key], value.AsString());
    }
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode speed, node.Require("speed"));
  BALLAST_ASSIGN_OR_RETURN(spec.speed,
                           ReadIn(speed, Bounds::kMinSpeed, Bounds::kMaxSpeed, "a speed"));
  if (auto changes = node.Get("changes")) {
    BALLAST_ASSIGN_OR_RETURN(spec.changes, ParseChanges(*changes));
  }
  BALLAST_RETURN_IF_ERROR(ParseLink(node, spec));
  if (auto fail = node.Get("failAt")) {
    BALLAST_ASSIGN_OR_RETURN(spec.fail_at, ReadIn(*fail, 0, Bounds::kMaxTime, "seconds"));
  }
  if (auto local = node.Get("localItems")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t count,
                             local->AsInt(0, static_cast<int64_t>(Bounds::kMaxItems)));
    spec.local_items = static_cast<uint64_t>(count);
  }
  return spec;
}

// One element of `jobs`: {name, speeds, repeat}, appended `repeat` times.
Status ParseJob(const YamlNode& element, const std::vector<NodeSpec>& nodes,
                std::vector<JobStep>& jobs) {
  BALLAST_RETURN_IF_ERROR(element.ExpectMap({"name", "speeds", "repeat"}));
  JobStep job;
  job.line = element.line();
  BALLAST_ASSIGN_OR_RETURN(job.name, ReadOr(element, "name", std::string(), &YamlNode::AsString));
  if (auto speeds = element.Get("speeds")) {
    if (!speeds->IsMap()) return speeds->Error("a map of node names to speeds");
    for (const auto& [key, value] : speeds->Entries()) {
      const std::string& node = key;  // a binding a lambda can capture (clang 14)
      const bool known = std::any_of(nodes.begin(), nodes.end(),
                                     [&](const NodeSpec& spec) { return spec.name == node; });
      if (!known) return value.Fail(fmt::format("no node named '{}' in the scenario", node));
      BALLAST_ASSIGN_OR_RETURN(job.speeds[node],
                               ReadIn(value, Bounds::kMinSpeed, Bounds::kMaxSpeed, "a speed"));
    }
  }
  int64_t repeat = 1;
  if (auto count = element.Get("repeat")) {
    BALLAST_ASSIGN_OR_RETURN(repeat, count->AsInt(1, Bounds::kMaxJobs));
  }
  if (static_cast<int64_t>(jobs.size()) + repeat > Bounds::kMaxJobs) {
    return element.Fail(fmt::format("more than {} jobs", Bounds::kMaxJobs));
  }
  for (int64_t i = 0; i < repeat; ++i) {
    jobs.push_back(job);
    if (repeat > 1 && !job.name.empty()) jobs.back().name += fmt::format("-{}", i + 1);
    job.speeds.clear();  // a drift happens once, before the first of the repeats
  }
  return Status::Ok();
}

StatusOr<HistorySettings> ParseHistory(const YamlNode& node) {
  BALLAST_RETURN_IF_ERROR(
      node.ExpectMap({"fullTrustSamples", "maxAgeSeconds", "carry", "gapSeconds"}));
  HistorySettings history;
  fuzzy::HistoryPriorOptions& prior = history.prior;
  BALLAST_ASSIGN_OR_RETURN(prior.full_trust_samples,
                           ReadInOr(node, "fullTrustSamples", prior.full_trust_samples, 1e-3,
                                    Bounds::kMaxSamples, "samples"));
  BALLAST_ASSIGN_OR_RETURN(
      prior.max_age_seconds,
      ReadInOr(node, "maxAgeSeconds", prior.max_age_seconds, 0, Bounds::kMaxTime, "seconds"));
  BALLAST_ASSIGN_OR_RETURN(prior.carry, ReadInOr(node, "carry", prior.carry, 0, 1, "a fraction"));
  BALLAST_ASSIGN_OR_RETURN(history.gap_seconds,
                           ReadInOr(node, "gapSeconds", 0.0, 0, Bounds::kMaxTime, "seconds"));
  return history;
}

Status ParseSequence(const YamlNode& root, Scenario& scenario) {
  if (auto jobs = root.Get("jobs")) {
    BALLAST_RETURN_IF_ERROR(jobs->ExpectSequence());
    for (const YamlNode& element : jobs->Elements()) {
      BALLAST_RETURN_IF_ERROR(ParseJob(element, scenario.nodes, scenario.jobs));
    }
  }
  if (auto history = root.Get("history")) {
    BALLAST_ASSIGN_OR_RETURN(scenario.history, ParseHistory(*history));
  }
  return Status::Ok();
}

}  // namespace

double SpeedAt(const NodeSpec& node, double t) {
  double speed = node.speed;
  for (const SpeedChange& change : node.changes) {
    if (change.at <= t) speed = change.speed;
  }
  return speed;
}

StatusOr<Scenario> ParseScenario(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml, file_name));
  BALLAST_RETURN_IF_ERROR(
      root.ExpectMap({"name", "description", "workload", "profile", "nodes", "policies", "seed",
                      "failureDetection", "jobs", "history"}));
  Scenario scenario;
  BALLAST_ASSIGN_OR_RETURN(scenario.name, ReadOr(root, "name", std::string(), &YamlNode::AsString));
  BALLAST_ASSIGN_OR_RETURN(scenario.description,
                           ReadOr(root, "description", std::string(), &YamlNode::AsString));
  BALLAST_ASSIGN_OR_RETURN(YamlNode workload, root.Require("workload"));
  BALLAST_ASSIGN_OR_RETURN(scenario.workload, ParseWorkload(workload));
  BALLAST_ASSIGN_OR_RETURN(
      scenario.profile, ReadOr(root, "profile", std::string("raspberry-pi"), &YamlNode::AsString));
  BALLAST_ASSIGN_OR_RETURN(YamlNode nodes, root.Require("nodes"));
  BALLAST_RETURN_IF_ERROR(nodes.ExpectSequence());
  for (const YamlNode& element : nodes.Elements()) {
    BALLAST_ASSIGN_OR_RETURN(NodeSpec node, ParseNode(element));
    for (const NodeSpec& other : scenario.nodes) {
      if (other.name == node.name)
        return element.Fail(fmt::format("duplicate node name '{}'", node.name));
    }
    scenario.nodes.push_back(std::move(node));
  }
  if (auto policies = root.Get("policies")) {
    BALLAST_RETURN_IF_ERROR(policies->ExpectSequence());
    for (const YamlNode& element : policies->Elements()) {
      BALLAST_ASSIGN_OR_RETURN(balance::PolicySpec spec, balance::ParsePolicySpec(element));
      scenario.policies.push_back(std::move(spec));
    }
  } else {
    for (const std::string& name : balance::PolicyNames())
      scenario.policies.push_back({name, "", {}});
  }
  if (auto seed = root.Get("seed")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, seed->AsInt(0));
    scenario.seed = static_cast<uint64_t>(value);
  }
  if (auto detection = root.Get("failureDetection")) {
    BALLAST_ASSIGN_OR_RETURN(scenario.failure_detection,
                             ReadIn(*detection, 1e-6, Bounds::kMaxTime, "seconds"));
  }
  BALLAST_RETURN_IF_ERROR(ParseSequence(root, scenario));
  return scenario;
}

}  // namespace ballast::sim
