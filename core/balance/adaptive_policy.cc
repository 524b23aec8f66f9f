// adaptive: Ballast's own policy.
//
//   1. Initial split in proportion to the prior speeds, by declared cost. A
//      worker that computes in bursts (WorkerPrior::duty below 1: a CPU
//      quota) and holds less than a tenth of the speed is planned a little
//      short when its prior is credible (HedgedShare): handing in its last
//      items a throttled gap late idles every other worker, while the items
//      it is short the others take up at once.
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
//      later (kCredibleFirstReport report floors, not one).
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
//   5. Tail stealing: an idle worker with nothing in the pool takes the far end
//      of the lease of the worker predicted to finish last, sized so both
//      finish together; the victim learns its new end in its next reply and
//      never pauses. The cut leaves the victim what it may reach by then at
//      the rate it has shown (a worker that ran ahead of its predictions is
//      given that lead, less of it when the thief is much faster), and a
//      worker whose report puts its end well past its prediction wakes the
//      workers told to wait, so that they may steal.
//      When nothing is worth stealing, an idle worker that can compute the
//      whole unfinished rest of the last worker's lease before that worker
//      is predicted to finish computes a copy of it (a backup, after the
//      backup tasks of MapReduce); the victim keeps its lease, the first to
//      hand in an item has it counted and the other's copy is dropped. A
//      prediction holds on average only: a worker throttled by a CPU quota,
//      or paused mid-step, hands in its last items a pause late while the
//      fast workers stand idle. One backup per lease, and none for items
//      that must not run twice (JobInfo::repeatable: exec.backups false).
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
// and predicted finish times sit in a FinishTimes treap.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "core/balance/compensation.h"
#include "core/balance/finish_times.h"
#include "core/balance/policies.h"
#include "core/balance/policy_base.h"

namespace ballast::balance {
namespace {

constexpr double kSmoothing = 0.5;       // weight of the newest measurement
constexpr double kReportsPerLease = 10;  // progress reports over a lease's predicted length
// ... for a worker whose prior is fully credible and agrees with what it
// measures (within kPriorAgreement either way): there is less to learn.
constexpr double kTrustedReportsPerLease = 3;
constexpr double kPriorAgreement = 1.25;
// The longest cadence of a measured worker (ReportCeiling) ...
constexpr double kMaxReportSeconds = 60;
// An unfinished first item bounds a worker's speed at this many times its
// declared cost over the time computed (CensoredSpeed): items' true costs
// scatter about the declared ones, and a worker merely on a costly item is
// not taken for a slow one.
constexpr double kCensoredMargin = 2;
// ... unless the predicted rest of the job would give each worker more than
// this many reports at it (a job of more than 1000 minutes): the cadence is
// then that share of the rest, so that a job of any length costs its workers
// a bounded number of reports (the simulator simulates each of them).
constexpr double kMaxReportsPerJob = 1000;
// The first report of a worker whose prior is fully credible, in report
// floors (Cadence).
constexpr double kCredibleFirstReport = 8;
// Rebalancing moves an excess above this share of a worker's remaining
// time, down to the second for a fully credible prior (RebalanceShare).
constexpr double kRebalanceShare = 0.1;
constexpr double kTrustedRebalanceShare = 0.02;
// A speed measured over t seconds of computing is not relied on for more than
// kEvidenceHorizon * t before the worker reports again: the first report
// covers a report floor of start-up (the first steps of one item, a CPU
// quota's period half spent), and the next comes soon enough to correct it.
constexpr double kEvidenceHorizon = 8;
// A worker's lead over its predictions (ObserveLead) is measured over
// silences of at least this many report floors, and counts up to kMaxLead.
constexpr double kLeadWindowFloors = 10;
constexpr double kMaxLead = 0.5;
// A computing worker whose report puts its end later than predicted by more
// than this many report floors wakes the workers waiting for work, so that
// they may steal from it.
constexpr double kWakeFloors = 4;
// ... and by more than this share of the time it has left: a worker whose
// items vary in length moves its end by a fraction of an item at every report.
constexpr double kWakeShare = 0.5;
constexpr double kReportBudget = 2000;  // progress reports per second, all workers together
// ... unless the job is too short for it: every worker may still report this
// many times over the predicted rest of the job.
constexpr double kReportsPerJob = 10;
constexpr double kProbeReports = 4;  // length of a probe lease, in report floors
// Bounds of a measured time per cost unit (an item of mean cost), so that a
// worker's speed 1 / (calc + comm) stays within [1e-9, 1e12] cost units per
// second however absurd the times it reports: every prediction made from it
// stays finite (see FinishTimes::Set).
constexpr double kMinSecondsPerCost = 1e-12;
constexpr double kMaxSecondsPerCost = 1e9;
// A prior at full credibility counts as much as measuring this fraction of
// the worker's planned share (step 2).
constexpr double kPriorShareWorth = 0.25;
// The hedge of step 1 (HedgedShare): how far, in log share per unit of the
// normal quantile, a fully credible bursty worker is planned short, and the
// share of the total speed below which a worker is hedged at all.
constexpr double kHedge = 0.1;
constexpr double kHedgeMaxShare = 0.1;

using Options = AdaptiveOptions;

// The standard normal quantile Φ⁻¹(p) for p in (0, 1), by Newton's method on
// Φ(x) = erfc(-x / √2) / 2 from x = 0; exact to about 1e-12 for p in
// [1e-12, 1 - 1e-12] (clamped into it).
double NormalQuantile(double p) {
  p = std::clamp(p, 1e-12, 1 - 1e-12);
  double x = 0;
  for (int i = 0; i < 60; ++i) {
    const double density = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
    const double step = (0.5 * std::erfc(-x / std::sqrt(2.0)) - p) / density;
    x -= std::clamp(step, -1.0, 1.0);
    if (std::fabs(step) < 1e-13) break;
  }
  return x;
}

struct Estimate {
  double calc_per_cost = 0;  // seconds of computing per cost unit
  double comm_per_cost = 0;  // seconds of communication and waiting per cost unit
  double overhead_s = 0;     // fixed cost of starting a lease (round trip, data)
  double evidence_cost = 0;  // cost measured so far (the weight of the measurement)
  double evidence_s = 0;     // computing seconds measured so far
  double evidence_items =
      0;            // items measured so far (to restate evidence_cost in a new cost model)
  double lead = 0;  // how far it ran ahead of its predictions (ObserveLead)
  bool measured = false;
  // Measurements not yet folded in (reports that finished no item).
  double pending_calc = 0;
  double pending_exe = 0;
  double pending_cost = 0;
  double pending_items = 0;
  bool pending_lease_start = false;
  // Cost of the worker's last lease from outside its planned share (0: none).
  double unplanned_cost = 0;
};

class AdaptivePolicy : public PolicyBase {
 public:
  explicit AdaptivePolicy(Options options) : options_(options) {
    LearnStartCost(options.learn_costs);
  }

