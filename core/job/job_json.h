// The one reader of a job and of a cluster: the `spec` of a WeightedJob as a
// JSON tree (what the API server hands the operator, or what ParseJob made
// of a YAML file, config/document.h) into a JobSpec, and a cluster file's
// tree into a ClusterSpec. Every error names the field's path as the user
// wrote it and what was there:
//
//   spec.workload.primes.limit: expected an integer in [2, 1000000000000000], got "abc"
//   spec.policy.chunk: expected an integer in [1, 1000000000000000], got 0
//
// `items` is a count; `itemsFrom` instead lists the items by value (exec
// only; docs/workloads.md), as `envFrom` does for variables:
//   itemsFrom: {list: [a.jpg, {value: b.jpg, cost: 20480}]}
//   itemsFrom: {configMap: {name: photos, key: list.txt}, format: cost-value}
//   itemsFrom: {file: photos.txt, format: value}        # ballast run
// A list given by reference is left in JobSpec::item_source for ResolveItems.
//
// The Kubernetes-only keys (nodeSelector, tolerations, worker, template,
// suspend, ttlSecondsAfterFinished, podTTLSecondsAfterFinished,
// workerStartTimeoutSeconds) are allowed and
// left to the operator, which reads them beside this
// (operator/api/weighted_job.h, kube_views.h).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "core/common/status.h"
#include "core/job/job_spec.h"

namespace ballast::job {

// The job described by `spec`, named `name`. Returns Invalid
// "<path>.<field>: expected ..., got ..." for an unknown key, a missing or
// mistyped field, a value out of range, an unknown policy or policy option,
// or items that do not fit the workload.
StatusOr<JobSpec> JobSpecFromJson(const nlohmann::json& spec, std::string_view name,
                                  std::string_view path = "spec");

// Gives `job`, whose items are listed outside it (job->item_source.pending()),
// the items in `text` (the ConfigMap's value or the file's contents), one a
// line in job->item_source.format (workload/item_list.h). Returns Invalid
// "<where>:<line>: ..." for a bad line, or "<where>: ..." when the list does
// not fit the job; on success the source is cleared and the job can run.
Status ResolveItems(JobSpec* job, std::string_view text, std::string_view where);

// The cluster described by `cluster` ({nodes: [...]}). Returns Invalid
// "<path>.nodes[i].<field>: ..." for an empty node list, a node name that is
// not a DNS-1123 subdomain (as Kubernetes names nodes), a duplicate name, a
// speed outside [cluster::kMinRunSpeed, cluster::kMaxRunSpeed], a label value
// that is not a string, number or boolean, or a field only a scenario's node
// has (cluster::NodesFromJson under cluster::kRunNodes).
StatusOr<ClusterSpec> ClusterFromJson(const nlohmann::json& cluster, std::string_view path = "");

}  // namespace ballast::job
