// JobSpecFromJson and ClusterFromJson: the one reader of each kind, over the
// tree with common/json_read.h, so that nothing throws and every error names
// its path.
#include "core/job/job_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/balance/policy_options.h"
#include "core/cluster/emulated_node.h"
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
    return Status::InvalidAt(path, checked.message());
  }
  return name;
}

// A key of a ConfigMap's data, as the API server accepts them.
bool IsConfigMapKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxDnsSubdomainLength || key == "." || key == "..") {
    return false;
  }
  return std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

// items.configMap: {name, key}.
Status ReadConfigMapSource(const json& node, const std::string& path, ItemSource* source) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(node, path, {"name", "key"}));
  BALLAST_ASSIGN_OR_RETURN(const json* name, jr::Require(node, path, "name"));
  BALLAST_ASSIGN_OR_RETURN(source->config_map,
                           ReadName(*name, jr::Field(path, "name"), NameKind::kDnsSubdomain));
  BALLAST_ASSIGN_OR_RETURN(const json* key, jr::Require(node, path, "key"));
  BALLAST_ASSIGN_OR_RETURN(source->key, jr::String(*key, jr::Field(path, "key")));
  if (!IsConfigMapKey(source->key)) {
    return jr::Expected(jr::Field(path, "key"),
                        "a ConfigMap key (1 to 253 characters: letters, digits, '-', '_', '.')",
                        *key);
  }
  return Status::Ok();
}

// The `items` object: exactly one of list, configMap, file, and a format.
Status ReadItemsObject(const json& node, const std::string& path, workload::ItemList* inline_list,
                       ItemSource* source) {
  BALLAST_RETURN_IF_ERROR(
      jr::ExpectObject(node, path, {"list", "configMap", "file", "format", "order"}));
  std::vector<std::string> members;
  for (const char* name : {"list", "configMap", "file"}) {
    if (jr::Find(node, name)) members.push_back(name);
  }
  if (members.size() != 1) {
    return Status::InvalidAt(
        members.size() > 1 ? jr::Field(path, members[1]) : path,
        fmt::format("expected exactly one of list, configMap, file, got {}",
                    members.empty() ? std::string("none")
                                    : fmt::format("{}", fmt::join(members, " and "))));
  }
  if (const json* format = jr::Find(node, "format")) {
    const std::string format_path = jr::Field(path, "format");
    const auto parsed =
        format->is_string() ? workload::ParseLineFormat(format->get<std::string>()) : std::nullopt;
    if (!parsed) return jr::Expected(format_path, "\"value\" or \"cost-value\"", *format);
    if (members[0] == "list") {
      return Status::InvalidAt(format_path,
                               "format is for a list given one item a line (configMap, file); in "
                               "`list` give {value, cost}");
    }
    source->format = *parsed;
  }
  if (const json* order = jr::Find(node, "order")) {
    const auto parsed =
        order->is_string() ? balance::ParseItemOrder(order->get<std::string>()) : std::nullopt;
    if (!parsed) {
      return jr::Expected(jr::Field(path, "order"), "\"policy\", \"largestFirst\" or \"listed\"",
                          *order);
    }
    source->order = *parsed;
  }
  if (const json* list = jr::Find(node, "list")) {
    BALLAST_ASSIGN_OR_RETURN(*inline_list,
                             workload::InlineItemsFromJson(*list, jr::Field(path, "list")));
    inline_list->order = source->order;
  } else if (const json* config_map = jr::Find(node, "configMap")) {
    BALLAST_RETURN_IF_ERROR(ReadConfigMapSource(*config_map, jr::Field(path, "configMap"), source));
  } else {
    const std::string file_path = jr::Field(path, "file");
    BALLAST_ASSIGN_OR_RETURN(source->file, jr::String(node.at("file"), file_path));
    if (source->file.empty() || source->file.size() > kMaxProfileBytes ||
        source->file.find('\0') != std::string::npos) {
      return jr::Expected(file_path, fmt::format("a file's path (1 to {} bytes)", kMaxProfileBytes),
                          node.at("file"));
    }
  }
  return Status::Ok();
}

}  // namespace

Status ResolveItems(JobSpec* job, std::string_view text, std::string_view where) {
  BALLAST_ASSIGN_OR_RETURN(workload::ItemList list,
                           workload::ParseItemLines(text, job->item_source.format, where));
  list.order = balance::EffectiveItemOrder(job->item_source.order, job->policy);
  // `where` names a file or a ConfigMap's key, not a field: the error keeps
  // its text and carries no path.
  if (Status attached = workload::AttachItems(&job->workload, std::move(list), where);
      !attached.ok()) {
    return Status(attached.code(), attached.message());
  }
  job->item_source = {};
  return Status::Ok();
}

