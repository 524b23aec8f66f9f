// adaptive: Ballast's own policy.
//
//   1. Initial split in proportion to the prior speeds, by declared cost. A
//      worker that computes in bursts (WorkerPrior::duty below 1: a CPU
//      quota) and holds less than a tenth of the speed is planned a little
//      short when its prior is credible (HedgedShare): handing in its last
//      items a throttled gap late idles every other worker, while the items
//      it is short the others take up at once (initial_split.h).
//   2. Live estimates after Sánchez et al. (seed 002): per cost unit, the
//      calculation time reported by the worker and the communication time
//      (time between reports, measured here, minus calculation); the speed is
//      1 / (calc + comm), smoothed (a rise in comm is taken at once).
//      Unmeasured workers are scaled from their prior by what measured
//      workers show. A prior with credibility (a history prior,
//      WorkerPrior::credibility Z) is not dropped at the first measurement:
//      while a worker has measured cost E of its planned share S, its speed
//      is the geometric blend of measurement and scaled prior with weight
//      w = E / (E + Z * kPriorShareWorth * S) on the measurement, so a
//      trusted prior outweighs the noise of the first short reports and a
//      wrong one gives way as the worker computes. Z = 0 (fuzzy weights):
//      w = 1, the measurement alone.
//      A worker reports kReportsPerLease times over a lease, fewer (down to
//      kTrustedReportsPerLease) as its prior is credible while it agrees with
//      what the worker measures; such a worker's first report also comes
//      later (kCredibleFirstReport report floors, not one). The estimate is
//      speed_estimator.h's, the cadence report_cadence.h's.
//   3. Rebalancing after Mirtaheri (seed 004): at a progress report, a worker
//      whose remaining load (corrected for staleness, L - λΔt) exceeds its
//      fair share λ/Σλ · ΣL gives the excess back from the far end of its
//      lease, scaled by the compensating factor k when moving work takes time.
//      Hysteresis: only an excess above a tenth of the worker's remaining
//      time moves, a fiftieth for a fully credible prior (RebalanceShare).
//   4. Work from the pool goes to an idle worker in the amount it can finish
//      by the predicted common end, λ · T_remaining. Work from outside a
//      worker's planned share (from the pool or stolen) may have to cross its
//      link first: its first such lease is a short probe, and each next one
//      at most twice the last (slow start; only when the job's inputs cross
//      links at all, JobInfo::inputs_cross_links).
//      Earliest finish (LargestFitting): when the pool's front item, the
//      largest left, would end on the asker after the job may end, and
//      sooner on a faster worker once that one is free, the asker is leased
//      from the largest item behind it that it ends in time (after the
//      earliest-finish-time rule of list scheduling on unrelated machines).
//   5. Tail stealing: an idle worker with nothing in the pool takes the far end
//      of the lease of the worker predicted to finish last (when that one has
//      nothing to give, of the next latest), sized so both finish together; the victim learns its
//      new end in its next reply and never pauses. The cut leaves the victim what it may reach by
//      then at the rate it has shown (a worker that ran ahead of its predictions is given that
//      lead, less of it when the thief is much faster), and a worker whose report puts its end well
//      past its prediction wakes the workers told to wait, so that they may steal. When nothing is
//      worth stealing, an idle worker that can compute the whole unfinished rest of the last
//      worker's lease before that worker is predicted to finish computes a copy of it (a backup,
//      after the backup tasks of MapReduce); the victim keeps its lease, the first to hand in an
//      item has it counted and the other's copy is dropped. A prediction holds on average only: a
//      worker throttled by a CPU quota, or paused mid-step, hands in its last items a pause late
//      while the fast workers stand idle. One backup per lease, and none for items that must not
//      run twice (JobInfo::repeatable: exec.backups false).
//   6. Hysteresis: no move whose gain is below the thief's measured per-lease
//      overhead, no cut of a lease into the region the victim may already be
//      working on.
//   7. Prefetch, when the items' inputs cross the workers' links: at each
//      progress report, work from the pool that the worker will want after
//      its lease (λ · T_remaining minus what it holds) is set aside for it,
//      in slow-start steps, so that its inputs arrive while it computes.
//      Set-aside work counts in the worker's predicted finish; rebalancing
//      and stealing take it back before they cut a lease.
//
// Every decision costs O(log P): total load and total speed are running sums,
// and predicted finish times sit in a FinishTimes treap (adaptive_forecast.h,
// which keeps the predictions this file's decisions read). Slow start (step
// 4) and the tail's moves (step 5) are adaptive_tail.h's, which also says
// why an idle worker was told to wait (Policy::WaitNotes).

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/balance/adaptive_tail.h"
#include "core/balance/compensation.h"
#include "core/balance/initial_split.h"
#include "core/balance/policies.h"

