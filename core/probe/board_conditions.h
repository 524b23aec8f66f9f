// The board's own account as Node conditions, in the style of
// node-problem-detector (docs/probe.md, "Node conditions"): what the firmware
// (get_throttled), the rpi_volt hwmon device and the kernel's cgroup files
// say of the board becomes conditions on its Node's status, written by the probe, and an Event on
// the Node each time one changes. A condition is True while there is a problem.
//
//   BallastBoardUnderVoltage  True  UnderVoltageNow        the supply is under-voltage now
//                                   UnderVoltageSinceBoot  it was, since the board booted
//                             False SupplyOk               neither (or: not now, where only
//                                                          the hwmon alarm is exposed)
//   BallastBoardThrottled     True  ThrottledNow           the firmware caps the frequency,
//                                                          throttles or holds the soft
//                                                          temperature limit now
//                                   ThrottledSinceBoot     it did, since the board booted
//                             False NotThrottled           neither
//   BallastBoardNoMemoryCgroup True MemoryCgroupDisabled   the kernel's memory cgroup
//                                                          controller is off, and the
//                                                          command line says so
//                                   MemoryCgroupMissing    it is off or absent, the
//                                                          command line silent
//                             False MemoryCgroupPresent    the kernel offers it
//
// The under-voltage condition comes from get_throttled (bits 0x1 and
// 0x10000), else from the rpi_volt alarm (now only); the throttled one from
// get_throttled alone (bits 0x2, 0x4, 0x8 and 0x20000, 0x40000, 0x80000). A
// board that exposes neither gets no condition, and a condition it can no
// longer read is left on the Node as it was. The memory cgroup condition
// comes from Facts::memory_cgroup (the root's cgroup.controllers, else
// /proc/cgroups), on any machine, Raspberry Pi or not; none when unknown.
//
// lastTransitionTime moves only when a condition's status flips (a reason
// that moves from ...Now to ...SinceBoot keeps it), so "True since T" reads
// as "since T". Events only on transitions: a Warning when a condition
// becomes True or its reason changes while True, a Normal one when it
// becomes False after being True or its trouble stops being present
// (...Now to ...SinceBoot); none for a condition that appears False.
//
// Thread-safety: plain values and pure functions; safe from any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe/facts.h"

namespace ballast::probe {

inline constexpr std::string_view kUnderVoltageCondition = "BallastBoardUnderVoltage";
inline constexpr std::string_view kThrottledCondition = "BallastBoardThrottled";
inline constexpr std::string_view kNoMemoryCgroupCondition = "BallastBoardNoMemoryCgroup";
// Every condition type the probe writes starts with this.
inline constexpr std::string_view kBoardConditionPrefix = "BallastBoard";

struct BoardCondition {
  std::string type;                  // kUnderVoltageCondition, kThrottledCondition, ...
  std::string status;                // "True" or "False"
  std::string reason;                // CamelCase, as above
  std::string message;               // what the board said, with the file and its bits
  std::string last_transition_time;  // RFC 3339 UTC; "" in BoardConditions' answer
  bool operator==(const BoardCondition&) const = default;
};

// The conditions `facts` give, in the order above, without times; empty for
// a board that exposes none of the sources. Messages are at most 512 bytes.
std::vector<BoardCondition> BoardConditions(const Facts& facts);

// One sentence of the board's state for an Event or a log: "SoC at 81.3 °C"
// where the temperature is known, else "".
std::string TemperatureNote(const Facts& facts);

// What the True conditions among `conditions` say, for another message (the
// operator's NodeBelowBaseline Event): "under-voltage since
// 2026-11-27T08:40:00Z (BallastBoardUnderVoltage: <message>)", and
// "throttling since ..." joined by "; " when both; "" when none is True.
// A condition without a time says "(time unknown)" in its place.
std::string DescribeBoardProblems(const std::vector<BoardCondition>& conditions);

// Every condition in a Node object's status.conditions, in the Node's order,
// each in BoardCondition's shape (metav1.Condition's fields as written; a
// field that is not a string reads ""): Ready and the others as well as the
// probe's. Entries that are not objects are skipped. Never fails.
std::vector<BoardCondition> ReadNodeConditions(const nlohmann::json& node);

// Of a Node's conditions (ReadNodeConditions), those of types starting with
// kBoardConditionPrefix, in the Node's order, the first of each type.
std::vector<BoardCondition> BoardConditionsAmong(const std::vector<BoardCondition>& conditions);

// The conditions of types starting with kBoardConditionPrefix in a Node
// object's status.conditions, in the Node's order, the first of each type;
// entries of other shapes are skipped. Never fails.
// BoardConditionsAmong(ReadNodeConditions(node)).
std::vector<BoardCondition> ReadBoardConditions(const nlohmann::json& node);

struct ConditionEvent {
  std::string type;  // "Warning" or "Normal"
  std::string reason;
  std::string message;
};

struct BoardConditionDecision {
  // What to write to the Node's status: every wanted condition with its
  // lastTransitionTime (kept, or `now` where its status flips or it is new);
  // empty when the Node already says all of it (status, reason, message).
  std::vector<BoardCondition> write;
  // The Events of the transitions (above), in the order of `wanted`.
  std::vector<ConditionEvent> events;
};

// What to write and tell when the Node carries `on_node` (ReadBoardConditions,
// or what the probe last wrote) and the board now gives `wanted`
// (BoardConditions). `now` is the time to stamp, RFC 3339 UTC; `note` is
// added to the Events' messages when not empty (TemperatureNote).
BoardConditionDecision DecideBoardConditions(const std::vector<BoardCondition>& on_node,
                                             const std::vector<BoardCondition>& wanted,
                                             std::string_view now, std::string_view note);

// The server-side apply document of Node `node`'s status holding
// `conditions` (type, status, reason, message, lastTransitionTime and
// lastHeartbeatTime `now`): applied to the status subresource it sets these
// types and leaves the kubelet's conditions alone (status.conditions is a
// list map keyed by type).
nlohmann::json BoardConditionsApplyObject(const std::string& node,
                                          const std::vector<BoardCondition>& conditions,
                                          std::string_view now);

}  // namespace ballast::probe
