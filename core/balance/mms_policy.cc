// mms: the modified master-slave algorithm of Filipović & Krstajić (seed 003),
// faithful to the paper, stop-the-world phase included.
//
//   1. Static phase: shares in proportion to the prior speeds (equal priors
//      give the paper's domain decomposition).
//   2. When the first worker finishes its share, every other worker is
//      signalled to stop; each finishes the item it has begun, reports what it
//      did, and waits. The unfinished rest of every share returns to the pool.
//   3. When all have reported (the synchronization), master-slave hands out
//      fixed chunks (one task in the paper) to whoever asks; where the job
//      gives each item's cost, chunks of equal cost.
// A worker that joins mid-job holds no share: when it asks in the static
// phase, it is the first worker out of work, and phase 2 begins.
#include <algorithm>
#include <cmath>
#include <memory>

#include "core/balance/policies.h"
#include "core/balance/policy_base.h"

namespace ballast::balance {
namespace {

class MmsPolicy : public PolicyBase {
 public:
  explicit MmsPolicy(double chunk) : chunk_(chunk) {}

  std::string_view name() const override { return MmsOptions::kName; }

 protected:
  void Plan(double /*now*/) override {
    phase_ = Phase::kStatic;
    std::vector<double> shares;
    for (const WorkerPrior& worker : job().workers) shares.push_back(worker.speed);
    ReserveProportional(shares);
    if (chunk_ <= 0)
      chunk_ = std::max<double>(1, std::floor(job().items / (100.0 * worker_count())));
  }

  Reply Assign(WorkerId worker, double now) override {
    if (phase_ == Phase::kStatic) {
      const Range share = TakeReserved(worker);
      if (!share.empty()) return Grant(worker, share, now, 0);
      BeginStop();
    }
    if (phase_ == Phase::kStopping) {
      if (!AllStopped()) return Wait();
      return StartMasterSlave(worker, now);
    }
    return Chunk(worker, now);
  }

  std::optional<Reply> AfterProgress(WorkerId worker, double now) override {
    if (phase_ != Phase::kStopping) return std::nullopt;
    // The worker answers the stop signal: it stops after the item it finished
    // and waits for the others (the synchronization of the paper).
    ReturnToPool(Cut(worker, state(worker).position), /*wake=*/false);
    if (AllStopped()) return StartMasterSlave(worker, now);
    return Wait();
  }

  void AfterLost(WorkerId /*worker*/, double /*now*/) override {
    if (phase_ == Phase::kStopping && AllStopped()) {
      phase_ = Phase::kMasterSlave;
      WakeWaiting();
    }
  }

 private:
  enum class Phase { kStatic, kStopping, kMasterSlave };

  void BeginStop() {
    phase_ = Phase::kStopping;
    for (WorkerId id = 0; id < worker_count(); ++id) {
      // Every range set aside goes back, not only the first: large items
      // spread one at a time leave a worker several (ReserveProportional).
      for (Range rest = TakeReserved(id); !rest.empty(); rest = TakeReserved(id)) {
        ReturnToPool(rest, /*wake=*/false);
      }
      if (!Unfinished(id).empty()) Signal(id);
    }
  }

  Reply StartMasterSlave(WorkerId worker, double now) {
    phase_ = Phase::kMasterSlave;
    WakeWaiting();
    return Chunk(worker, now);
  }

  // A chunk of chunk_ items, or with per-item costs, of chunk_ items' mean cost.
  Reply Chunk(WorkerId worker, double now) {
    if (pool().empty()) return Wait();
    const Range chunk =
        cost().per_item() ? TakeCostFromPool(chunk_) : TakeFromPool(static_cast<uint64_t>(chunk_));
    return Grant(worker, chunk, now, 0);
  }

  bool AllStopped() const {
    for (WorkerId id = 0; id < worker_count(); ++id) {
      if (!state(id).lost && !Unfinished(id).empty()) return false;
    }
    return true;
  }

 private:
  double chunk_;
  Phase phase_ = Phase::kStatic;
};

}  // namespace

std::unique_ptr<Policy> MakePolicyOf(const MmsOptions& options) {
  return std::make_unique<MmsPolicy>(static_cast<double>(options.chunk));
}

}  // namespace ballast::balance