namespace ballast::balance {
namespace {

// A computing worker whose report puts its end later than predicted by more
// than this many report floors wakes the workers waiting for work, so that
// they may steal from it.
constexpr double kWakeFloors = 4;
// ... and by more than this share of the time it has left: a worker whose
// items vary in length moves its end by a fraction of an item at every report.
constexpr double kWakeShare = 0.5;
// Rebalancing moves an excess above this share of a worker's remaining
// time, down to the second for a fully credible prior (RebalanceShare).
constexpr double kRebalanceShare = 0.1;
constexpr double kTrustedRebalanceShare = 0.02;
// Earliest finish from the pool (LargestFitting) looks for a worker that ends
// the pool's front item sooner among this many that run out first: a bound on
// the walk; the first found free before the asker ends the item is enough.
constexpr int kEarliestLooked = 8;
// ... and the item it is leased instead must cost less than this share of
// the front one: items of equal declared cost (or nearly, by rounding) are
// dealt from the front as before.
constexpr double kSmallerFit = 0.8;
// The pool's ranges searched for that item, from the first.
constexpr int kRangesLooked = 8;

class AdaptivePolicy : public AdaptiveTail {
 public:
  explicit AdaptivePolicy(const AdaptiveOptions& options) : AdaptiveTail(options) {
    LearnStartCost(options.learn_costs);
  }

  std::string_view name() const override { return AdaptiveOptions::kName; }

 protected:
  // Step 1: the reserved shares in proportion to the priors, hedged.
  void Plan(double /*now*/) override {
    StartForecast();
    StartTail();
    const InitialSplit split =
        SplitByPriors(job().workers, cost().Cost({0, job().items}), options().hedge);
    for (WorkerId id = 0; id < worker_count(); ++id) {
      speeds().SetPlannedCost(id, split.planned_cost[id]);
    }
    ReserveProportional(split.reserve);
  }

  Reply Assign(WorkerId worker, double now) override {
    ClearWaitNotes();
    Track(worker, now);
    const Range share = TakeReserved(worker);
    if (!share.empty()) return GrantTimed(worker, share, now);
    if (!pool().empty()) return FromPool(worker, now);
    if (options().stealing) {
      if (auto taken = FromTail(worker, now)) return *taken;
    } else {
      Note(std::nullopt, "stealing is off");
    }
    return Wait();
  }

  std::optional<Reply> AfterProgress(WorkerId worker, double now) override {
    const std::optional<double> predicted = finish_times().FinishOf(worker);
    Track(worker, now);
    const std::optional<double> finish = finish_times().FinishOf(worker);
    // Workers told to wait found nothing worth stealing when they asked; a
    // worker whose report puts its end later than predicted, by more than
    // kWakeFloors report floors and kWakeShare of the time it now has left,
    // with items left beyond the one it computes, has work for them again.
    const double moved = predicted && finish ? *finish - *predicted : 0;
    // (A lone item left can still be copied by a backup, where backups are on.)
    const bool copyable = options().backup && job().repeatable && !Doubled(worker);
    const bool late = moved > kWakeFloors * ReportFloor(now) &&
                      moved > kWakeShare * (*finish - now) &&
                      (Unfinished(worker).size() >= 2 || copyable);
    if (options().rebalance) Rebalance(worker, now);
    if (options().prefetch && job().inputs_move) SetAsideNext(worker, now);
    SetCadence(worker, Cadence(worker, cost().Cost(state(worker).lease), now));
    if (options().stealing && late && AnyTold()) WakeWaiting();
    return std::nullopt;
  }

