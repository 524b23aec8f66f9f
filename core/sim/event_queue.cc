#include "core/sim/event_queue.h"

#include <utility>

namespace ballast::sim {

void EventQueue::Push(double time, Event::Kind kind, size_t node, uint64_t epoch, Message message) {
  queue_.push(Event{time, seq_++, kind, node, epoch, std::move(message)});
}

Event EventQueue::Pop() {
  Event event = queue_.top();
  queue_.pop();
  return event;
}

}  // namespace ballast::sim
