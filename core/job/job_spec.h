// JobSpec and ClusterSpec: what `ballast run` reads.
//
// A job file is the `spec` of a WeightedJob (docs/jobs.md), either bare or as
// the whole manifest (apiVersion / kind: WeightedJob / metadata / spec):
//   workload:            # exactly one of primes, matmul, exec (workload/workload.h)
//     primes: {limit: 300000, method: trial}
//   items: 150000        # optional for primes and matmul
//   policy: adaptive     # or {name: selfsched, chunk: 8}
//   profile: raspberry-pi
//   leaseSeconds: 30
//   backoffLimit: 3
//   activeDeadlineSeconds: 600
//   verify: {fraction: 0.05}   # optional: 0 < fraction <= 1
//   failurePolicy: {maxFailedItems: 2}   # items that may fail all their attempts
// Keys that matter only on Kubernetes (nodeSelector, tolerations, worker,
// template, suspend, ttlSecondsAfterFinished, podTTLSecondsAfterFinished,
// workerStartTimeoutSeconds) are accepted and ignored locally.
//
// A cluster file lists emulated nodes:
//   nodes:
//     - {name: pi4b-1, speed: 0.5, labels: {ballast.io/cpu-model: cortex-a72, …}}
// where speed is the fraction of one core of this machine the node gets.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/balance/policy_options.h"
#include "core/cluster/emulated_node.h"
#include "core/common/status.h"
#include "core/workload/workload.h"

namespace ballast::job {

// Where a job's list of items is when it is not in the job itself
// (docs/workloads.md, "Items by value"): a ConfigMap's key on Kubernetes, or
// a file beside the job for `ballast run`. ResolveItems reads it in.
struct ItemSource {
  std::string config_map;  // items.configMap.name
  std::string key;         // items.configMap.key
  std::string file;        // items.file, relative to the job file's directory
  workload::LineFormat format = workload::LineFormat::kValue;
  balance::ItemOrder order = balance::ItemOrder::kPolicy;  // itemsFrom.order
  bool pending() const { return !config_map.empty() || !file.empty(); }
  bool operator==(const ItemSource&) const = default;
};

struct JobSpec {
  std::string name = "job";  // a DNS-1123 label
  workload::WorkloadSpec workload;
  balance::PolicySpec policy;               // adaptive, its options at their defaults
  std::string profile = "raspberry-pi";     // a built-in or WeightProfile name, or a file
  double lease_seconds = 30;                // a silent worker loses its lease after this
  uint32_t backoff_limit = 3;               // restarts of a failed worker
  std::optional<double> active_deadline_s;  // the job fails when it runs longer
  // `verify: {fraction: f}`: recompute a sample of about f of the items on
  // another worker and fail on a mismatch (docs/trust.md); 0: off.
  double verify_fraction = 0;
  // `failurePolicy: {maxFailedItems: n}`: how many items may fail all their
  // attempts (workload.exec.retries + 1) and the job still succeed; one more
  // fails the job at once, the rest not computed (a Job's maxFailedIndexes).
  // Unset (the default): every other item is computed, and the job then
  // fails when any item failed (a Job with backoffLimitPerIndex alone).
  std::optional<uint64_t> max_failed_items;
  // Set when the items are listed outside the job: until ResolveItems reads
  // them, workload.items is 0 and the job cannot run.
  ItemSource item_source;
};

// A node of a cluster file: the one node record (cluster/emulated_node.h),
// read under cluster::kRunNodes (speed in [0.001, 64] cores of this machine,
// joinAt and leaveAt within a year; the simulator's own fields refused).
using cluster::EmulatedNode;

struct ClusterSpec {
  std::vector<EmulatedNode> nodes;
};

// The job in the YAML text of a job file: the spec bare, or a whole
// WeightedJob manifest, read by JobSpecFromJson (job_json.h). Returns Invalid
// "file:line:col: <path>: ..." naming where the fault was written. The
// job's name (metadata.name, or spec `name`) must be a DNS-1123 label
// (common/names.h): it becomes part of URLs, cgroup and pod names and a label
// value, which Kubernetes limits to 63 characters.
StatusOr<JobSpec> ParseJob(std::string_view yaml, const std::string& file_name);
// The cluster in the YAML text of a cluster file, read by ClusterFromJson
// (job_json.h). Returns Invalid "file:line:col: <path>: ..." (an empty node
// list, a node name that is not a DNS-1123 subdomain, as Kubernetes names
// nodes, a duplicate name, a speed outside [cluster::kMinRunSpeed,
// cluster::kMaxRunSpeed], a joinAt or leaveAt outside [0,
// cluster::kMaxRunEventSeconds], a simulator's field, a leaveAt not after
// its joinAt, every node joining late).
StatusOr<ClusterSpec> ParseCluster(std::string_view yaml, const std::string& file_name);

}  // namespace ballast::job