  // A start cost was learned (or moved): the cost of each worker's last
  // unplanned lease follows the job's, then the forecast is restated.
  void AfterCostChanged(double old_start_cost, double now) override {
    const double scale = JobCostScale(old_start_cost);
    for (double& unplanned : unplanned_cost()) unplanned *= scale;
    AdaptiveForecast::AfterCostChanged(old_start_cost, now);
  }

  // A worker joined (a node became eligible mid-job): it holds nothing of
  // the others' and has had no unplanned lease. It gets work when it asks:
  // from the pool, or by a steal sized to finish with the last worker.
  void AfterJoined(WorkerId worker, double now) override {
    JoinTail();
    AdaptiveForecast::AfterJoined(worker, now);
  }

 private:
  Reply FromPool(WorkerId worker, double now) {
    const double remaining = CommonRemainingTime(now);
    const Range first = pool().First();
    const double one_item = ItemCost(first.begin);
    double amount = Speed(worker) * remaining;
    if (busy_count() > 0) {
      if (auto left = LargestFitting(worker, first, now)) {
        NoteFrontLeft(first.begin, *left);
        amount = std::max(std::min(amount, SlowStartCap(worker, now)), ItemCost(left->fit));
        return GrantUnplanned(worker, TakeCostFromPoolAt(left->fit, amount), now);
      }
    }
    // A worker that cannot finish even one item by the common end is kept out
    // of it (seed 002 drops nodes that cannot keep up), unless it is alone.
    if (amount < 0.5 * one_item && busy_count() > 0) {
      Note(std::nullopt, "the pool's next item would end after the others' work");
      return Wait();
    }
    // Hysteresis: a pool the worker can finish within a report floor goes to
    // it whole. In the tail the common end is near, and the pool's last items
    // would otherwise go out in slivers of a few items, each a round trip
    // that saves less than it costs. (A floor's worth for every asker would
    // overshoot the common end when many workers share a large pool.)
    if (pool_cost() <= Speed(worker) * ReportFloor(now)) amount = std::max(amount, pool_cost());
    amount = std::max(std::min(amount, SlowStartCap(worker, now)), one_item);
    return GrantUnplanned(worker, TakeCostFromPool(amount), now);
  }

  // What LargestFitting found.
  struct FrontLeft {
    uint64_t fit = 0;                    // the item the asker's lease begins at
    std::pair<WorkerId, double> sooner;  // the worker that ends the front item sooner, and when
    double mine = 0;                     // when the asker would end the front item
    double end_by = 0;                   // when the job may end (EndBound)
  };

  // Earliest finish. When the pool's front item (the largest left, as items
  // are dealt largest first) would end on the asker after the job may end
  // (EndBound), and sooner on another worker once that one is free, the
  // asker is leased from the largest item behind it that it ends by then;
  // the front is left to the other, and the smallest items stay last, for
  // the tail. Returns that item with the ends that chose it; nullopt: lease
  // from the front as before (the front ends in time, or no other ends it
  // sooner, or no item behind it fits). On real nodes a Pi 3B that took a
  // large item from the pool late in the job ended it long after the Pi 4Bs
  // had run out (a compile source at 69 s that took it 37 s; an archive
  // whose backup copy on a Pi 4B won and left the Pi 3B's 20 s lost).
  std::optional<FrontLeft> LargestFitting(WorkerId worker, Range first, double now) const {
    FrontLeft left;
    const double front_item = ItemCost(first.begin);
    left.end_by = EndBound(now, CommonRemainingTime(now));
    left.mine = EndOf(worker, front_item, now);
    if (left.mine <= left.end_by) return std::nullopt;
    const auto sooner = SoonerElsewhere(worker, front_item, now);
    if (!sooner) return std::nullopt;
    left.sooner = *sooner;
    const double budget =
        (left.end_by - now - speeds().estimate(worker).overhead_s) * Speed(worker);
    if (!(budget > 0)) return std::nullopt;
    // Items are dealt largest first, so within a range of the pool an item's
    // cost falls with its index: the first that fits is found by bisection,
    // in the first kRangesLooked ranges (the pool holds few: it is cut from
    // the front, and items given back return in runs).
    Range range = first;
    for (int looked = 0; !range.empty() && looked < kRangesLooked; ++looked) {
      const uint64_t begin = range.begin == first.begin ? first.begin + 1 : range.begin;
      if (begin < range.end && ItemCost(range.end - 1) <= budget) {
        uint64_t lo = begin;
        uint64_t hi = range.end - 1;  // fits
        while (lo < hi) {
          const uint64_t mid = lo + (hi - lo) / 2;
          if (ItemCost(mid) <= budget) {
            hi = mid;
          } else {
            lo = mid + 1;
          }
        }
        // A job not dealt largest first (listed) has no order to bisect:
        // the item found is checked.
        if (ItemCost(lo) <= budget && ItemCost(lo) < kSmallerFit * front_item) {
          left.fit = lo;
          return left;
        }
      }
      range = pool().FirstAtOrAfter(range.end);
    }
    return std::nullopt;
  }