  std::string_view name() const override { return "adaptive"; }

 protected:
  void Plan(double /*now*/) override {
    estimates_.assign(worker_count(), Estimate{});
    measured_speed_sum_ = measured_prior_sum_ = 0;
    finish_ = FinishTimes(worker_count());
    counted_.assign(worker_count(), Counted{});
    busy_.assign(worker_count(), false);
    backed_up_.assign(worker_count(), false);
    copy_.assign(worker_count(), false);
    partner_.assign(worker_count(), std::nullopt);
    busy_count_ = 0;
    predicted_reserve_.assign(worker_count(), 0);
    predicted_reserve_sum_ = 0;
    alive_speed_sum_ = alive_prior_sum_ = 0;
    for (WorkerId id = 0; id < worker_count(); ++id) Recount(id);
    std::vector<double> shares;
    double share_sum = 0;
    for (const WorkerPrior& worker : job().workers) {
      shares.push_back(std::max(worker.speed, 1e-9));
      share_sum += shares.back();
    }
    const double job_cost = cost().Cost({0, job().items});
    planned_cost_.clear();
    for (const double share : shares) planned_cost_.push_back(job_cost * share / share_sum);
    credible_ = std::ranges::any_of(
        job().workers, [](const WorkerPrior& worker) { return worker.credibility > 0; });
    // The reserve is the hedged split; the worker's planned share (the
    // prior's weight, above) and its predicted speed stay the prior's.
    std::vector<double> hedged = shares;
    for (WorkerId id = 0; id < worker_count(); ++id) {
      hedged[id] *= HedgedShare(id, shares[id] / share_sum);
    }
    ReserveProportional(hedged);
  }

  // The factor on a worker's planned share (step 1): 1, unless its prior is
  // credible (Z > 0), it computes in bursts (duty d < 1) and it holds a share
  // q < kHedgeMaxShare of the total speed; then exp(Z · kHedge · (1 - d) ·
  // Φ⁻¹(q)), below 1. A node that ends the job a little early costs the
  // others the items it was short, which they take up at once; one that ends
  // it a little late idles them all until it hands in its last items, and a
  // node under a CPU quota hands them in up to a throttled gap, (1 - d) of a
  // quota period, late (docs/efficiency.md, "A hedged first split for bursty
  // workers"). So the split aims below the expected finish, the more the
  // smaller the node's share of the speed (the newsvendor's critical ratio
  // q). Only small shares are hedged: a larger one's hedge would overload the
  // others beyond their rebalancing threshold and cost messages (the same
  // section); with a fuzzy prior (Z = 0) the split's own error is far larger
  // than a gap, and a steady node (d = 1, every simulated one) has no gap.
  double HedgedShare(WorkerId id, double q) const {
    const WorkerPrior& worker = job().workers[id];
    const double z = Credibility(id);
    if (!options_.hedge || !(z > 0) || !(worker.duty < 1) || !(q < kHedgeMaxShare)) return 1;
    return std::exp(z * kHedge * (1 - worker.duty) * NormalQuantile(q));
  }

