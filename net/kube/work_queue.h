// WorkQueue: the rate-limited queue of object keys ("ns/name") between
// informers and reconcile workers, after client-go's workqueue.
//
// Guarantees:
//  - a key waiting in the queue is there once, however often it is added;
//  - a key is never handed to two workers at once: a key added while a worker
//    holds it (between Get and Done) is queued again when Done is called;
//  - AddAfter(key, d) queues the key once d has passed (the earliest of
//    several pending deadlines wins);
//  - AddRateLimited(key) waits base * 2^failures (capped) where failures
//    counts AddRateLimited calls since the last Forget(key);
//  - ShutDown wakes every Get: Get still hands out what is queued, then
//    returns nullopt; keys waiting for a deadline are dropped.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace ballast::kube {

class WorkQueue {
 public:
  using Clock = std::chrono::steady_clock;
  using Duration = std::chrono::milliseconds;

  explicit WorkQueue(Duration base_delay = Duration(5),
                     Duration max_delay = std::chrono::seconds(1000));
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` unless it is already queued. No-op after ShutDown.
  void Add(const std::string& key);
  // Queues `key` after `delay` (at once when delay <= 0).
  void AddAfter(const std::string& key, Duration delay);
  // Queues `key` after its per-key backoff and counts a failure.
  void AddRateLimited(const std::string& key);
  // Clears `key`'s failure count (call after a successful reconcile).
  void Forget(const std::string& key);
  // AddRateLimited calls since the last Forget.
  int NumRequeues(const std::string& key) const;

  // Blocks until a key is ready and returns it, now held by the caller until
  // Done(key). Returns nullopt once shut down and nothing is left queued.
  std::optional<std::string> Get();
  // Releases a key from Get; re-queues it when it was added meanwhile.
  void Done(const std::string& key);

  void ShutDown();
  // Keys ready to be handed out (not those waiting for a deadline).
  size_t Len() const;

 private:
  void AddLocked(const std::string& key);
  void PromoteDueLocked(Clock::time_point now);
  Duration BackoffLocked(const std::string& key);

  const Duration base_delay_;
  const Duration max_delay_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;                    // queued, or re-added while processing
  std::unordered_set<std::string> processing_;               // between Get and Done
  std::map<std::string, Clock::time_point> waiting_;         // key -> when it is due
  std::set<std::pair<Clock::time_point, std::string>> due_;  // ordered by deadline
  std::unordered_map<std::string, int> failures_;
  bool shutting_down_ = false;
};

}  // namespace ballast::kube