namespace {

// spec.items or spec.itemsFrom, spec.workload and spec.policy: what the job
// computes, in the order its policy deals it.
Status ReadWork(const json& spec, std::string_view path, JobSpec& job) {
  // The policy first: of a spec wrong in its policy and elsewhere, the
  // policy's error is the one told (the operator gives it a reason of its
  // own, InvalidPolicy).
  if (const json* policy = jr::Find(spec, "policy")) {
    BALLAST_ASSIGN_OR_RETURN(job.policy,
                             balance::PolicyFromJson(*policy, jr::Field(path, "policy")));
  }
  std::optional<uint64_t> items;
  std::optional<workload::ItemList> listed;
  const std::string from_path = jr::Field(path, "itemsFrom");
  if (const json* node = jr::Find(spec, "items")) {
    BALLAST_ASSIGN_OR_RETURN(int64_t value, jr::Int(*node, jr::Field(path, "items"), 1));
    items = static_cast<uint64_t>(value);
    if (jr::Find(spec, "itemsFrom")) {
      return Status::InvalidAt(from_path,
                               "give the items' count (items) or their list (itemsFrom), not both");
    }
  } else if (const json* from = jr::Find(spec, "itemsFrom")) {
    listed.emplace();
    BALLAST_RETURN_IF_ERROR(ReadItemsObject(*from, from_path, &*listed, &job.item_source));
    // Until a list given by reference is read, the workload is checked as for one item.
    items = job.item_source.pending() ? 1 : listed->values.size();
  }
  BALLAST_ASSIGN_OR_RETURN(const json* workload, jr::Require(spec, path, "workload"));
  BALLAST_ASSIGN_OR_RETURN(
      job.workload, workload::WorkloadSpecFromJson(*workload, items, jr::Field(path, "workload")));
  if (listed && job.workload.kind != workload::WorkloadKind::kExec) {
    return Status::InvalidAt(
        from_path,
        fmt::format(
            "a list of items is for exec workloads; {} numbers its own items (give a count)",
            workload::WorkloadKindName(job.workload.kind)));
  }
  if (job.item_source.pending()) {
    job.workload.items = 0;
  } else if (listed) {
    listed->order = balance::EffectiveItemOrder(listed->order, job.policy);
    BALLAST_RETURN_IF_ERROR(
        workload::AttachItems(&job.workload, std::move(*listed), jr::Field(from_path, "list")));
  }
  return Status::Ok();
}

// spec.profile, leaseSeconds, backoffLimit, activeDeadlineSeconds, verify and
// failurePolicy: how the job runs.
Status ReadRunSettings(const json& spec, std::string_view path, JobSpec& job) {
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
  if (const json* policy = jr::Find(spec, "failurePolicy")) {
    const std::string policy_path = jr::Field(path, "failurePolicy");
    BALLAST_RETURN_IF_ERROR(jr::ExpectObject(*policy, policy_path, {"maxFailedItems"}));
    if (const json* max = jr::Find(*policy, "maxFailedItems")) {
      BALLAST_ASSIGN_OR_RETURN(int64_t value,
                               jr::Int(*max, jr::Field(policy_path, "maxFailedItems"), 0,
                                       static_cast<int64_t>(workload::kMaxExecItems)));
      job.max_failed_items = static_cast<uint64_t>(value);
    }
  }
  return Status::Ok();
}

}  // namespace

StatusOr<JobSpec> JobSpecFromJson(const json& spec, std::string_view name, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(
      spec, path,
      {"name", "workload", "items", "itemsFrom", "policy", "profile", "leaseSeconds",
       "backoffLimit", "activeDeadlineSeconds", "verify", "nodeSelector", "tolerations", "worker",
       "template", "suspend", "ttlSecondsAfterFinished", "podTTLSecondsAfterFinished",
       "failurePolicy", "workerStartTimeoutSeconds"}));
  JobSpec job;
  job.name = std::string(name);
  if (const json* own_name = jr::Find(spec, "name")) {
    BALLAST_ASSIGN_OR_RETURN(job.name,
                             ReadName(*own_name, jr::Field(path, "name"), NameKind::kDnsLabel));
  }
  BALLAST_RETURN_IF_ERROR(ReadWork(spec, path, job));
  BALLAST_RETURN_IF_ERROR(ReadRunSettings(spec, path, job));
  return job;
}

StatusOr<ClusterSpec> ClusterFromJson(const json& cluster, std::string_view path) {
  BALLAST_RETURN_IF_ERROR(jr::ExpectObject(cluster, path, {"nodes"}));
  BALLAST_ASSIGN_OR_RETURN(const json* nodes, jr::Require(cluster, path, "nodes"));
  const std::string nodes_path = jr::Field(path, "nodes");
  ClusterSpec out;
  BALLAST_ASSIGN_OR_RETURN(out.nodes,
                           cluster::NodesFromJson(*nodes, nodes_path, cluster::kRunNodes));
  return out;
}

}  // namespace ballast::job
