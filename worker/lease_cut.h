// LeaseCut: the nearest end the coordinator gave the lease being computed,
// heard outside the worker's loop — in the reply to a progress report still
// in flight, or in a signal that carries the lease (protocol::SignalMessage).
// The step being computed reads end() between kernel calls and stops there,
// so a victim of a steal stops at the cut as soon as it hears of it, not
// after its step (a step that crossed the cut would be computed for nothing,
// and dropped whole when the thief handed the items in first).
//
// A cut counts only for the lease it names (by its first item): a signal or
// reply about an earlier lease that arrives after the loop took a new one is
// ignored. Should a new lease begin where the old one did, a late cut of the
// old one stops the worker early at worst; it then asks again, and the
// coordinator returns the rest of that lease to the pool.
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "core/balance/range.h"

namespace ballast::worker {

class LeaseCut {
 public:
  static constexpr uint64_t kNoEnd = std::numeric_limits<uint64_t>::max();

  // The loop took `lease`: cuts of any other are forgotten.
  void Begin(balance::Range lease) {
    std::lock_guard lock(mutex_);
    begin_ = lease.begin;
    holding_ = true;
    end_.store(kNoEnd, std::memory_order_relaxed);
  }

  // The loop holds no lease: every cut is ignored until the next Begin.
  void Clear() {
    std::lock_guard lock(mutex_);
    holding_ = false;
    end_.store(kNoEnd, std::memory_order_relaxed);
  }

  // The coordinator holds `lease` for this worker: when it is the lease
  // being computed (same first item), its end becomes the cut if nearer.
  // Returns whether it was taken.
  bool Offer(balance::Range lease) {
    std::lock_guard lock(mutex_);
    if (!holding_ || lease.begin != begin_) return false;
    if (lease.end < end_.load(std::memory_order_relaxed)) {
      end_.store(lease.end, std::memory_order_relaxed);
    }
    return true;
  }

  // The nearest end heard for the current lease; kNoEnd when none.
  uint64_t end() const { return end_.load(std::memory_order_relaxed); }
  // What the step being computed reads.
  const std::atomic<uint64_t>& end_flag() const { return end_; }

 private:
  std::mutex mutex_;
  uint64_t begin_ = 0;
  bool holding_ = false;
  std::atomic<uint64_t> end_{kNoEnd};
};

}  // namespace ballast::worker