  void Observe(const Report& report, double elapsed) override {
    Estimate& e = estimates_[report.worker];
    const WorkerState& worker = state(report.worker);
    if (worker.lease.empty()) {
      e.pending_calc = e.pending_exe = e.pending_cost = e.pending_items = 0;  // idle, not slow
      return;
    }
    if (e.pending_exe == 0) e.pending_lease_start = worker.last_contact == worker.lease_granted;
    ObserveLead(report, elapsed);
    double cost_done = 0;
    double items_done = 0;
    for (const Range& range : report.completed) {
      cost_done += cost().Cost(range);
      items_done += static_cast<double>(range.size());
    }
    for (const Range& range : report.failed) {
      cost_done -= cost().Cost(range);
      items_done -= static_cast<double>(range.size());
    }
    cost_done = std::max(0.0, cost_done);
    items_done = std::max(0.0, items_done);
    // A worker cannot have computed longer than the time between its two
    // reports as seen here: its claim is bounded by that (and a NaN, negative
    // or infinite one counts as nothing).
    const double observed = std::isfinite(elapsed) ? std::max(0.0, elapsed) : 0.0;
    const double calc_seconds =
        std::isfinite(report.calc_seconds) ? std::clamp(report.calc_seconds, 0.0, observed) : 0.0;
    e.pending_calc += calc_seconds;
    e.pending_exe += observed;
    e.pending_cost += cost_done;
    e.pending_items += items_done;
    e.evidence_cost += cost_done;
    e.evidence_items += items_done;
    e.evidence_s += calc_seconds;
    if (e.pending_cost <= 0) return;
    const double calc = std::min(e.pending_calc / e.pending_cost, kMaxSecondsPerCost);
    const double comm = std::min(std::max(0.0, e.pending_exe - e.pending_calc) / e.pending_cost,
                                 kMaxSecondsPerCost);
    const double alpha = e.measured ? kSmoothing : 1.0;
    // Keep the sums behind PriorScale() current: take this worker out, then back in.
    if (e.measured && PerCost(e) > 0) {
      measured_speed_sum_ -= 1.0 / PerCost(e);
      measured_prior_sum_ -= PriorOf(report.worker);
    }
    e.calc_per_cost += alpha * (calc - e.calc_per_cost);
    // A rise in communication is believed at once: it means the worker's
    // inputs have begun to cross its link, and a receiver sized by the old
    // figure waits for data while others wait for it. A fall is smoothed.
    e.comm_per_cost += (comm > e.comm_per_cost ? 1.0 : alpha) * (comm - e.comm_per_cost);
    if (e.pending_lease_start) {
      e.overhead_s += alpha * (std::max(0.0, e.pending_exe - e.pending_calc) - e.overhead_s);
    }
    e.measured = true;
    if (PerCost(e) > 0) {
      measured_speed_sum_ += 1.0 / PerCost(e);
      measured_prior_sum_ += PriorOf(report.worker);
    }
    e.pending_calc = e.pending_exe = e.pending_cost = e.pending_items = 0;
    Recount(report.worker);
    RefreshBlended(report.worker, report.now);
  }

  // How far the worker ran ahead of where its speed predicted it, over a
  // silence long enough for a steal to rely on the prediction (at least
  // kLeadWindowFloors report floors; shorter ones measure step boundaries
  // more than speed): the relative excess, taken at once when it rises and
  // halved a report when it falls, at most kMaxLead. Steals leave the
  // victim that much more (StealAt).
  void ObserveLead(const Report& report, double elapsed) {
    Estimate& e = estimates_[report.worker];
    const WorkerState& worker = state(report.worker);
    if (report.idle || !IsMeasured(report.worker) ||
        !(elapsed >= kLeadWindowFloors * ReportFloor(report.now))) {
      return;
    }
    const double predicted = Speed(report.worker) * elapsed;
    const uint64_t reached = std::clamp<uint64_t>(report.position, worker.position, job().items);
    const double ahead =
        std::clamp(cost().Cost({worker.position, reached}) / predicted - 1, 0.0, kMaxLead);
    e.lead += (ahead > e.lead ? 1.0 : kSmoothing) * (ahead - e.lead);
  }

  Reply Assign(WorkerId worker, double now) override {
    Track(worker, now);
    const Range share = TakeReserved(worker);
    if (!share.empty()) return GrantTimed(worker, share, now);
    if (!pool().empty()) return FromPool(worker, now);
    if (options_.stealing) {
      if (auto stolen = Steal(worker, now)) return *stolen;
      if (options_.backup) {
        if (auto copy = Backup(worker, now)) return *copy;
      }
    }
    return Wait();
  }

  std::optional<Reply> AfterProgress(WorkerId worker, double now) override {
    const std::optional<double> predicted = finish_.FinishOf(worker);
    Track(worker, now);
    const std::optional<double> finish = finish_.FinishOf(worker);
    // Workers told to wait found nothing worth stealing when they asked; a
    // worker whose report puts its end later than predicted, by more than
    // kWakeFloors report floors and kWakeShare of the time it now has left,
    // with items left beyond the one it computes, has work for them again.
    const double moved = predicted && finish ? *finish - *predicted : 0;
    // (A lone item left can still be copied by a backup, where backups are on.)
    const bool copyable = options_.backup && job().repeatable && !Doubled(worker);
    const bool late = moved > kWakeFloors * ReportFloor(now) &&
                      moved > kWakeShare * (*finish - now) &&
                      (Unfinished(worker).size() >= 2 || copyable);
    if (options_.rebalance) Rebalance(worker, now);
    if (options_.prefetch && job().inputs_move) SetAsideNext(worker, now);
    SetCadence(worker, Cadence(worker, cost().Cost(state(worker).lease), now));
    if (options_.stealing && late && AnyTold()) WakeWaiting();
    return std::nullopt;
  }

  void AfterLost(WorkerId worker, double now) override { Track(worker, now); }

