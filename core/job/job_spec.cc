#include "core/job/job_spec.h"

#include <fmt/format.h>

#include "core/balance/policy_yaml.h"
#include "core/common/names.h"
#include "core/config/yaml_node.h"

namespace ballast::job {
namespace {

using config::ReadOr;
using config::YamlNode;

// The name written at `node`, checked as a name of `kind` (common/names.h);
// Invalid naming the file, the line and what is wrong otherwise.
StatusOr<std::string> ReadName(const YamlNode& node, NameKind kind) {
  BALLAST_ASSIGN_OR_RETURN(std::string name, node.AsString());
  if (Status checked = CheckName(name, kind); !checked.ok()) return node.Fail(checked.message());
  return name;
}

// The `spec` of a WeightedJob manifest, or the document itself.
StatusOr<std::pair<YamlNode, std::string>> SpecOf(const YamlNode& root) {
  if (!root.IsMap()) return root.Error("a job: a map with workload, policy, …");
  if (!root.Get("kind") && !root.Get("spec")) return std::pair{root, std::string("job")};
  BALLAST_RETURN_IF_ERROR(root.ExpectMap({"apiVersion", "kind", "metadata", "spec"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode kind, root.Require("kind"));
  BALLAST_ASSIGN_OR_RETURN(std::string kind_name, kind.AsString());
  if (kind_name != "WeightedJob") return kind.Error("WeightedJob");
  std::string name = "job";
  if (auto metadata = root.Get("metadata")) {
    if (auto meta_name = metadata->Get("name")) {
      BALLAST_ASSIGN_OR_RETURN(name, ReadName(*meta_name, NameKind::kDnsLabel));
    }
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode spec, root.Require("spec"));
  return std::pair{spec, name};
}

StatusOr<std::map<std::string, std::string>> ParseLabels(const YamlNode& node) {
  std::map<std::string, std::string> labels;
  if (!node.IsMap()) return node.Error("a map of label: value");
  for (const auto& [key, value] : node.Entries()) {
    BALLAST_ASSIGN_OR_RETURN(labels[key], value.AsString());
  }
  return labels;
}

StatusOr<EmulatedNode> ParseNode(const YamlNode& node) {
  BALLAST_RETURN_IF_ERROR(node.ExpectMap({"name", "speed", "labels"}));
  EmulatedNode out;
  out.line = node.line();
  BALLAST_ASSIGN_OR_RETURN(YamlNode name, node.Require("name"));
  BALLAST_ASSIGN_OR_RETURN(out.name, ReadName(name, NameKind::kDnsSubdomain));
  BALLAST_ASSIGN_OR_RETURN(YamlNode speed, node.Require("speed"));
  auto value = speed.AsDouble();
  if (!value.ok() || *value < kMinNodeSpeed || *value > kMaxNodeSpeed) {
    return speed.Error(
        fmt::format("a fraction of one core in [{}, {}]", kMinNodeSpeed, kMaxNodeSpeed));
  }
  out.speed = *value;
  if (auto labels = node.Get("labels")) {
    BALLAST_ASSIGN_OR_RETURN(out.labels, ParseLabels(*labels));
  }
  return out;
}

// `verify: {fraction: f}` with 0 < f <= 1.
StatusOr<double> ParseVerifyFraction(const YamlNode& verify) {
  BALLAST_RETURN_IF_ERROR(verify.ExpectMap({"fraction"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode fraction, verify.Require("fraction"));
  auto value = fraction.AsDouble();
  if (!value.ok() || !(*value > 0 && *value <= 1)) {
    return fraction.Error("a fraction of the items to recompute, > 0 and <= 1");
  }
  return *value;
}

}  // namespace

StatusOr<JobSpec> ParseJob(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml, file_name));
  BALLAST_ASSIGN_OR_RETURN(auto spec_and_name, SpecOf(root));
  const YamlNode& spec = spec_and_name.first;
  JobSpec job;
  job.name = spec_and_name.second;
  BALLAST_RETURN_IF_ERROR(
      spec.ExpectMap({"name", "workload", "items", "policy", "profile", "leaseSeconds",
                      "backoffLimit", "activeDeadlineSeconds", "verify", "nodeSelector",
                      "tolerations", "worker", "suspend", "ttlSecondsAfterFinished"}));
  if (auto name = spec.Get("name")) {
    BALLAST_ASSIGN_OR_RETURN(job.name, ReadName(*name, NameKind::kDnsLabel));
  }
  std::optional<uint64_t> items;
  if (auto node = spec.Get("items")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, node->AsInt(1));
    items = static_cast<uint64_t>(value);
  }
  BALLAST_ASSIGN_OR_RETURN(YamlNode workload, spec.Require("workload"));
  BALLAST_ASSIGN_OR_RETURN(job.workload, workload::ParseWorkload(workload, items));
  if (auto policy = spec.Get("policy")) {
    BALLAST_ASSIGN_OR_RETURN(job.policy, balance::ParsePolicySpec(*policy));
  }
  BALLAST_ASSIGN_OR_RETURN(job.profile, ReadOr(spec, "profile", job.profile, &YamlNode::AsString));
  BALLAST_ASSIGN_OR_RETURN(job.lease_seconds,
                           ReadOr(spec, "leaseSeconds", job.lease_seconds, &YamlNode::AsPositive));
  if (auto backoff = spec.Get("backoffLimit")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, backoff->AsInt(0, 1000));
    job.backoff_limit = static_cast<uint32_t>(value);
  }
  if (auto deadline = spec.Get("activeDeadlineSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(job.active_deadline_s, deadline->AsPositive());
  }
  if (auto verify = spec.Get("verify")) {
    BALLAST_ASSIGN_OR_RETURN(job.verify_fraction, ParseVerifyFraction(*verify));
  }
  return job;
}

StatusOr<ClusterSpec> ParseCluster(std::string_view yaml, const std::string& file_name) {
  BALLAST_ASSIGN_OR_RETURN(YamlNode root, YamlNode::Parse(yaml, file_name));
  BALLAST_RETURN_IF_ERROR(root.ExpectMap({"nodes"}));
  BALLAST_ASSIGN_OR_RETURN(YamlNode nodes, root.Require("nodes"));
  BALLAST_RETURN_IF_ERROR(nodes.ExpectSequence());
  ClusterSpec cluster;
  for (const YamlNode& element : nodes.Elements()) {
    BALLAST_ASSIGN_OR_RETURN(EmulatedNode node, ParseNode(element));
    for (const EmulatedNode& other : cluster.nodes) {
      if (other.name == node.name) {
        return element.Fail(fmt::format("duplicate node name '{}'", node.name));
      }
    }
    cluster.nodes.push_back(std::move(node));
  }
  return cluster;
}

}  // namespace ballast::job