  double ItemCost(uint64_t item) const { return cost().Cost({item, item + 1}); }

  // Why the asker was leased from behind the pool's front item, `front`:
  // on the decisions log beside the lease (Policy::WaitNotes).
  void NoteFrontLeft(uint64_t front, const FrontLeft& left) {
    Note(left.sooner.first,
         fmt::format("ends the pool's front item {} at {:.2f} s, the asker at {:.2f} s, after the "
                     "job's end at {:.2f} s: the asker is leased from item {}, the largest it "
                     "ends by then",
                     front, left.sooner.second, left.mine, left.end_by, left.fit));
  }

  // When the job may end, as predicted now: when every worker would finish
  // together (`remaining` from now), or later when one is predicted to
  // finish later still.
  double EndBound(double now, double remaining) const {
    const auto latest = finish_times().Latest(now);
    return std::max(now + remaining, latest ? latest->second : now);
  }

  // When `worker`, free now or at its predicted finish, would end an item of
  // `item_cost`: its overhead of starting a lease, then the work.
  double EndOf(WorkerId worker, double item_cost, double now) const {
    const auto finish = finish_times().FinishOf(worker);
    const double free = std::max(now, finish.value_or(now));
    return free + speeds().estimate(worker).overhead_s + item_cost / Speed(worker);
  }

  // Another live worker that would end an item of `item_cost` sooner than the
  // asker, free now, would: the first found among the kEarliestLooked workers
  // that run out first, and when it would end it.
  std::optional<std::pair<WorkerId, double>> SoonerElsewhere(WorkerId worker, double item_cost,
                                                             double now) const {
    const double mine = now + speeds().estimate(worker).overhead_s + item_cost / Speed(worker);
    int looked = 0;
    for (auto at = finish_times().Earliest(); at && looked < kEarliestLooked;
         at = finish_times().Following(at->first), ++looked) {
      if (std::max(now, at->second) >= mine) break;  // the rest are free later still
      if (at->first == worker || !Alive(at->first)) continue;
      const double theirs = EndOf(at->first, item_cost, now);
      if (theirs < mine) return std::make_pair(at->first, theirs);
    }
    return std::nullopt;
  }