  // A start cost was learned (or moved): every figure kept in cost units is
  // restated in the new ones. A worker's seconds per cost unit scale by what
  // its measured work cost before over what it costs now (its items each
  // gained the difference in start cost); its planned share by the job's
  // cost. Then every sum and prediction is rebuilt, O(P log P).
  void AfterCostChanged(double old_start_cost, double now) override {
    const double delta = cost().start_cost() - old_start_cost;
    const double job_cost = cost().Cost({0, job().items});
    const double old_job_cost = job_cost - delta * static_cast<double>(job().items);
    for (Estimate& e : estimates_) {
      const double restated = e.evidence_cost + delta * e.evidence_items;
      if (e.evidence_cost > 0 && restated > 0) {
        const double scale = e.evidence_cost / restated;
        e.calc_per_cost *= scale;
        e.comm_per_cost *= scale;
        e.evidence_cost = restated;
      }
      e.pending_cost = std::max(0.0, e.pending_cost + delta * e.pending_items);
      if (old_job_cost > 0) e.unplanned_cost *= job_cost / old_job_cost;
    }
    if (old_job_cost > 0) {
      for (double& planned : planned_cost_) planned *= job_cost / old_job_cost;
    }
    measured_speed_sum_ = measured_prior_sum_ = 0;
    for (WorkerId id = 0; id < worker_count(); ++id) {
      if (IsMeasured(id)) {
        measured_speed_sum_ += 1.0 / PerCost(estimates_[id]);
        measured_prior_sum_ += PriorOf(id);
      }
    }
    for (WorkerId id = 0; id < worker_count(); ++id) Track(id, now);
    ResyncSpeedSums();
  }

  // A worker joined (a node became eligible mid-job): its per-worker state
  // grows by one, and it counts in the total speed at once, so that the
  // others' fair shares shrink (rebalancing gives their excess back to the
  // pool at their next reports) and it gets work when it asks: from the
  // pool, or by a steal sized to finish with the last worker. Its planned
  // share, which weighs a credible prior against its first measurements
  // (step 2), is what it would hold of the work left now by its prior.
  void AfterJoined(WorkerId worker, double now) override {
    estimates_.push_back(Estimate{});
    counted_.push_back(Counted{});
    busy_.push_back(false);
    backed_up_.push_back(false);
    copy_.push_back(false);
    partner_.push_back(std::nullopt);
    predicted_reserve_.push_back(0);
    (void)finish_.Add();
    const double before = TotalSpeed();
    const double load = TotalLoad(now);
    Recount(worker);
    const double speed = PriorOf(worker) * PriorScale();
    planned_cost_.push_back(before + speed > 0 ? load * speed / (before + speed) : load);
    credible_ = credible_ || Credibility(worker) > 0;
    Predict(worker, now);
  }

 private:
  // Speed in cost units per second, measured or scaled from the prior; an
  // unmeasured worker's prior no faster than its silence allows (Censored).
  double Speed(WorkerId id) const {
    return IsMeasured(id) ? MeasuredOrBlended(id)
                          : std::min(PriorOf(id) * PriorScale(), CensoredSpeed(id));
  }

  // What a worker that has computed for t seconds without finishing its
  // first item says of itself: its speed is below that item's cost over t.
  // A node far slower than its labels (an item of days on it) is then known
  // as slow before it finishes anything, and an idle worker may copy its
  // item (Backup). Infinity while it has not computed, or once measured.
  double CensoredSpeed(WorkerId id) const {
    const Estimate& e = estimates_[id];
    const Range left = Unfinished(id);
    if (e.measured || !(e.pending_calc > 0) || left.empty()) {
      return std::numeric_limits<double>::infinity();
    }
    return kCensoredMargin * cost().Cost({left.begin, left.begin + 1}) / e.pending_calc;
  }

  // The scale of the priors moved with this measurement, and with it the
  // speed of every other measured worker whose prior still counts: their
  // sums and predictions are brought up to date (O(P log P), only in a job
  // with credible priors).
  void RefreshBlended(WorkerId measured, double now) {
    if (!credible_) return;
    for (WorkerId id = 0; id < worker_count(); ++id) {
      if (id != measured && IsMeasured(id) && job().workers[id].credibility > 0) Track(id, now);
    }
  }

  // A measured worker's speed: its measurement, blended with its scaled
  // prior while the prior's credibility outweighs what was measured (step 2).
  double MeasuredOrBlended(WorkerId id) const {
    const double measured = MeasuredSpeed(id);
    const double trust = Credibility(id) * kPriorShareWorth * planned_cost_[id];
    if (!(trust > 0)) return measured;
    const double evidence = estimates_[id].evidence_cost;
    const double w = evidence / (evidence + trust);
    return std::exp(w * std::log(measured) + (1 - w) * std::log(PriorOf(id) * PriorScale()));
  }

  // Measured seconds per cost unit, at least kMinSecondsPerCost; 0 when
  // nothing was measured.
  static double PerCost(const Estimate& e) {
    const double seconds = e.calc_per_cost + e.comm_per_cost;
    return seconds > 0 ? std::max(seconds, kMinSecondsPerCost) : 0;
  }

  bool IsMeasured(WorkerId id) const {
    const Estimate& e = estimates_[id];
    return e.measured && PerCost(e) > 0;
  }

  double MeasuredSpeed(WorkerId id) const { return 1.0 / PerCost(estimates_[id]); }

  // Brings the running aggregates up to date with what the base class now
  // holds for `id` (its lease, position, liveness and estimate). Every change
  // of those goes through a hook that calls this, or Predict after a Cut or
  // Grant.
  void Track(WorkerId id, double now) {
    Recount(id);
    Predict(id, now);
  }

  // The worker's predicted finish in finish_: the end of its lease and of
  // what is set aside for it after the lease; for an idle worker, when it
  // last asked. A live worker that has not asked yet (it holds its reserved
  // share) and a lost one have none.
  void Predict(WorkerId id, double now) {
    const Range left = Unfinished(id);
    const bool busy = Alive(id) && !left.empty();
    busy_count_ += static_cast<int64_t>(busy) - static_cast<int64_t>(busy_[id]);
    busy_[id] = busy;
    predicted_reserve_sum_ -= predicted_reserve_[id];
    predicted_reserve_[id] = 0;
    if (!Alive(id) || (!busy && !state(id).reserved.empty())) {
      finish_.Clear(id);
      return;
    }
    const double speed = Speed(id);
    const double since = std::min(state(id).last_contact, now);
    if (busy) {
      predicted_reserve_[id] = state(id).reserved_cost;
      predicted_reserve_sum_ += predicted_reserve_[id];
    }
    finish_.Set(id, busy ? since + (cost().Cost(left) + predicted_reserve_[id]) / speed : since,
                speed);
  }

