// BoardConditionWriter: writes the board's own account onto its Node's
// status as conditions (core/probe/board_conditions.h: BallastBoardUnderVoltage,
// BallastBoardThrottled) and posts an Event on the Node for each transition
// (docs/probe.md, "Node conditions").
//
// The conditions go by server-side apply to the Node's status subresource,
// as the probe's field manager: status.conditions is a list map keyed by
// type, so the kubelet's conditions (Ready, MemoryPressure, ...) and any
// other manager's are left alone. The first Update reads the Node, so a probe
// that restarts keeps each condition's lastTransitionTime and posts no Event
// for what the Node already says; later ones compare with what it last
// wrote and write only on a change.
//
// Thread-safety: not thread-safe; one probe loop owns it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/probe/board_conditions.h"
#include "net/kube/client.h"

namespace ballast::worker {

class BoardConditionWriter {
 public:
  BoardConditionWriter(kube::KubeClient& client, std::string node, std::string field_manager);

  // Brings the Node's conditions to `wanted` (probe::BoardConditions) and
  // posts the transitions' Events, each with `note` (probe::TemperatureNote)
  // added. Nothing is written when `wanted` is empty (a board that exposes
  // neither source) or the Node already says it. Returns Ok, or the API
  // server's error (NotFound when the Node does not exist, Invalid when RBAC
  // forbids nodes/status); after an error the next Update reads the Node
  // again. An Event that fails to post after its condition was written is
  // not posted again: the condition says it.
  Status Update(const std::vector<probe::BoardCondition>& wanted, const std::string& note);

  // Conditions written and Events posted so far.
  int writes() const { return writes_; }
  int events() const { return events_; }

 private:
  kube::KubeClient& client_;
  std::string node_;
  std::string field_manager_;
  bool read_ = false;
  nlohmann::json node_object_;                  // the Node as last read or written
  std::vector<probe::BoardCondition> on_node_;  // its board conditions
  int writes_ = 0;
  int events_ = 0;
};

}  // namespace ballast::worker
