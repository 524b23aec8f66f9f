#include "net/kube/work_queue.h"

#include <algorithm>

namespace ballast::kube {

WorkQueue::WorkQueue(Duration base_delay, Duration max_delay)
    : base_delay_(base_delay), max_delay_(max_delay) {}

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.contains(key)) return;
  dirty_.insert(key);
  if (processing_.contains(key)) return;  // Done re-queues it
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  if (delay <= Duration::zero()) return Add(key);
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  const auto when = Clock::now() + delay;
  auto it = waiting_.find(key);
  if (it != waiting_.end()) {
    if (it->second <= when) return;
    due_.erase({it->second, key});
  }
  waiting_[key] = when;
  due_.insert({when, key});
  cv_.notify_all();  // a getter may need to wake earlier
}

WorkQueue::Duration WorkQueue::BackoffLocked(const std::string& key) {
  const int failures = failures_[key]++;
  // base * 2^failures without overflow: stop doubling once past the cap.
  Duration delay = base_delay_;
  for (int i = 0; i < failures && delay < max_delay_; ++i) delay *= 2;
  return std::min(delay, max_delay_);
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay;
  {
    std::lock_guard lock(mu_);
    delay = BackoffLocked(key);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked(Clock::time_point now) {
  while (!due_.empty() && due_.begin()->first <= now) {
    const std::string key = due_.begin()->second;
    due_.erase(due_.begin());
    waiting_.erase(key);
    AddLocked(key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mu_);
  while (true) {
    PromoteDueLocked(Clock::now());
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    if (due_.empty()) {
      cv_.wait(lock);
    } else {
      cv_.wait_until(lock, due_.begin()->first);
    }
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  waiting_.clear();
  due_.clear();
  cv_.notify_all();
}

size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace ballast::kube