  // Keeps the worker's speed (measured) or prior (unmeasured) in the sums
  // behind TotalSpeed() while it is alive.
  void Recount(WorkerId id) {
    Counted& counted = counted_[id];
    if (counted.in) (counted.measured ? alive_speed_sum_ : alive_prior_sum_) -= counted.value;
    counted = Counted{};
    if (Alive(id)) {
      counted = Counted{true, IsMeasured(id), IsMeasured(id) ? MeasuredOrBlended(id) : PriorOf(id)};
      (counted.measured ? alive_speed_sum_ : alive_prior_sum_) += counted.value;
    }
    if (++recounts_ > 4 * worker_count() + 64) ResyncSpeedSums();
  }

  // Recomputes the sums of Recount from scratch (running sums drift by rounding).
  void ResyncSpeedSums() {
    alive_speed_sum_ = alive_prior_sum_ = 0;
    for (const Counted& counted : counted_) {
      if (counted.in) (counted.measured ? alive_speed_sum_ : alive_prior_sum_) += counted.value;
    }
    recounts_ = 0;
  }

  // Σ speed over the live workers, O(1).
  double TotalSpeed() const { return alive_speed_sum_ + PriorScale() * alive_prior_sum_; }

  // Cost left in the job: the pool, the reserved shares and what the live
  // workers have left of their leases (corrected for staleness), O(log P).
  // Work set aside for a busy worker is in its prediction, not counted twice.
  double TotalLoad(double now) {
    return pool_cost() + std::max(0.0, reserved_cost() - predicted_reserve_sum_) +
           finish_.RemainingCost(now);
  }

  double PriorOf(WorkerId id) const { return std::max(job().workers[id].speed, 1e-9); }

  // Measured speed per unit of prior speed over the measured workers (1 when
  // none); kept as running sums so that it costs O(1).
  double PriorScale() const {
    return measured_prior_sum_ > 0 ? measured_speed_sum_ / measured_prior_sum_ : 1.0;
  }

  bool Alive(WorkerId id) const { return !state(id).lost && !state(id).done; }

  // Remaining cost of the worker's lease now, corrected for staleness, and
  // of the work set aside for it after the lease.
  double Remaining(WorkerId id, double now) const {
    const Range left = Unfinished(id);
    if (left.empty()) return 0;
    const double since = std::max(0.0, now - state(id).last_contact);
    return std::max(0.0, cost().Cost(left) - Speed(id) * since) + state(id).reserved_cost;
  }

  Reply GrantTimed(WorkerId worker, Range range, double now) {
    backed_up_[worker] = copy_[worker] = false;
    const Reply reply = Grant(worker, range, now, Cadence(worker, cost().Cost(range), now));
    Predict(worker, now);
    return reply;
  }

  // Seconds between progress reports for `remaining` cost: a tenth of the
  // predicted time (ReportsPerLease), at most kEvidenceHorizon times the
  // computing the worker's speed was measured on and the ceiling, never more
  // often than the floor. Before the worker is measured its speed has no
  // scale, so it reports at the floor, then doubling.
  double Cadence(WorkerId worker, double remaining, double now) {
    const double floor = ReportFloor(now);
    // Unmeasured (no item finished yet): back off from the floor, doubling;
    // a worker whose prior is credible first reports later, by up to
    // kCredibleFirstReport floors: its first measurement then covers more
    // than the start-up steps, and the job is spared a report per worker.
    // One that has computed longer than kMaxReportSeconds without finishing
    // an item (an item of days on a slow node) backs off further, up to as
    // long as it has computed so far: an item of any length then costs a
    // number of reports logarithmic in its time, not linear (its reports
    // carry no measurement, and losing a worker does not wait on them).
    if (!estimates_[worker].measured) {
      const double first = floor * (1 + (kCredibleFirstReport - 1) * Credibility(worker));
      const double longest = std::max(kMaxReportSeconds, estimates_[worker].pending_calc);
      return std::max(first, std::min(longest, 2 * state(worker).report_every_s));
    }
    const double planned = remaining / Speed(worker) / ReportsPerLease(worker);
    // The ceiling also grows with the worker's own predicted rest: work that
    // alone outlasts the job's common rest (one item of days, which no other
    // worker can share) costs at most kMaxReportsPerJob reports too.
    const double ceiling =
        std::max(ReportCeiling(now), Remaining(worker, now) / Speed(worker) / kMaxReportsPerJob);
    const double longest = std::min(kEvidenceHorizon * estimates_[worker].evidence_s, ceiling);
    // The floor wins over the ceiling (a minReportSeconds above it), here
    // as before the worker is measured.
    return std::max(floor, std::min(planned, longest));
  }

  // The longest report cadence: kMaxReportSeconds, or a kMaxReportsPerJob-th
  // of the predicted rest of the job when that is longer. Over a job that
  // lasts T > kMaxReportsPerJob * kMaxReportSeconds a worker then reports
  // about kMaxReportsPerJob * (1 + ln(T / (kMaxReportsPerJob * kMaxReportSeconds)))
  // times, however long T is: a little over 8,000 times for 10^8 s.
  double ReportCeiling(double now) {
    const double rest = CommonRemainingTime(now);
    if (!std::isfinite(rest)) return kMaxReportSeconds;
    return std::max(kMaxReportSeconds, rest / kMaxReportsPerJob);
  }

