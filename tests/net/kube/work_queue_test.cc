// WorkQueue: dedup, one worker per key, delays, per-key backoff, shutdown, and
// randomized concurrency (the seed is printed; BALLAST_SEED replays one).
#include "net/kube/work_queue.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace ballast::kube {
namespace {

using std::chrono::milliseconds;

TEST(WorkQueue, DeduplicatesQueuedKeys) {
  WorkQueue queue;
  queue.Add("a");
  queue.Add("b");
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 2u);
  EXPECT_EQ(queue.Get().value(), "a");
  EXPECT_EQ(queue.Get().value(), "b");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(WorkQueue, KeyAddedWhileProcessingIsRequeuedAfterDone) {
  WorkQueue queue;
  queue.Add("a");
  ASSERT_EQ(queue.Get().value(), "a");
  queue.Add("a");  // while a worker holds it
  queue.Add("a");
  EXPECT_EQ(queue.Len(), 0u) << "a held key must not be handed to a second worker";
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 1u);
  EXPECT_EQ(queue.Get().value(), "a");
  queue.Done("a");
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(WorkQueue, AddAfterWaitsAndKeepsTheEarliestDeadline) {
  WorkQueue queue;
  const auto start = WorkQueue::Clock::now();
  queue.AddAfter("late", milliseconds(5000));
  queue.AddAfter("late", milliseconds(50));  // earlier wins
  queue.AddAfter("later", milliseconds(200));
  EXPECT_EQ(queue.Len(), 0u);
  EXPECT_EQ(queue.Get().value(), "late");
  EXPECT_GE(WorkQueue::Clock::now() - start, milliseconds(50));
  EXPECT_EQ(queue.Get().value(), "later");
  EXPECT_GE(WorkQueue::Clock::now() - start, milliseconds(200));
}

TEST(WorkQueue, RateLimitedBackoffDoublesPerKeyUntilForget) {
  WorkQueue queue(milliseconds(20), milliseconds(80));
  std::vector<milliseconds> waits;
  for (int i = 0; i < 4; ++i) {
    const auto start = WorkQueue::Clock::now();
    queue.AddRateLimited("k");
    ASSERT_EQ(queue.Get().value(), "k");
    queue.Done("k");
    waits.push_back(std::chrono::duration_cast<milliseconds>(WorkQueue::Clock::now() - start));
  }
  EXPECT_EQ(queue.NumRequeues("k"), 4);
  // 20, 40, 80, 80 (capped): each at least its delay.
  EXPECT_GE(waits[0], milliseconds(20));
  EXPECT_GE(waits[1], milliseconds(40));
  EXPECT_GE(waits[2], milliseconds(80));
  EXPECT_GE(waits[3], milliseconds(80));
  EXPECT_EQ(queue.NumRequeues("other"), 0);
  queue.Forget("k");
  EXPECT_EQ(queue.NumRequeues("k"), 0);
}

TEST(WorkQueue, BackoffCapHoldsForManyFailures) {
  WorkQueue queue(milliseconds(5), std::chrono::seconds(1000));
  for (int i = 0; i < 200; ++i) queue.AddRateLimited("k");  // no overflow past the cap
  EXPECT_EQ(queue.NumRequeues("k"), 200);
  EXPECT_EQ(queue.Len(), 0u);
}

TEST(WorkQueue, ShutDownWakesGettersAfterDraining) {
  WorkQueue queue;
  std::atomic<int> ended{0};
  std::vector<std::thread> getters;
  for (int i = 0; i < 3; ++i) {
    getters.emplace_back([&] {
      EXPECT_FALSE(queue.Get().has_value());
      ++ended;
    });
  }
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(ended.load(), 0);
  queue.ShutDown();
  for (auto& t : getters) t.join();
  EXPECT_EQ(ended.load(), 3);

  WorkQueue draining;
  draining.Add("left");
  draining.AddAfter("delayed", milliseconds(10));
  draining.ShutDown();
  draining.Add("ignored");
  EXPECT_EQ(draining.Get().value(), "left");
  EXPECT_FALSE(draining.Get().has_value());
}

// Producers add random keys (some with delays, some rate-limited) while
// workers process them. Checks that no key is ever held by two workers at once
// and that every add is followed by a processing of its key that started
// after it.
TEST(WorkQueue, RandomizedConcurrencyNeverRunsAKeyTwiceAtOnce) {
  const char* env_seed = std::getenv("BALLAST_SEED");
  const uint64_t seed = env_seed ? std::strtoull(env_seed, nullptr, 10) : std::random_device{}();
  std::printf("WorkQueue randomized seed=%llu (BALLAST_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  RecordProperty("seed", std::to_string(seed));

  constexpr int kKeys = 8, kWorkers = 4, kProducers = 3, kAddsEach = 400;
  WorkQueue queue(milliseconds(1), milliseconds(4));
  std::array<std::atomic<int>, kKeys> in_flight{};
  std::array<std::atomic<uint64_t>, kKeys> last_add{}, last_start{};
  std::atomic<uint64_t> clock{0};
  std::atomic<bool> violation{false};

  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937_64 rng(seed + 1000 + w);
      while (auto key = queue.Get()) {
        const int k = std::stoi(*key);
        if (in_flight[k].fetch_add(1) != 0) violation = true;
        last_start[k] = ++clock;
        if (rng() % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
        in_flight[k].fetch_sub(1);
        queue.Done(*key);
      }
    });
  }
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      std::mt19937_64 rng(seed + p);
      for (int i = 0; i < kAddsEach; ++i) {
        const int k = static_cast<int>(rng() % kKeys);
        last_add[k] = ++clock;
        switch (rng() % 3) {
          case 0:
            queue.Add(std::to_string(k));
            break;
          case 1:
            queue.AddAfter(std::to_string(k), milliseconds(rng() % 3));
            break;
          default:
            queue.AddRateLimited(std::to_string(k));
            break;
        }
        if (rng() % 8 == 0) std::this_thread::yield();
      }
    });
  }
  for (auto& t : producers) t.join();
  // Everything added is eventually processed after its last add.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto caught_up = [&] {
    for (int k = 0; k < kKeys; ++k) {
      if (last_add[k] != 0 && last_start[k] < last_add[k]) return false;
    }
    return true;
  };
  while (!caught_up() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(5));
  }
  queue.ShutDown();
  for (auto& t : workers) t.join();
  EXPECT_FALSE(violation.load()) << "a key was processed by two workers at once, seed=" << seed;
  EXPECT_TRUE(caught_up()) << "an added key was never processed after its add, seed=" << seed;
}

}  // namespace
}  // namespace ballast::kube
