// Tests of the simulator's clock (core/sim/event_queue.h): events by time,
// ties in the order they were pushed.
#include "core/sim/event_queue.h"

#include <gtest/gtest.h>

#include <variant>
#include <vector>

namespace ballast::sim {
namespace {

TEST(EventQueueTest, EventsComeOutByTime) {
  EventQueue queue;
  queue.Push(3, Event::Kind::kFail, 0);
  queue.Push(1, Event::Kind::kTick, 0);
  queue.Push(2, Event::Kind::kJoin, 1);
  std::vector<double> times;
  while (!queue.empty()) times.push_back(queue.Pop().time);
  EXPECT_EQ(times, (std::vector<double>{1, 2, 3}));
}

TEST(EventQueueTest, EventsOfOneInstantComeOutInTheOrderTheyWerePushed) {
  EventQueue queue;
  for (size_t node = 0; node < 5; ++node) queue.Push(7, Event::Kind::kWake, 4 - node, node);
  queue.Push(6, Event::Kind::kTick, 9);
  EXPECT_EQ(queue.Pop().node, 9u);
  for (size_t node = 0; node < 5; ++node) {
    const Event event = queue.Pop();
    EXPECT_EQ(event.node, 4 - node);
    EXPECT_EQ(event.epoch, node);
  }
  EXPECT_TRUE(queue.empty());
}

TEST(EventQueueTest, AnEventCarriesItsMessage) {
  EventQueue queue;
  balance::Report report;
  report.position = 42;
  queue.Push(1, Event::Kind::kArrive, 2, 0, report);
  const Event event = queue.Pop();
  EXPECT_EQ(event.kind, Event::Kind::kArrive);
  ASSERT_TRUE(std::holds_alternative<balance::Report>(event.message));
  EXPECT_EQ(std::get<balance::Report>(event.message).position, 42u);
}

}  // namespace
}  // namespace ballast::sim