  // Progress reports over a measured worker's lease: kReportsPerLease, fewer
  // as its prior is credible (history) while its measurement agrees with the
  // prior; a worker that strays from its prior reports at the full rate.
  double ReportsPerLease(WorkerId worker) const {
    const double z = Credibility(worker);
    if (!(z > 0)) return kReportsPerLease;
    // Agreement says something only when other workers' measurements set the
    // scale too: for the only worker measured so far, its measurement and its
    // scaled prior agree by construction.
    if (!(measured_prior_sum_ > PriorOf(worker) * (1 + 1e-9))) return kReportsPerLease;
    const double strayed = MeasuredSpeed(worker) / (PriorOf(worker) * PriorScale());
    if (!(std::fabs(std::log(strayed)) <= std::log(kPriorAgreement))) return kReportsPerLease;
    return TowardTrusted(kReportsPerLease, kTrustedReportsPerLease, z);
  }

  // The shortest report cadence: all workers together stay within the
  // coordinator's report budget, unless the predicted rest of the job is too
  // short to give each worker kReportsPerJob reports within it. Before any
  // worker is measured the job's length is unknown, and the first reports
  // come at the fastest cadence (one report per worker).
  double ReportFloor(double now) {
    if (measured_prior_sum_ <= 0) return options_.min_report_seconds;
    const double budget = static_cast<double>(worker_count()) / kReportBudget;
    return std::max(options_.min_report_seconds,
                    std::min(budget, CommonRemainingTime(now) / kReportsPerJob));
  }

  // Predicted time from now until all work is done if everyone finishes together.
  double CommonRemainingTime(double now) {
    const double speed = TotalSpeed();
    return speed > 0 ? TotalLoad(now) / speed : kNever;
  }

  Reply FromPool(WorkerId worker, double now) {
    const double remaining = CommonRemainingTime(now);
    const Range first = pool().First();
    const double one_item = cost().Cost({first.begin, first.begin + 1});
    double amount = Speed(worker) * remaining;
    // A worker that cannot finish even one item by the common end is kept out
    // of it (seed 002 drops nodes that cannot keep up), unless it is alone.
    if (amount < 0.5 * one_item && busy_count_ > 0) return Wait();
    // Hysteresis: a pool the worker can finish within a report floor goes to
    // it whole. In the tail the common end is near, and the pool's last items
    // would otherwise go out in slivers of a few items, each a round trip
    // that saves less than it costs. (A floor's worth for every asker would
    // overshoot the common end when many workers share a large pool.)
    if (pool_cost() <= Speed(worker) * ReportFloor(now)) amount = std::max(amount, pool_cost());
    amount = std::max(std::min(amount, SlowStartCap(worker, now)), one_item);
    return GrantUnplanned(worker, TakeCostFromPool(amount), now);
  }

  // Items from outside a worker's planned share may cost it more than its
  // own did (their inputs may have to cross its link, which no measurement
  // so far shows): its first such lease is a probe of kProbeReports report
  // intervals, and each next one at most twice the last (slow start). A job
  // whose items carry no inputs across links (JobInfo::inputs_cross_links)
  // has nothing to probe: its leases are sized as predicted at once.
  double SlowStartCap(WorkerId worker, double now) {
    if (!options_.slow_start || !job().inputs_cross_links) return kNever;
    return std::max(kProbeReports * ReportFloor(now) * Speed(worker),
                    2 * estimates_[worker].unplanned_cost);
  }

  Reply GrantUnplanned(WorkerId worker, Range range, double now) {
    estimates_[worker].unplanned_cost = cost().Cost(range);
    return GrantTimed(worker, range, now);
  }

  std::optional<Reply> Steal(WorkerId thief, double now) {
    // The victim: the worker predicted to finish last (the thief holds no
    // lease, so it is not among them).
    const auto last = finish_.Latest(now);
    if (!last || last->first == thief || !busy_[last->first]) return std::nullopt;
    const auto [victim, latest] = *last;
    // A backed-up lease and its copy are computed twice already; cutting
    // either would only bring in a third worker.
    if (Doubled(victim)) return std::nullopt;
    const WorkerState& v = state(victim);
    // The victim learns its new end with the reply to its next report. When
    // that comes too late for any steal (a slow victim with a long cadence,
    // in the tail), it is signalled to report at its next item boundary,
    // about a report floor from now, and the steal is sized for that.
    if (v.reserved_cost > 0) return StealReserved(thief, victim, latest, now);
    const double next_report = std::max(now, v.last_contact + v.report_every_s);
    if (auto stolen = StealAt(thief, victim, latest, next_report, now)) return stolen;
    const double signalled = now + ReportFloor(now);
    if (signalled >= next_report) return std::nullopt;
    auto stolen = StealAt(thief, victim, latest, signalled, now);
    if (stolen) Signal(victim);
    return stolen;
  }

