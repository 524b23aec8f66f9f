// Typed views of the Kubernetes objects Decide (decide.h) looks at — the
// WeightedJob's metadata, its worker pods and the nodes — holding only the
// fields Decide and its helpers read. Made once per pass from the JSON the
// API server (an informer's cache) holds, so Decide reads plain fields.
//
// The readers never throw and never fail: a field that is absent, null or of
// another type than the API server's schema gives it reads as absent (an
// empty string, false, nullopt, an empty list), and an element of a list
// that is not an object is skipped. E.g. a pod whose "metadata.name" is 5
// reads with name "", a node whose "status.conditions" is "x" as not Ready.
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/probe/board_conditions.h"

namespace ballast::api {

// metadata of any object.
struct ObjectMeta {
  std::string name;
  std::string ns;  // metadata.namespace ("" for a cluster-scoped object)
  std::string uid;
  bool deleting = false;  // metadata.deletionTimestamp is set
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> owner_uids;  // metadata.ownerReferences[].uid
  std::string creation_timestamp;       // metadata.creationTimestamp (RFC 3339); "" when absent

  // True when one of the owner references has `uid`.
  bool OwnedBy(const std::string& uid) const;
  bool operator==(const ObjectMeta&) const = default;
};

// A WeightedJob as Decide reads it besides its spec (ParsedSpec).
struct JobView {
  ObjectMeta meta;
  int64_t generation = 0;  // metadata.generation; 0 when absent
  // status.conditions holds Complete or Failed with status True: the job
  // says it is finished (whoever wrote it; only the operator may).
  bool claims_finished = false;
  bool operator==(const JobView&) const = default;
};

// status.phase of a pod; kUnknown also for an absent or unknown phase.
enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

// One of status.initContainerStatuses or status.containerStatuses.
struct ContainerView {
  std::string name;
  std::string image;
  // state.waiting: why the container does not run yet ("" when it runs).
  std::string waiting_reason;
  std::string waiting_message;
  // state.terminated, when the container ended.
  struct Terminated {
    std::optional<int64_t> exit_code;
    std::string message;      // the termination message ("" for none)
    std::string started_at;   // state.terminated.startedAt (RFC 3339)
    std::string finished_at;  // state.terminated.finishedAt (RFC 3339)
    bool operator==(const Terminated&) const = default;
  };
  std::optional<Terminated> terminated;
  std::string started_at;  // state.running.startedAt (RFC 3339); "" when not running
  bool operator==(const ContainerView&) const = default;
};

struct PodView {
  ObjectMeta meta;
  PodPhase phase = PodPhase::kUnknown;
  std::string reason;  // status.reason, e.g. "Evicted"
  std::vector<ContainerView> init_containers;
  std::vector<ContainerView> containers;
  // lastTransitionTime (RFC 3339; "" when absent) of the conditions
  // PodScheduled and PodReadyToStartContainers (the sandbox and its network
  // are made: what follows is pulling images and starting containers), when
  // their status is "True".
  std::string scheduled_at;
  std::string sandbox_ready_at;
  bool operator==(const PodView&) const = default;
};

// spec.taints[] of a node.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  bool operator==(const Taint&) const = default;
};

struct NodeView {
  ObjectMeta meta;
  bool ready = false;          // the Ready condition's status is "True"
  bool unschedulable = false;  // spec.unschedulable (cordoned)
  std::vector<Taint> taints;
  std::optional<double> cpu_cores;  // status.capacity.cpu (CpuCores)
  // status.nodeInfo.containerRuntimeVersion ("containerd://2.1.4") and
  // .kubeletVersion ("v1.36.2"): whether its pods can mount image volumes
  // (operator/controller/worker_bundle.h).
  std::string container_runtime;
  std::string kubelet_version;
  // The node probe's conditions BallastBoard* (core/probe/board_conditions.h).
  std::vector<probe::BoardCondition> board_conditions;
  bool operator==(const NodeView&) const = default;
};

// The views of `object` (the whole object, not its metadata). Never fail,
// never throw.
ObjectMeta ReadMeta(const nlohmann::json& object);
JobView ReadJob(const nlohmann::json& job);
PodView ReadPod(const nlohmann::json& pod);
NodeView ReadNode(const nlohmann::json& node);

// The cores a Kubernetes CPU quantity names: "500m" 0.5, "2", "1.5", or a
// JSON number. nullopt for anything else — another suffix, an exponent, a
// value of 0 or less, text longer than 32 characters — which callers read
// as "not stated".
std::optional<double> CpuCores(const nlohmann::json& quantity);

}  // namespace ballast::api
