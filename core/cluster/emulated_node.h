// EmulatedNode: one board of a cluster that is not there — a node `ballast
// run` starts a worker for (a cluster file, docs/local-mode.md) or one the
// simulator computes in virtual time (a scenario's `nodes`,
// docs/simulator.md). Both files spell a node alike and NodesFromJson reads
// both; the fields past `leave_at` are the simulator's alone (a link, a
// failure, a throttle: what `ballast run` cannot emulate), and a cluster
// file that writes one is refused with a message that says so.
//
//   - name: pi4b-1                 # a DNS-1123 subdomain, as Kubernetes names nodes
//     labels: {ballast.io/cpu-model: cortex-a72}   # read by the weight profile
//     speed: 0.5                   # run: cores of this machine; simulate: true speed
//     joinAt: 40                   # optional: joins the running job then
//     leaveAt: 90                  # optional: drained then (after joinAt)
//
// Thread-safety: values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/common/status.h"

namespace ballast::cluster {

struct SpeedChange {
  double at = 0;     // seconds from the start
  double speed = 1;  // new speed, > 0
};

struct EmulatedNode {
  std::string name;  // a DNS-1123 subdomain
  std::map<std::string, std::string> labels;
  // `ballast run`: the fraction of one core of this machine the node gets
  // (its worker's CPU quota). The simulator: its true speed in cores of
  // speed 1, unknown to the policies.
  double speed = 1;
  // Seconds from the job's start when the node joins it (its worker is added
  // to the running job then); none: from the start. At least one node of a
  // cluster or scenario has none.
  std::optional<double> join_at;
  // Seconds from the job's start when the node is drained (after join_at):
  // its worker hands in what it finished and stops, and the coordinator
  // gives the rest of its lease to the others at once.
  std::optional<double> leave_at;

  // The simulator's alone (NodeRules::simulated).
  std::vector<SpeedChange> changes;      // in ascending time
  double latency = 0;                    // one-way seconds per message
  double bandwidth = 0;                  // bytes/s of its link; 0 = unlimited
  std::optional<double> bytes_per_item;  // overrides the workload's
  std::optional<double> fail_at;         // the node dies at this time (after join_at)
  // Items whose inputs already sit on this node (they cross no link when it
  // computes them). Nodes hold consecutive blocks in file order from item 0.
  uint64_t local_items = 0;
  // The node's CPU quota in cores (its `speed` is what the whole quota
  // computes), or none: no quota, and each item it runs at once has a core
  // of its own (sim::AtOnce).
  std::optional<double> cores;
};

// The bounds of a simulated node's numbers (docs/simulator.md states each
// one): wide enough for any board a scenario models, narrow enough that
// every time and rate the simulator derives stays finite.
struct SimulatedNodeBounds {
  static constexpr double kMinSpeed = 1e-6;  // speed, changes[].speed, cores
  static constexpr double kMaxSpeed = 1e6;
  static constexpr double kMaxLatency = 3600;  // seconds one way
  static constexpr double kMinBandwidth = 1;   // bytes/s
  static constexpr double kMaxBandwidth = 1e15;
  static constexpr double kMaxBytesPerItem = 1e12;
  static constexpr double kMaxTime = 1e9;  // changes[].at, failAt, joinAt, leaveAt (s)
  static constexpr uint64_t kMaxLocalItems = 1'000'000'000'000ULL;
  static constexpr double kMaxCores = 1e6;
};

// The speeds a node of `ballast run` may have, in cores of this machine. The
// smallest is the smallest share either way of holding it can apply: a CPU
// quota of 1000 us (the kernel's minimum) every 1 s (its longest period), or
// the worker's duty cycle (ballast-worker --speed). Below it a node would get
// more than its speed and every figure computed from its speed would be off.
inline constexpr double kMinRunSpeed = 0.001;
inline constexpr double kMaxRunSpeed = 64;
// The most seconds a cluster file's joinAt or leaveAt may say (a year).
inline constexpr double kMaxRunEventSeconds = 365.0 * 24 * 3600;

// What a file's nodes may say: the bounds of speed and of times, and whether
// the simulator's own fields are read.
struct NodeRules {
  double min_speed;
  double max_speed;
  std::string_view speed_unit;  // "expected <speed_unit> in [min, max]"
  double max_seconds;           // joinAt, leaveAt (and failAt, changes[].at)
  std::string_view seconds_unit;
  bool simulated;  // changes, latency, bandwidth, bytesPerItem, failAt, localItems, cores
  std::string_view file_kind;  // "cluster file", "scenario": named in messages
};

inline constexpr NodeRules kRunNodes{kMinRunSpeed,
                                     kMaxRunSpeed,
                                     "a fraction of one core",
                                     kMaxRunEventSeconds,
                                     "seconds from the job's start",
                                     false,
                                     "cluster file"};
inline constexpr NodeRules kSimulatedNodes{SimulatedNodeBounds::kMinSpeed,
                                           SimulatedNodeBounds::kMaxSpeed,
                                           "a speed",
                                           SimulatedNodeBounds::kMaxTime,
                                           "seconds",
                                           true,
                                           "scenario"};

// The nodes of the list at `path` (a cluster file's or a scenario's
// `nodes`), read under `rules`. Returns Invalid "<path>[i].<field>: ..." for
// a list that is empty or not a list, an unknown field (a simulator's field
// in a cluster file named as such), a name that is not a DNS-1123 subdomain
// (common/names.h) or is given twice, a label value that is not a string,
// number or boolean, a number outside its bound (NaN and infinities
// included), changes not in ascending time, a leaveAt (or a joining node's
// failAt) not after its joinAt, or every node joining late.
StatusOr<std::vector<EmulatedNode>> NodesFromJson(const nlohmann::json& nodes,
                                                  const std::string& path, const NodeRules& rules);

// A list of {at, speed} at `path`, times ascending within [0, max_seconds],
// speeds within [min_speed, max_speed] of `rules` (a node's `changes`, or a
// scenario job's). Returns Invalid "<path>[i].<field>: ..." otherwise.
StatusOr<std::vector<SpeedChange>> SpeedChangesFromJson(const nlohmann::json& node,
                                                        const std::string& path,
                                                        const NodeRules& rules);

}  // namespace ballast::cluster
