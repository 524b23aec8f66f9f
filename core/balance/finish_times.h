// FinishTimes: when each worker is predicted to run out of work, so that a
// policy finds the worker that finishes last, the one that runs out first, and
// the work all of them have left, in O(log P) instead of walking every worker.
//
// A prediction (finish, speed) says that the worker computes `speed` cost
// units per second until `finish` and then has nothing: at time t it has
// speed · max(0, finish − t) left. An idle worker is a prediction in the
// past. The predictions sit in a treap ordered by (finish, worker) whose nodes
// carry the sums of speed and speed · finish over their subtree, so every
// query and update is O(log P) expected, at any time, in any order.
//
// Thread-safety: a value; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "core/balance/policy.h"

namespace ballast::balance {

class FinishTimes {
 public:
  explicit FinishTimes(size_t workers = 0);

  // Makes room for one more worker (one that joined the job) and returns its
  // id, the number of workers before; it has no prediction yet.
  WorkerId Add();

  // Predicts that `worker` (< the workers given at construction and added) computes at
  // `speed` (>= 0) until `finish`; replaces its earlier prediction. The keys
  // must be totally ordered for the treap to stay a tree, and the sums
  // finite: a NaN or negative speed is taken as 0 and a speed above
  // kMaxSpeed as kMaxSpeed; a NaN or infinite finish, or one beyond
  // ±kMaxFinish, as ±kMaxFinish.
  void Set(WorkerId worker, double finish, double speed);

  // The bounds Set keeps (cost units per second; seconds): wide enough for
  // any prediction a policy makes from the bounds of CheckJob (policy.h).
  static constexpr double kMaxSpeed = 1e30;
  static constexpr double kMaxFinish = 1e30;
  // Forgets the worker's prediction.
  void Clear(WorkerId worker);
  // The worker's predicted finish (as Set stored it); nullopt when it has none.
  std::optional<double> FinishOf(WorkerId worker) const;
  // Workers with a prediction.
  size_t size() const { return size_; }

  // Σ speed · (finish − now) over the predictions with finish > now: the
  // work the workers have left at `now`.
  double RemainingCost(double now) const;
  // Σ speed · (until − max(finish, now)) over the predictions with finish <
  // until: the work the workers could still take on between running out
  // (or `now`, if they already have) and `until`.
  double SpareCost(double now, double until) const;
  // The worker with the latest finish, if that finish is after `now`, and
  // that finish.
  std::optional<std::pair<WorkerId, double>> Latest(double now) const;
  // The worker with the earliest finish (the one idle longest, if any is), and
  // that finish; nullopt when there are no predictions.
  std::optional<std::pair<WorkerId, double>> Earliest() const;
  // The worker whose prediction comes next before `worker`'s in (finish,
  // worker) order, if its finish is after `now`, and that finish: with
  // Latest, the workers from the last to finish down. Requires `worker` to
  // have a prediction.
  std::optional<std::pair<WorkerId, double>> Preceding(WorkerId worker, double now) const;
  // The worker whose prediction comes next after `worker`'s in (finish,
  // worker) order, and its finish; nullopt when `worker`'s is the last. With
  // Earliest, the workers from the first to run out up. Requires `worker` to
  // have a prediction.
  std::optional<std::pair<WorkerId, double>> Following(WorkerId worker) const;

 private:
  static constexpr uint32_t kNil = UINT32_MAX;

  struct Node {
    double finish = 0;
    double speed = 0;
    uint32_t priority = 0;
    uint32_t left = kNil;
    uint32_t right = kNil;
    bool set = false;
    double sum_speed = 0;  // over the subtree
    double sum_speed_finish = 0;
  };
  struct Sums {
    double speed = 0;
    double speed_finish = 0;
  };

  bool Less(uint32_t a, double finish, uint32_t b) const;
  void Update(uint32_t node);
  // Splits `tree` into the keys before (finish, worker) and the rest.
  std::pair<uint32_t, uint32_t> Split(uint32_t tree, double finish, uint32_t worker);
  uint32_t Merge(uint32_t left, uint32_t right);
  // Sums over the predictions with finish < `finish`.
  Sums Before(double finish) const;
  Sums Total() const;

  std::vector<Node> nodes_;  // one per worker, indexed by WorkerId
  uint32_t root_ = kNil;
  size_t size_ = 0;
};

}  // namespace ballast::balance