  // The backup of step 5: the thief computes a copy of the whole unfinished
  // rest of the last worker's lease, from its last reported position, when it
  // can finish it before that worker is predicted to. The victim is not cut
  // and not told: if its prediction holds, it finishes first and the copy
  // is dropped; if it is paused (a CPU quota's throttled period, a step
  // held up), the copy ends the job. Only the thief's idle time is spent.
  std::optional<Reply> Backup(WorkerId thief, double now) {
    const auto last = finish_.Latest(now);
    if (!last || last->first == thief || !busy_[last->first]) return std::nullopt;
    const auto [victim, latest] = *last;
    if (!job().repeatable || Doubled(victim) || state(victim).reserved_cost > 0) {
      return std::nullopt;
    }
    const Range copy = FirstOpenPart(Unfinished(victim));
    if (copy.empty() || !WorthStealing(thief, copy, latest, now)) return std::nullopt;
    mutable_stats().backups++;
    const Reply reply = GrantStolen(thief, copy, now);
    backed_up_[victim] = true;
    copy_[thief] = true;
    partner_[victim] = thief;
    partner_[thief] = victim;
    return reply;
  }

  // The worker's lease has a backup copy, or is one: its items are held by
  // two workers, and none of them may be cut for a third or go to the pool.
  bool Doubled(WorkerId id) const { return backed_up_[id] || copy_[id]; }

  // A backup's victim and thief hold the copied items both: when one lets
  // its lease go (lost, stopped, idle), what the other still holds of them
  // stays with the other instead of going back to the pool, where a third
  // worker would be leased items that are held already.
  Range SharedLease(WorkerId id) const override {
    const auto other = partner_[id];
    if (!other || !Alive(*other)) return {};
    const Range mine = state(id).lease;
    const Range theirs = state(*other).lease;
    return {std::max(mine.begin, theirs.begin), std::min(mine.end, theirs.end)};
  }

  // Takes work the victim has set aside after its lease, sized so both
  // finish together; the victim needs not learn of it before it asks.
  std::optional<Reply> StealReserved(WorkerId thief, WorkerId victim, double latest, double now) {
    const double amount = std::min((latest - now) / (1.0 / Speed(thief) + 1.0 / Speed(victim)),
                                   SlowStartCap(thief, now));
    if (!(amount > 0)) return std::nullopt;
    const Range last = LastOpenPart(state(victim).reserved.Last());
    if (last.empty()) return std::nullopt;
    const Range stolen = FarEnd(last, amount);
    if (!WorthStealing(thief, stolen, latest, now)) return std::nullopt;
    Unreserve(victim, stolen);
    Predict(victim, now);
    return GrantStolen(thief, stolen, now);
  }

  // Hysteresis: a steal must move the victim's finish (`latest`) earlier by
  // more than the thief's overhead of starting a lease.
  bool WorthStealing(WorkerId thief, Range stolen, double latest, double now) const {
    const double thief_finish =
        now + estimates_[thief].overhead_s + cost().Cost(stolen) / Speed(thief);
    return thief_finish + estimates_[thief].overhead_s < latest;
  }

  Reply GrantStolen(WorkerId thief, Range stolen, double now) {
    mutable_stats().steals++;
    mutable_stats().moved_items += stolen.size();
    return GrantUnplanned(thief, stolen, now);
  }

  // The far end of `range` worth at most `amount`, and at least one item.
  Range FarEnd(Range range, double amount) const {
    return {std::min(cost().Retreat(range.end, range.begin, amount), range.end - 1), range.end};
  }

  // Cuts the far end of the victim's lease for the thief, sized so both
  // finish together when the victim learns its new end at `learns`; nullopt
  // when nothing worth moving is left by then.
  std::optional<Reply> StealAt(WorkerId thief, WorkerId victim, double latest, double learns,
                               double now) {
    const WorkerState& v = state(victim);
    const double v_speed = Speed(victim);
    const double t_speed = Speed(thief);
    const Range left = Unfinished(victim);
    // Where the victim may be when it learns of the cut: as far as its speed
    // says, and further by as much as it has run ahead of its predictions,
    // the lead weighed by what a wrong cut costs. A cut the victim has not
    // reached leaves it items at its speed; one it has passed has the thief
    // compute again what the victim did, at the thief's. So the lead counts
    // fully for a victim at least as fast as the thief, and in proportion
    // 2 v / (v + t) for a slower one: a slow victim beside a fast thief is
    // better cut short than left items it may not reach.
    const double lead = estimates_[victim].lead * std::min(1.0, 2 * v_speed / (v_speed + t_speed));
    const double travel = v_speed * (1 + lead) * (learns - v.last_contact);
    uint64_t safe = cost().Advance(left.begin, left.end, travel);
    safe = std::min(left.end, safe + 1);  // the item it may have begun
    if (safe >= left.end) return std::nullopt;
    const double rest = cost().Cost({safe, left.end});
    double amount = (rest / v_speed + (learns - now)) / (1.0 / t_speed + 1.0 / v_speed);
    // Slow start caps the steal, but never below the last item: a probe
    // shorter than one item (a thief that joined mid-job, whose report
    // floor is short beside an item) would steal nothing, ever.
    const double last_item = cost().Cost({left.end - 1, left.end});
    amount = std::min({amount, rest, std::max(SlowStartCap(thief, now), last_item)});
    const uint64_t cut = cost().Retreat(left.end, safe, amount);
    if (cut >= left.end) return std::nullopt;
    // The victim may already have finished the start of it (it overshot an
    // earlier cut before learning of it): the thief starts after those.
    const Range stolen = SkipFinished({cut, left.end});
    if (stolen.empty()) return std::nullopt;
    if (!WorthStealing(thief, stolen, latest, now)) return std::nullopt;
    Cut(victim, cut);
    Predict(victim, now);
    return GrantStolen(thief, stolen, now);
  }

