// JobSpecFromJson and ClusterFromJson: the one reader of each kind, over the
// tree with common/json_read.h, so that nothing throws and every error names
// its path.
#include "core/job/job_json.h"

#include <fmt/format.h>

#include "core/balance/policy_options.h"
#include "core/common/json_read.h"
#include "core/common/names.h"
#include "core/workload/workload.h"

namespace ballast::job {
namespace {

using nlohmann::json;
namespace jr = json_read;

// The longest `profile` value: a name, or a file's path.
constexpr size_t kMaxProfileBytes = 4096;

// The name at `path`, checked as a name of `kind` (common/names.h).
StatusOr<std::string> ReadName(const json& value, const std::string& path, NameKind kind) {
  BALLAST_ASSIGN_OR_RETURN(std::string name, jr::String(value, path));
  if (Status checked = CheckName(name, kind); !checked.ok()) {
    return Status::Invalid(fmt::format("{}: {}", path, checked.message()));
  }
  return name;
}

StatusOr<EmulatedNode> ReadNode(const json& node, const std::string& path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"name", "speed", "labels"}));
  EmulatedNode out;
  BALLAST_ASSIGN_OR_RETURN(const json* name, jr::Require(node, path, "name"));
  BALLAST_ASSIGN_OR_RETURN(out.name,
                           ReadName(*name, jr::Field(path, "name"), NameKind::kDnsSubdomain));
  BALLAST_ASSIGN_OR_RETURN(const json* speed, jr::Require(node, path, "speed"));
  const bool in_range = speed->is_number() && speed->get<double>() >= kMinNodeSpeed &&
                        speed->get<double>() <= kMaxNodeSpeed;
  if (!in_range) {
    return jr::Expected(
        jr::Field(path, "speed"),
        fmt::format("a fraction of one core in [{}, {}]", kMinNodeSpeed, kMaxNodeSpeed), *speed);
  }
  out.speed = speed->get<double>();
  if (const json* labels = jr::Find(node, "labels")) {
    const std::string labels_path = jr::Field(path, "labels");
    if (!labels->is_object()) return jr::Expected(labels_path, "a map of label: value", *labels);
    for (const auto& [key, value] : labels->items()) {
      BALLAST_ASSIGN_OR_RETURN(out.labels[key], jr::LabelValue(value, jr::Field(labels_path, key)));
    }
  }
  return out;
}

}  // namespace

StatusOr<JobSpec> JobSpecFromJson(const json& spec, std::string_view name, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(spec, path,
                       {"name", "workload", "items", "policy", "profile", "leaseSeconds",
                        "backoffLimit", "activeDeadlineSeconds", "verify", "nodeSelector",
                        "tolerations", "worker", "template", "suspend", "ttlSecondsAfterFinished"}));
  JobSpec job;
  job.name = std::string(name);
  if (const json* own_name = jr::Find(spec, "name")) {
    BALLAST_ASSIGN_OR_RETURN(job.name,
                             ReadName(*own_name, jr::Field(path, "name"), NameKind::kDnsLabel));
  }
  std::optional<uint64_t> items;
  if (const json* node = jr::Find(spec, "items")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*node, jr::Field(path, "items"), 1));
    items = static_cast<uint64_t>(value);
  }
  BALLAST_ASSIGN_OR_RETURN(const json* workload, jr::Require(spec, path, "workload"));
  BALLAST_ASSIGN_OR_RETURN(
      job.workload, workload::WorkloadSpecFromJson(*workload, items, jr::Field(path, "workload")));
  if (const json* policy = jr::Find(spec, "policy")) {
    BALLAST_ASSIGN_OR_RETURN(job.policy,
                             balance::PolicyFromJson(*policy, jr::Field(path, "policy")));
  }
  if (const json* profile = jr::Find(spec, "profile")) {
    const std::string profile_path = jr::Field(path, "profile");
    BALLAST_ASSIGN_OR_RETURN(job.profile, jr::String(*profile, profile_path));
    if (job.profile.empty() || job.profile.size() > kMaxProfileBytes) {
      return jr::Expected(profile_path,
                          fmt::format("a profile's name or file (1 to {} bytes)", kMaxProfileBytes),
                          *profile);
    }
  }
  if (const json* lease = jr::Find(spec, "leaseSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(job.lease_seconds,
                             jr::Positive(*lease, jr::Field(path, "leaseSeconds")));
  }
  if (const json* backoff = jr::Find(spec, "backoffLimit")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value,
                             jr::Int(*backoff, jr::Field(path, "backoffLimit"), 0, 1000));
    job.backoff_limit = static_cast<uint32_t>(value);
  }
  if (const json* deadline = jr::Find(spec, "activeDeadlineSeconds")) {
    BALLAST_ASSIGN_OR_RETURN(job.active_deadline_s,
                             jr::Positive(*deadline, jr::Field(path, "activeDeadlineSeconds")));
  }
  if (const json* verify = jr::Find(spec, "verify")) {
    const std::string verify_path = jr::Field(path, "verify");
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(*verify, verify_path, {"fraction"}));
    BALLAST_ASSIGN_OR_RETURN(const json* fraction, jr::Require(*verify, verify_path, "fraction"));
    BALLAST_ASSIGN_OR_RETURN(job.verify_fraction,
                             jr::Positive(*fraction, jr::Field(verify_path, "fraction"), 1.0));
  }
  return job;
}

StatusOr<ClusterSpec> ClusterFromJson(const json& cluster, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(cluster, path, {"nodes"}));
  BALLAST_ASSIGN_OR_RETURN(const json* nodes, jr::Require(cluster, path, "nodes"));
  const std::string nodes_path = jr::Field(path, "nodes");
  if (!nodes->is_array() || nodes->empty()) {
    return jr::Expected(nodes_path, "a non-empty list of nodes", *nodes);
  }
  ClusterSpec out;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const std::string node_path = jr::Element(nodes_path, i);
    BALLAST_ASSIGN_OR_RETURN(EmulatedNode node, ReadNode((*nodes)[i], node_path));
    for (const EmulatedNode& other : out.nodes) {
      if (other.name == node.name) {
        return Status::Invalid(
            fmt::format("{}: duplicate node name '{}'", jr::Field(node_path, "name"), node.name));
      }
    }
    out.nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace ballast::job
