// The simulator's clock: its events in virtual time. Events come out by
// time, and events of the same time in the order they were pushed — part of
// the contract, since a simulation's figures depend on that order (a report
// and a wake-up due at the same instant, say).
//
// Thread-safety: none; one simulation owns its queue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <variant>
#include <vector>

#include "core/balance/policy.h"

namespace ballast::sim {

// What travels with an event: a worker's report to the coordinator, or the
// coordinator's reply to a worker.
using Message = std::variant<std::monostate, balance::Report, balance::Reply>;

struct Event {
  enum class Kind {
    kWake,         // a worker reaches its next decision point (SimWorker::Wake)
    kSpeedChange,  // the node's true speed changes (EmulatedNode::changes)
    kArrive,       // a report reaches the coordinator
    kDeliver,      // a reply reaches the worker
    kSignal,       // the coordinator's signal reaches the worker
    kFail,         // the node dies (EmulatedNode::fail_at)
    kLost,         // the coordinator declares the dead node's worker lost
    kTick,         // the policy's timer (Policy::NextTick)
    kJoin,         // the node joins the running job (EmulatedNode::join_at)
    kLeave,        // the node is drained (EmulatedNode::leave_at)
    kLeaving,      // a drained worker's last report reaches the coordinator
  };
  double time = 0;
  uint64_t seq = 0;  // the order of pushing: breaks ties of time
  Kind kind = Kind::kWake;
  size_t node = 0;     // the node's index in the scenario (not its policy id)
  uint64_t epoch = 0;  // kWake: the worker's epoch when it was scheduled
  Message message;

  bool operator>(const Event& other) const {
    return time != other.time ? time > other.time : seq > other.seq;
  }
};

class EventQueue {
 public:
  // Schedules an event at `time` (any number; an earlier time than events
  // already popped is the caller's mistake, not checked).
  void Push(double time, Event::Kind kind, size_t node, uint64_t epoch = 0, Message message = {});

  bool empty() const { return queue_.empty(); }
  // The earliest event, removed; of those at its time, the first pushed.
  // Requires !empty().
  Event Pop();

 private:
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  uint64_t seq_ = 0;
};

}  // namespace ballast::sim