  void Rebalance(WorkerId worker, double now) {
    // Items of a backed-up lease are held twice: none go back to the pool.
    if (!speeds().estimate(worker).measured || Doubled(worker)) return;
    const double total_load = TotalLoad(now);
    const double total_speed = TotalSpeed();
    const double speed = Speed(worker);
    const double load = Remaining(worker, now);
    const double excess = load - speed / total_speed * total_load;  // L_ex, eq. 3-3
    // Hysteresis: move only an excess worth more than a lease's overhead on
    // both sides and more than a share of the worker's remaining time (tail
    // stealing settles what is left; RebalanceShare).
    const double threshold =
        std::max(2 * speeds().estimate(worker).overhead_s, RebalanceShare(worker) * load / speed) *
        speed;
    if (excess <= threshold) return;
    const double k = options().compensation ? Compensation(excess, now) : 1.0;
    double amount = k * excess;
    bool moved = false;
    auto give_back = [&](Range range) {
      mutable_stats().moved_items += range.size();
      ReturnToPool(range);
      moved = true;
    };
    // Work set aside for after the lease goes back first. Each pass takes at
    // least one item set aside (FarEnd), so there are at most as many passes
    // as such items, and fewer than ranges when `amount` covers them.
    while (amount > 0 && reserved_cost(worker) > 0) {
      const Range taken = TakeBackReserved(worker, amount);
      amount -= cost().Cost(taken);
      give_back(taken);
    }
    if (amount > 0) {
      const Range left = Unfinished(worker);
      uint64_t safe = cost().Advance(left.begin, left.end, speed * state(worker).report_every_s);
      safe = std::max(std::min(left.end, safe + 1), StopFloor(worker));
      const uint64_t cut = cost().Retreat(left.end, safe, amount);
      if (cut < left.end) give_back(Cut(worker, cut));
    }
    if (!moved) return;
    Predict(worker, now);
    mutable_stats().rebalances++;
  }

  // Takes up to `amount` of cost from the far end of the worker's last
  // set-aside range back from it (at least one item); the caller places it.
  Range TakeBackReserved(WorkerId worker, double amount) {
    const Range taken = FarEnd(reserved(worker).Last(), amount);
    Unreserve(worker, taken);
    return taken;
  }

  // Sets aside for a computing worker the work from the pool it will want
  // after its lease: what it can do by the predicted common end beyond what
  // it holds, at most a slow-start step, and only when it is worth more than
  // a lease's overhead.
  void SetAsideNext(WorkerId worker, double now) {
    if (pool().empty() || !speeds().estimate(worker).measured) return;
    const double speed = Speed(worker);
    const double want = speed * CommonRemainingTime(now) - Remaining(worker, now);
    const Range first = pool().First();
    const double one_item = ItemCost(first.begin);
    if (!(want >= std::max(one_item, speed * speeds().estimate(worker).overhead_s))) return;
    const Range range = TakeCostFromPool(std::min(want, SlowStartCap(worker, now)));
    unplanned_cost()[worker] = cost().Cost(range);
    SetAside(worker, range);
    Predict(worker, now);
  }

  // The share of a worker's remaining time its excess must exceed to be
  // moved: kRebalanceShare for a worker whose prior is a guess, whose
  // excess at a report is mostly the noise of a young measurement; down to
  // kTrustedRebalanceShare as the prior is credible, where an excess is
  // real (a start later than the others', a drift) and small, and left to
  // the tail it is found only by steals from a worker reporting seldom.
  double RebalanceShare(WorkerId worker) const {
    return TowardTrusted(kRebalanceShare, kTrustedRebalanceShare, speeds().Credibility(worker));
  }

  // k for the receiver that will run out of work first among the underloaded.
  double Compensation(double excess, double now) {
    const double horizon = CommonRemainingTime(now);
    const auto first = finish_times().Earliest();
    if (!first || !std::isfinite(horizon)) return 1.0;
    const WorkerId receiver = first->first;
    const double soonest = std::max(0.0, first->second - now);
    if (soonest >= horizon) return 1.0;
    // Σ L_ex over the underloaded: what they could take on before the horizon.
    const double under_total = finish_times().SpareCost(now, now + horizon);
    if (under_total <= 0) return 1.0;
    const SpeedEstimate& e = speeds().estimate(receiver);
    if (!e.measured || e.comm_per_cost < SpeedEstimator::kMinSecondsPerCost) return 1.0;
    const double share = (horizon - soonest) * Speed(receiver) / under_total;  // p_l, eq. 3-13
    const double transfer_rate = 1.0 / e.comm_per_cost;
    const double transfer_time = share * excess / transfer_rate;
    return CompensatingFactor(1.0 / std::max(e.calc_per_cost, 1e-12), transfer_rate, soonest,
                              transfer_time);
  }
};

}  // namespace

std::unique_ptr<Policy> MakePolicyOf(const AdaptiveOptions& options) {
  return std::make_unique<AdaptivePolicy>(options);
}

}  // namespace ballast::balance