  void Rebalance(WorkerId worker, double now) {
    // Items of a backed-up lease are held twice: none go back to the pool.
    if (!estimates_[worker].measured || Doubled(worker)) return;
    const double total_load = TotalLoad(now);
    const double total_speed = TotalSpeed();
    const double speed = Speed(worker);
    const double load = Remaining(worker, now);
    const double excess = load - speed / total_speed * total_load;  // L_ex, eq. 3-3
    // Hysteresis: move only an excess worth more than a lease's overhead on
    // both sides and more than a share of the worker's remaining time (tail
    // stealing settles what is left; RebalanceShare).
    const double threshold =
        std::max(2 * estimates_[worker].overhead_s, RebalanceShare(worker) * load / speed) * speed;
    if (excess <= threshold) return;
    const double k = options_.compensation ? Compensation(excess, now) : 1.0;
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
    while (amount > 0 && state(worker).reserved_cost > 0) {
      const Range taken = TakeBackReserved(worker, amount);
      amount -= cost().Cost(taken);
      give_back(taken);
    }
    if (amount > 0) {
      const Range left = Unfinished(worker);
      uint64_t safe = cost().Advance(left.begin, left.end, speed * state(worker).report_every_s);
      safe = std::min(left.end, safe + 1);
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
    const Range taken = FarEnd(state(worker).reserved.Last(), amount);
    Unreserve(worker, taken);
    return taken;
  }

  // Sets aside for a computing worker the work from the pool it will want
  // after its lease: what it can do by the predicted common end beyond what
  // it holds, at most a slow-start step, and only when it is worth more than
  // a lease's overhead.
  void SetAsideNext(WorkerId worker, double now) {
    if (pool().empty() || !estimates_[worker].measured) return;
    const double speed = Speed(worker);
    const double want = speed * CommonRemainingTime(now) - Remaining(worker, now);
    const Range first = pool().First();
    const double one_item = cost().Cost({first.begin, first.begin + 1});
    if (!(want >= std::max(one_item, speed * estimates_[worker].overhead_s))) return;
    const Range range = TakeCostFromPool(std::min(want, SlowStartCap(worker, now)));
    estimates_[worker].unplanned_cost = cost().Cost(range);
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
    return TowardTrusted(kRebalanceShare, kTrustedRebalanceShare, Credibility(worker));
  }

  // The credibility Z of the worker's prior, in [0, 1] (0: a fuzzy weight).
  double Credibility(WorkerId worker) const {
    return std::clamp(job().workers[worker].credibility, 0.0, 1.0);
  }

  // A setting that is `untrusted` for a prior of credibility 0 and `trusted`
  // at 1, harmonically between: untrusted / (1 + (untrusted / trusted - 1) z).
  static double TowardTrusted(double untrusted, double trusted, double z) {
    return untrusted / (1 + (untrusted / trusted - 1) * z);
  }

  // k for the receiver that will run out of work first among the underloaded.
  double Compensation(double excess, double now) {
    const double horizon = CommonRemainingTime(now);
    const auto first = finish_.Earliest();
    if (!first || !std::isfinite(horizon)) return 1.0;
    const WorkerId receiver = first->first;
    const double soonest = std::max(0.0, first->second - now);
    if (soonest >= horizon) return 1.0;
    // Σ L_ex over the underloaded: what they could take on before the horizon.
    const double under_total = finish_.SpareCost(now, now + horizon);
    if (under_total <= 0) return 1.0;
    const Estimate& e = estimates_[receiver];
    if (!e.measured || e.comm_per_cost < kMinSecondsPerCost) return 1.0;
    const double share = (horizon - soonest) * Speed(receiver) / under_total;  // p_l, eq. 3-13
    const double transfer_rate = 1.0 / e.comm_per_cost;
    const double transfer_time = share * excess / transfer_rate;
    return CompensatingFactor(1.0 / std::max(e.calc_per_cost, 1e-12), transfer_rate, soonest,
                              transfer_time);
  }

  Options options_;
  std::vector<Estimate> estimates_;
  double measured_speed_sum_ = 0;     // Σ speed over measured workers
  double measured_prior_sum_ = 0;     // Σ prior over the same workers
  std::vector<double> planned_cost_;  // each worker's share of the job's cost by its prior
  bool credible_ = false;             // some prior has credibility > 0

  // Running aggregates, so that a decision costs O(log P), not O(P).
  struct Counted {
    bool in = false;  // alive, and counted in one of the sums below
    bool measured = false;
    double value = 0;  // the measured speed, or the prior when unmeasured
  };
  FinishTimes finish_;           // predicted finish of every live worker's lease
  std::vector<bool> busy_;       // alive and holding unfinished items
  std::vector<bool> backed_up_;  // its lease has a backup copy (Backup)
  std::vector<bool> copy_;       // its lease is such a copy
  // The other worker of its latest backup (victim or thief), if any.
  std::vector<std::optional<WorkerId>> partner_;
  std::vector<double> predicted_reserve_;  // set-aside cost in each prediction
  double predicted_reserve_sum_ = 0;       // Σ predicted_reserve_
  int64_t busy_count_ = 0;                 // how many are
  std::vector<Counted> counted_;           // what Recount last added for each worker
  double alive_speed_sum_ = 0;             // Σ measured speed over live measured workers
  double alive_prior_sum_ = 0;             // Σ prior over live unmeasured workers
  uint64_t recounts_ = 0;                  // since the last ResyncSpeedSums
};

}  // namespace

std::unique_ptr<Policy> MakePolicyOf(const AdaptiveOptions& options) {
  return std::make_unique<AdaptivePolicy>(options);
}

}  // namespace ballast::balance
